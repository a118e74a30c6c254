/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: what one user may hold, counted per (user namespace, uid) and
 * charged up the chain of namespaces like the kernel's ucounts (the ones
 * inotify and epoll use): a charge at (ns, uid) also charges
 * (ns->parent, ns->owner), and so on up to init_user_ns, and fails if any
 * level would exceed the limit.  So a user cannot get past a limit by
 * creating user namespaces, nor by using the uids of a subuid range.
 */
#ifndef _HTW_LIMITS_H
#define _HTW_LIMITS_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct user_namespace;
struct htw_geometry;

/* The accounting of one user in one user namespace; opaque. */
struct htw_quota;

enum htw_limit {
	HTW_LIMIT_INSTANCES,	/* open files: max_user_instances */
	HTW_LIMIT_TIMERS,	/* live timers: max_user_timers */
	HTW_LIMIT_WHEEL_BYTES,	/* wheel structures: max_user_wheel_bytes */
	HTW_LIMIT_COUNT
};

/* Compute the defaults that scale with memory; from module init. */
void htw_limits_init(void);

/*
 * The entry of (@ns, @uid), created with its chain if needed, with a
 * reference held; NULL when out of memory.  Process context.
 */
struct htw_quota *htw_quota_get(struct user_namespace *ns, kuid_t uid);
void htw_quota_put(struct htw_quota *q);

/*
 * Charge @n of @res at every level of the chain against the module
 * parameter's current value: 0, or -EDQUOT with nothing charged.
 */
int htw_quota_charge_n(struct htw_quota *q, enum htw_limit res,
		       unsigned long n);
void htw_quota_uncharge_n(struct htw_quota *q, enum htw_limit res,
			  unsigned long n);

/*
 * One live timer, for the wheel (htw_wheel.c).  @q may be NULL (a
 * wheel without a quota: no call at all).  Cheap: one atomic per level,
 * no lock.
 */
static inline int htw_quota_charge(struct htw_quota *q)
{
	return q ? htw_quota_charge_n(q, HTW_LIMIT_TIMERS, 1) : 0;
}

static inline void htw_quota_uncharge(struct htw_quota *q)
{
	if (q)
		htw_quota_uncharge_n(q, HTW_LIMIT_TIMERS, 1);
}

/*
 * A charge against an explicit @max at every level: what
 * htw_quota_charge_n() does with the module parameter's value, and what
 * the KUnit suite calls with its own.
 */
int htw_limits_charge(struct htw_quota *q, enum htw_limit res,
		      unsigned long n, unsigned long max);

#ifdef HTW_TEST_BUILD
unsigned long htw_limits_used(const struct htw_quota *q, enum htw_limit res);
/* How many quota entries exist, every user namespace's. */
unsigned long htw_limits_entries(void);
#endif

#endif /* _HTW_LIMITS_H */
