/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libhtwheel: the user-space library for /dev/htwheel.
 *
 * One opaque handle per timer instance (one open file of the device).
 * Every function returns 0, a count, or a negative errno; none prints,
 * exits, or allocates memory except htw_open().  Durations and times are
 * nanoseconds on the instance's clock.
 *
 * Timers, expiry records and statistics use the kernel ABI structures of
 * <linux/htwheel.h> as they are, so batches go to the kernel without a
 * copy.  The kernel validates them: flags, pad and reserved fields pass
 * through unchecked, so that a program built against this header works
 * with a kernel that defines more.  See htwheel(4) and the man pages of
 * each function.
 */
#ifndef _HTWHEEL_H
#define _HTWHEEL_H

#include <stdint.h>
#include <linux/htwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBHTWHEEL_VERSION_MAJOR	1
#define LIBHTWHEEL_VERSION_MINOR	1

/* The device htw_open() uses when htw_params.device is NULL. */
#define HTW_DEVICE_PATH		"/dev/htwheel"

#define HTW_NSEC_PER_USEC	1000ULL
#define HTW_NSEC_PER_MSEC	1000000ULL
#define HTW_NSEC_PER_SEC	1000000000ULL

/* Duration helpers: saturate at UINT64_MAX instead of wrapping. */
static inline uint64_t htw_us(uint64_t us)
{
	return us > UINT64_MAX / HTW_NSEC_PER_USEC ? UINT64_MAX :
						    us * HTW_NSEC_PER_USEC;
}

static inline uint64_t htw_ms(uint64_t ms)
{
	return ms > UINT64_MAX / HTW_NSEC_PER_MSEC ? UINT64_MAX :
						    ms * HTW_NSEC_PER_MSEC;
}

static inline uint64_t htw_sec(uint64_t s)
{
	return s > UINT64_MAX / HTW_NSEC_PER_SEC ? UINT64_MAX :
						   s * HTW_NSEC_PER_SEC;
}

/**
 * struct htw_params - optional setup for htw_open()
 * @device:      device node, NULL for HTW_DEVICE_PATH
 * @tick_ns:     in: tick, 0 for the module default; out: in effect
 * @slots:       in: buckets per level, 0 for the default; out: in effect
 * @clockid:     in: CLOCK_MONOTONIC (or 0 for it) or CLOCK_BOOTTIME;
 *               out: in effect
 * @max_pending: in: pending timer limit, 0 for the default; out: in effect
 * @levels:      out: wheel levels
 * @flags:       in: 0; passed to HTW_IOC_SETUP, which refuses unknown flags
 * @reserved:    in: 0; passed to HTW_IOC_SETUP, which refuses non-zero
 */
struct htw_params {
	const char *device;
	uint64_t tick_ns;
	uint32_t slots;
	uint32_t clockid;
	uint64_t max_pending;
	uint32_t levels;
	uint32_t flags;
	uint64_t reserved[4];
};

struct htw;

int htw_open(struct htw **hp, struct htw_params *params);
int htw_close(struct htw *h);
int htw_fd(const struct htw *h);
uint64_t htw_now(const struct htw *h);

int htw_schedule(struct htw *h, uint64_t cookie, uint64_t delay_ns,
		 uint64_t period_ns, uint64_t *handle);
int htw_schedule_many(struct htw *h, struct htw_timer_entry *entries,
		      unsigned int count);
int htw_cancel(struct htw *h, uint64_t handle);
int htw_cancel_many(struct htw *h, struct htw_cancel_entry *entries,
		    unsigned int count);
/* Since libhtwheel 1.1 (LIBHTWHEEL_1.1). */
int htw_rearm(struct htw *h, uint64_t handle, uint64_t delay_ns);
int htw_rearm_many(struct htw *h, struct htw_rearm_entry *entries,
		   unsigned int count);

int htw_read(struct htw *h, struct htw_expiry *recs, unsigned int max);
int htw_wait(struct htw *h, int64_t timeout_ns);
int htw_drain(struct htw *h, struct htw_unexpired *out, unsigned int max);
int htw_stats(struct htw *h, struct htw_stats *st);
int htw_set_eventfd(struct htw *h, int efd);

int htw_parse_duration(const char *s, uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* _HTWHEEL_H */
