// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: per-(user namespace, uid) limits, charged up the namespace
 * chain, and a budget per user namespace.  The kernel's own ucounts do
 * the first for inotify and epoll, but inc_ucount() and dec_ucount() are
 * not exported, so this is the same shape in a table of the module's own.
 *
 * Entries are of two kinds, in one table: a user's, (ns, uid), limited by
 * the module parameters; and a namespace's, (ns, INVALID_UID), for every
 * namespace but the initial one, limited by that namespace's budget.  A
 * charge walks
 *
 *	(ns, uid) -> (ns, -) -> (ns->parent, ns->owner) -> (ns->parent, -)
 *	  -> ... -> (&init_user_ns, uid of the outermost creator)
 *
 * so a namespace takes from its creator's limits no more than its budget.
 * A budget is the namespace's own, set through HTW_IOC_NS_LIMITS_SET, or
 * else a quarter of the one in effect a namespace up (the module
 * parameters above the first level).
 *
 * An entry exists while a file, a child entry or its own budget refers to
 * it: each entry holds a reference on the next one up.  A namespace entry
 * whose budget was set holds a reference on itself, so that the budget
 * outlives the namespace's files; it lets go when the budget is set back
 * to the default, when the next budget is set and nothing but the entry
 * holds the namespace any more, or when the module goes.  The table, the
 * reference counts and the budgets change only under htw_quotas_lock;
 * charges take no lock at all, one atomic per level.
 */
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/capability.h>
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

/* A namespace's default budget: its parent's shifted right by this. */
#define HTW_NS_SHARE_SHIFT	2

struct htw_quota {
	struct hlist_node node;		/* in htw_quotas */
	struct user_namespace *ns;	/* a reference is held */
	kuid_t uid;			/* INVALID_UID: the namespace's entry */
	unsigned int refs;		/* files, child entries, a set budget */
	struct htw_quota *parent;	/* the next level up; NULL at the top */
	atomic_long_t used[HTW_LIMIT_COUNT];
	/* A namespace entry's own maxima, 0 for the default; lockless reads. */
	unsigned long budget[HTW_LIMIT_COUNT];
	bool budget_set;		/* holds a reference on the entry */
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

static bool htw_quota_is_ns(const struct htw_quota *q)
{
	return !uid_valid(q->uid);
}

/*
 * The key of the level above (@ns, @uid), false at the top: a user's
 * entry is charged to its namespace's, a namespace's to its creator's.
 */
static bool htw_quota_next_key(struct user_namespace **ns, kuid_t *uid)
{
	if (uid_valid(*uid)) {
		*uid = INVALID_UID;
		return (*ns)->parent;
	}
	*uid = (*ns)->owner;
	*ns = (*ns)->parent;
	return true;
}

/*
 * Find or create (@ns, @uid) and every level above it that does not exist
 * yet.  The walk ends at the first entry that exists (its own chain is
 * complete) or at the top, a user of init_user_ns.  The depth is bounded
 * by the kernel's limit on nested user namespaces (32), two levels each.
 */
static struct htw_quota *htw_quota_get_locked(struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *first = NULL, **link = &first, *q;

	lockdep_assert_held(&htw_quotas_lock);
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
			return NULL;
		}
		*link = q;
		link = &q->parent;
		if (!htw_quota_next_key(&ns, &uid))
			break;
	}
	return first;
}

struct htw_quota *htw_quota_get(struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *q;

	if (WARN_ON_ONCE(!uid_valid(uid)))
		return NULL;
	mutex_lock(&htw_quotas_lock);
	q = htw_quota_get_locked(ns, uid);
	mutex_unlock(&htw_quotas_lock);
	return q;
}
EXPORT_SYMBOL_IF_KUNIT(htw_quota_get);

void htw_quota_hold(struct htw_quota *q)
{
	mutex_lock(&htw_quotas_lock);
	q->refs++;
	mutex_unlock(&htw_quotas_lock);
}

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

/*
 * The budget of namespace entry @n for @res: its own, or a quarter of the
 * one in effect a namespace up, @user_max's above the first level.  The
 * next namespace entry up is two levels up, past the creator's user entry.
 */
static unsigned long htw_ns_budget(const struct htw_quota *n, enum htw_limit res,
				   unsigned long user_max)
{
	unsigned int shift = 0;
	unsigned long max = user_max;

	for (; n; n = n->parent->parent) {
		unsigned long own = READ_ONCE(n->budget[res]);

		if (own) {
			max = own;
			break;
		}
		shift += HTW_NS_SHARE_SHIFT;
	}
	return shift < BITS_PER_LONG ? max >> shift : 0;
}

