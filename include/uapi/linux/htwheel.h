/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * htwheel: a hashed timing wheel behind a character device.
 *
 * Each open() of /dev/htwheel is an independent timer instance.  The first
 * ioctl on a new file must be HTW_IOC_API; every other ioctl, and read(),
 * fails with EBADFD until it succeeded.
 *
 * All structures have a fixed layout: fixed-width fields, explicit padding
 * and reserved fields that must be zero on input and are zero on output.
 *
 * See Documentation/userspace-api/htwheel.rst.
 */
#ifndef _UAPI_LINUX_HTWHEEL_H
#define _UAPI_LINUX_HTWHEEL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* The API version this header describes. */
#define HTW_API_VERSION		1

/* Feature bits reported by (and requestable through) HTW_IOC_API. */
#define HTW_FEATURES_ALL	0ULL

/**
 * struct htw_api - the API handshake (HTW_IOC_API)
 * @api:      in: HTW_API_VERSION
 * @flags:    in: must be 0
 * @features: in: features the caller requires (must be supported);
 *            out: every feature this kernel supports
 * @ioctls:   out: bit (1 << _IOC_NR(cmd)) set for every ioctl accepted
 *            on this file from now on
 * @reserved: in: must be 0; out: 0
 */
struct htw_api {
	__u32 api;
	__u32 flags;
	__u64 features;
	__u64 ioctls;
	__u64 reserved[5];
};

#define HTW_IOC_MAGIC		0xB9

#define HTW_IOC_API		_IOWR(HTW_IOC_MAGIC, 0x00, struct htw_api)

#endif /* _UAPI_LINUX_HTWHEEL_H */
