// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: per-(user namespace, uid) limits, charged up the namespace
 * chain.  The kernel's own ucounts do this for inotify and epoll, but
 * inc_ucount() and dec_ucount() are not exported, so this is the same
 * shape in a table of the module's own.
 *
 * An entry exists while a file or a child entry refers to it: each entry
 * holds a reference on the entry of its namespace's creator,
 * (ns->parent, ns->owner), which is what a charge walks.  The table and
 * the reference counts change only under htw_quotas_lock, in open() and
 * release(); charges take no lock at all, one atomic per level.
 */
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "htw_compat.h"
#include "htw_limits.h"

/*
 * What one live timer is budgeted: its 56-byte slot in its wheel's table,
 * with a margin for the wheel's own structures.
 */
#define HTW_TIMER_COST		64
#define HTW_TIMERS_CAP		BIT(22)

static unsigned long max_user_instances = 128;
module_param(max_user_instances, ulong, 0644);
MODULE_PARM_DESC(max_user_instances,
		 "Most open files of /dev/htwheel per user, counted up the user namespace chain (default 128)");

/* 0 when loading: the default scaled to memory, see htw_limits_init(). */
static unsigned long max_user_timers;
module_param(max_user_timers, ulong, 0644);
MODULE_PARM_DESC(max_user_timers,
		 "Most live timers per user over all files (default: 1/8 of RAM at 64 bytes a timer, at most 4194304)");

static unsigned long max_user_wheel_bytes;
module_param(max_user_wheel_bytes, ulong, 0644);
MODULE_PARM_DESC(max_user_wheel_bytes,
		 "Most bytes of wheel structures (buckets, bitmap, timer-table directory) per user (default: 1/16 of RAM)");

struct htw_quota {
	struct hlist_node node;		/* in htw_quotas */
	struct user_namespace *ns;	/* a reference is held */
	kuid_t uid;
	unsigned int refs;		/* files and child entries */
	struct htw_quota *parent;	/* (ns->parent, ns->owner); NULL at the top */
	atomic_long_t used[HTW_LIMIT_COUNT];
};

static DEFINE_HASHTABLE(htw_quotas, 7);
static DEFINE_MUTEX(htw_quotas_lock);	/* the table, ->refs, htw_quota_count */
static unsigned long htw_quota_count;

static u64 htw_ram_bytes(void)
{
	return (u64)totalram_pages() << PAGE_SHIFT;
}

void htw_limits_init(void)
{
	/* An administrator's value from insmod or modprobe stays. */
	if (!max_user_timers)
		max_user_timers = min_t(u64, htw_ram_bytes() / 8 / HTW_TIMER_COST,
					HTW_TIMERS_CAP);
	if (!max_user_wheel_bytes)
		max_user_wheel_bytes = min_t(u64, htw_ram_bytes() / 16, LONG_MAX);
}

static const unsigned long *const htw_limit_max[HTW_LIMIT_COUNT] = {
	[HTW_LIMIT_INSTANCES] = &max_user_instances,
	[HTW_LIMIT_TIMERS] = &max_user_timers,
	[HTW_LIMIT_WHEEL_BYTES] = &max_user_wheel_bytes,
};

static unsigned long htw_key(const struct user_namespace *ns, kuid_t uid)
{
	return (unsigned long)ns + __kuid_val(uid);
}

static struct htw_quota *htw_quota_find(struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *q;

	lockdep_assert_held(&htw_quotas_lock);
	hash_for_each_possible(htw_quotas, q, node, htw_key(ns, uid))
		if (q->ns == ns && uid_eq(q->uid, uid))
			return q;
	return NULL;
}

/* A new entry without its parent yet, in the table, one reference. */
static struct htw_quota *htw_quota_new(struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *q;

	lockdep_assert_held(&htw_quotas_lock);
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return NULL;
	/* Not q->ns = get_user_ns(ns): without CONFIG_USER_NS that is init's. */
	get_user_ns(ns);
	q->ns = ns;
	q->uid = uid;
	q->refs = 1;
	hash_add(htw_quotas, &q->node, htw_key(ns, uid));
	htw_quota_count++;
	return q;
}

