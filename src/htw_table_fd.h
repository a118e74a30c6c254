/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel table object: a version 2 timer table as a file of its own
 * (htw_table_fd.c).
 */
#ifndef _HTW_TABLE_FD_H
#define _HTW_TABLE_FD_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/htwheel.h>

struct htw_geometry;
struct htw_quota;
struct htw_timens;

/*
 * Make a table of @ts->entries slots with geometry @geo (its max_pending
 * the slots), charged to @quota, its deadlines in the time namespace
 * @timens; write the layout and the new descriptor to @argp, then install
 * the descriptor.  Returns it, or -EDQUOT, -ENOMEM, -EMFILE, -EFAULT
 * (nothing made then).  Process context.
 */
int htw_table_obj_create(const struct htw_geometry *geo, struct htw_quota *quota,
			 const struct htw_timens *timens,
			 struct htw_table2_setup *ts, void __user *argp);

#endif /* _HTW_TABLE_FD_H */
