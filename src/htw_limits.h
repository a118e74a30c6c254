/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: what one user may hold, counted per (user namespace, uid) and
 * charged up the chain of namespaces like the kernel's ucounts (the ones
 * inotify and epoll use): a charge at (ns, uid) also charges the
 * namespace as a whole, then (ns->parent, ns->owner), and so on up to
 * init_user_ns, and fails if any level would exceed its limit.  So a user
 * cannot get past a limit by creating user namespaces, nor by using the
 * uids of a subuid range; and a namespace takes from its creator's limits
 * no more than its budget.
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
/* Let go of every namespace's budget; from module exit. */
void htw_limits_exit(void);

/* A user namespace's budget (max, 0 in a set for the default) and usage. */
struct htw_ns_budget {
	unsigned long max[HTW_LIMIT_COUNT];
	unsigned long used[HTW_LIMIT_COUNT];
	u32 own;		/* bit i: max[i] is the namespace's own */
};

/*
 * Read or set the budget of @ns, not init_user_ns (-EINVAL), whose
 * limits are the module parameters: 0, -EINVAL or -ENOMEM.  The caller
 * checks the permission to set.  Process context.
 */
int htw_ns_limits_get(struct user_namespace *ns, struct htw_ns_budget *b);
int htw_ns_limits_set(struct user_namespace *ns, const unsigned long *max);

/*
 * The entry of (@ns, @uid), created with its chain if needed, with a
 * reference held; NULL when out of memory.  Process context.
 */
struct htw_quota *htw_quota_get(struct user_namespace *ns, kuid_t uid);
/* Another reference on @q, which the caller holds one of. */
void htw_quota_hold(struct htw_quota *q);
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
bool htw_ns_gone(struct user_namespace *ns);
#endif

#endif /* _HTW_LIMITS_H */