/* Drop a reference; entries nobody refers to any more leave, upwards. */
static void htw_quota_put_locked(struct htw_quota *q)
{
	struct htw_quota *parent;
	int i;

	lockdep_assert_held(&htw_quotas_lock);
	for (; q && !--q->refs; q = parent) {
		parent = q->parent;
		for (i = 0; i < HTW_LIMIT_COUNT; i++)
			WARN_ON_ONCE(atomic_long_read(&q->used[i]));
		hash_del(&q->node);
		htw_quota_count--;
		put_user_ns(q->ns);
		kfree(q);
	}
}

/*
 * Find or create (@ns, @uid) and every level above it that does not exist
 * yet.  The walk ends at the first entry that exists (its own chain is
 * complete) or at the namespace without a parent, init_user_ns.  The depth
 * is bounded by the kernel's limit on nested user namespaces (32).
 */
struct htw_quota *htw_quota_get(struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *first = NULL, **link = &first, *q;

	mutex_lock(&htw_quotas_lock);
	for (;;) {
		q = htw_quota_find(ns, uid);
		if (q) {
			q->refs++;
			*link = q;
			break;
		}
		q = htw_quota_new(ns, uid);
		if (!q) {
			/* The chain built so far ends in a NULL parent: all goes. */
			htw_quota_put_locked(first);
			first = NULL;
			break;
		}
		*link = q;
		link = &q->parent;
		if (!ns->parent)
			break;
		uid = ns->owner;
		ns = ns->parent;
	}
	mutex_unlock(&htw_quotas_lock);
	return first;
}
EXPORT_SYMBOL_IF_KUNIT(htw_quota_get);

void htw_quota_put(struct htw_quota *q)
{
	mutex_lock(&htw_quotas_lock);
	htw_quota_put_locked(q);
	mutex_unlock(&htw_quotas_lock);
}
EXPORT_SYMBOL_IF_KUNIT(htw_quota_put);

/* Add @n to @v unless the sum would exceed @max. */
static bool htw_add_below(atomic_long_t *v, unsigned long n, unsigned long max)
{
	long c = atomic_long_read(v);

	do {
		if ((unsigned long)c > max || n > max - c)
			return false;
	} while (!atomic_long_try_cmpxchg(v, &c, c + n));
	return true;
}

int htw_limits_charge(struct htw_quota *q, enum htw_limit res,
		      unsigned long n, unsigned long max)
{
	struct htw_quota *level, *full;

	/* Counters are longs: a larger limit is no limit. */
	max = min_t(unsigned long, max, LONG_MAX);
	for (level = q; level; level = level->parent)
		if (!htw_add_below(&level->used[res], n, max))
			goto undo;
	return 0;
undo:
	full = level;
	for (level = q; level != full; level = level->parent)
		atomic_long_sub(n, &level->used[res]);
	return -EDQUOT;
}
EXPORT_SYMBOL_IF_KUNIT(htw_limits_charge);

int htw_quota_charge_n(struct htw_quota *q, enum htw_limit res,
		       unsigned long n)
{
	return htw_limits_charge(q, res, n, READ_ONCE(*htw_limit_max[res]));
}

void htw_quota_uncharge_n(struct htw_quota *q, enum htw_limit res,
			  unsigned long n)
{
	struct htw_quota *level;

	for (level = q; level; level = level->parent)
		WARN_ON_ONCE(atomic_long_sub_return(n, &level->used[res]) < 0);
}
EXPORT_SYMBOL_IF_KUNIT(htw_quota_uncharge_n);

#ifdef HTW_TEST_BUILD
unsigned long htw_limits_used(const struct htw_quota *q, enum htw_limit res)
{
	if (WARN_ON_ONCE(res >= HTW_LIMIT_COUNT))
		return 0;
	return atomic_long_read(&q->used[res]);
}
EXPORT_SYMBOL_IF_KUNIT(htw_limits_used);

unsigned long htw_limits_entries(void)
{
	unsigned long n;

	mutex_lock(&htw_quotas_lock);
	n = htw_quota_count;
	mutex_unlock(&htw_quotas_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(htw_limits_entries);
#endif
