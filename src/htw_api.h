/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: the device side's pieces that the KUnit suites test directly.
 */
#ifndef _HTW_API_H
#define _HTW_API_H

#include <linux/types.h>
#include <linux/htwheel.h>

/* Every ioctl a file accepts once the handshake is done, as _IOC_NR bits. */
#define HTW_IOCTLS_AFTER_API	(1ULL << _IOC_NR(HTW_IOC_API))

int htw_api_negotiate(struct htw_api *api);

int htw_dev_register(void);
void htw_dev_unregister(void);

#endif /* _HTW_API_H */
