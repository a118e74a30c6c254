/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: the device side's pieces that the KUnit suites test directly.
 */
#ifndef _HTW_API_H
#define _HTW_API_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/htwheel.h>

/* Every ioctl a file accepts once the handshake is done, as _IOC_NR bits. */
#define HTW_IOCTLS_AFTER_API	(BIT_ULL(_IOC_NR(HTW_IOC_API)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_SETUP)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_SCHEDULE)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_CANCEL)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_DRAIN)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_STATS)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_SET_EVENTFD)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_REARM)) |	\
				 BIT_ULL(_IOC_NR(HTW_IOC_TABLE_SETUP)) | \
				 BIT_ULL(_IOC_NR(HTW_IOC_TABLE_ENTER)) | \
				 BIT_ULL(_IOC_NR(HTW_IOC_TABLE_STATS)))

int htw_api_negotiate(struct htw_api *api);

int htw_dev_register(void);
void htw_dev_unregister(void);

#endif /* _HTW_API_H */