/* The limit at @level: the user's maximum, or its namespace's budget. */
static unsigned long htw_level_max(const struct htw_quota *level,
				   enum htw_limit res, unsigned long user_max)
{
	return htw_quota_is_ns(level) ? htw_ns_budget(level, res, user_max) : user_max;
}

int htw_limits_charge(struct htw_quota *q, enum htw_limit res,
		      unsigned long n, unsigned long max)
{
	struct htw_quota *level, *full;

	/* Counters are longs: a larger limit is no limit. */
	max = min_t(unsigned long, max, LONG_MAX);
	for (level = q; level; level = level->parent)
		if (!htw_add_below(&level->used[res], n,
				   min_t(unsigned long, htw_level_max(level, res, max), LONG_MAX)))
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

/*
 * Whether the namespace of a set budget's entry is gone: nothing but the
 * entry holds it, so no task can enter it or open a file in it again.  A
 * static stub lets the KUnit suite, whose stand-in namespaces the test
 * itself holds, play a namespace's end.
 */
VISIBLE_IF_KUNIT bool htw_ns_gone(struct user_namespace *ns)
{
	KUNIT_STATIC_STUB_REDIRECT(htw_ns_gone, ns);
	/* Without CONFIG_USER_NS, get_user_ns() takes nothing: none ever goes. */
	return IS_ENABLED(CONFIG_USER_NS) && htw_userns_refs(ns) == 1;
}
EXPORT_SYMBOL_IF_KUNIT(htw_ns_gone);

/* Nothing but its own budget refers to the entry, and its namespace is gone. */
static bool htw_ns_budget_orphaned(const struct htw_quota *q)
{
	return q->refs == 1 && htw_ns_gone(q->ns);
}

/* Let go of set budgets: the orphaned ones, or with @all every one. */
static void htw_ns_budgets_release_locked(bool all)
{
	struct htw_quota *q;
	int bkt;

	lockdep_assert_held(&htw_quotas_lock);
again:
	hash_for_each(htw_quotas, bkt, q, node) {
		if (q->budget_set && (all || htw_ns_budget_orphaned(q))) {
			q->budget_set = false;
			/* May free q and entries above it: scan again. */
			htw_quota_put_locked(q);
			goto again;
		}
	}
}

void htw_limits_exit(void)
{
	mutex_lock(&htw_quotas_lock);
	htw_ns_budgets_release_locked(true);
	WARN_ON_ONCE(htw_quota_count);
	mutex_unlock(&htw_quotas_lock);
}

/* A namespace's budget and what it holds, from its entry @n. */
static void htw_ns_limits_fill(const struct htw_quota *n, struct htw_ns_budget *b)
{
	int i;

	b->own = 0;
	for (i = 0; i < HTW_LIMIT_COUNT; i++) {
		b->max[i] = htw_ns_budget(n, i, READ_ONCE(*htw_limit_max[i]));
		b->used[i] = atomic_long_read(&n->used[i]);
		if (READ_ONCE(n->budget[i]))
			b->own |= BIT(i);
	}
}

int htw_ns_limits_get(struct user_namespace *ns, struct htw_ns_budget *b)
{
	struct htw_quota *n;

	if (!ns->parent)
		return -EINVAL;
	mutex_lock(&htw_quotas_lock);
	n = htw_quota_get_locked(ns, INVALID_UID);
	if (n) {
		htw_ns_limits_fill(n, b);
		htw_quota_put_locked(n);
	}
	mutex_unlock(&htw_quotas_lock);
	return n ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(htw_ns_limits_get);

int htw_ns_limits_set(struct user_namespace *ns, const unsigned long *max)
{
	struct htw_quota *n;
	bool any = false;
	int i;

	if (!ns->parent)
		return -EINVAL;
	mutex_lock(&htw_quotas_lock);
	htw_ns_budgets_release_locked(false);
	n = htw_quota_get_locked(ns, INVALID_UID);
	if (!n) {
		mutex_unlock(&htw_quotas_lock);
		return -ENOMEM;
	}
	for (i = 0; i < HTW_LIMIT_COUNT; i++) {
		WRITE_ONCE(n->budget[i], max[i]);
		any |= max[i];
	}
	/* The reference just taken becomes the budget's, or goes. */
	if (any && !n->budget_set) {
		n->budget_set = true;
	} else {
		if (!any && n->budget_set) {
			n->budget_set = false;
			htw_quota_put_locked(n);
		}
		htw_quota_put_locked(n);
	}
	mutex_unlock(&htw_quotas_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(htw_ns_limits_set);

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
