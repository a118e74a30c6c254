/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: the device side's pieces that the KUnit suites test directly.
 */
#ifndef _HTW_API_H
#define _HTW_API_H

#include <linux/bits.h>
#include <linux/compiler.h>
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
				 BIT_ULL(_IOC_NR(HTW_IOC_NS_LIMITS_GET)) | \
				 BIT_ULL(_IOC_NR(HTW_IOC_NS_LIMITS_SET)) | \
				 BIT_ULL(_IOC_NR(HTW_IOC_TABLE2_CREATE)))

/* Whether reserved (or otherwise unused) input fields are all zero. */
static inline bool htw_all_zero(const __u64 *v, size_t n)
{
	while (n--)
		if (v[n])
			return false;
	return true;
}

int htw_api_negotiate(struct htw_api *api);

/* The user namespace budgets' ioctls (htw_userns.c); any file may call. */
long htw_ioc_ns_limits_get(void __user *argp);
long htw_ioc_ns_limits_set(void __user *argp);

int htw_dev_register(void);
void htw_dev_unregister(void);

#endif /* _HTW_API_H */
