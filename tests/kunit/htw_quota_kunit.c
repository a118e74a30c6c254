// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the per-(user namespace, uid) limits (src/htw_limits.c)
 * and the wheel footprint they charge.
 *
 * Creating a real user namespace from a module is not possible
 * (create_user_ns() is not exported), so the chain cases build stand-in
 * namespaces: the table only reads ->parent and ->owner and takes
 * references, and the test keeps its own reference so that none is ever
 * freed by the kernel.  The real multi-namespace check is a qemu selftest.
 */
#include <kunit/test.h>
#include <linux/refcount.h>
#include <linux/user_namespace.h>

#include "htw_kunit.h"
#include "htw_limits.h"

/* Uids no task of the test boot uses. */
#define HTW_T_UID(n)	KUIDT_INIT(0x7ff00000 + (n))

KUNIT_DEFINE_ACTION_WRAPPER(htw_t_quota_put_action, htw_quota_put,
			    struct htw_quota *);

static struct htw_quota *htw_t_get(struct kunit *test,
				   struct user_namespace *ns, kuid_t uid)
{
	struct htw_quota *q = htw_quota_get(ns, uid);

	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_quota_put_action, q), 0);
	return q;
}

/* A stand-in user namespace created by @owner in @parent. */
static struct user_namespace *htw_t_userns(struct kunit *test,
					   struct user_namespace *parent,
					   kuid_t owner)
{
	struct user_namespace *ns = kunit_kzalloc(test, sizeof(*ns), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ns);
	ns->parent = parent;
	ns->level = parent->level + 1;
	ns->owner = owner;
	refcount_set(&ns->ns.count, 1);
	return ns;
}

static void htwheel_quota_same_key_same_entry(struct kunit *test)
{
	unsigned long before = htw_limits_entries();
	struct htw_quota *a, *b, *c;

	a = htw_quota_get(&init_user_ns, HTW_T_UID(1));
	b = htw_quota_get(&init_user_ns, HTW_T_UID(1));
	c = htw_quota_get(&init_user_ns, HTW_T_UID(2));
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_PTR_NE(test, a, c);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 2);
	htw_quota_put(a);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 2);
	htw_quota_put(b);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 1);
	htw_quota_put(c);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before);
}

/* At init_user_ns: up to the limit exactly, and a refusal changes nothing. */
static void htwheel_quota_limit_at_init_ns(struct kunit *test)
{
	struct htw_quota *q = htw_t_get(test, &init_user_ns, HTW_T_UID(3));
	int i;

	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_TIMERS, 1, 5), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_TIMERS, 1, 5), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_TIMERS), 5);
	/* Each resource is counted on its own. */
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_INSTANCES), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_INSTANCES, 5, 5), 0);
	/* A limit lowered below the usage refuses every later charge. */
	htw_quota_uncharge_n(q, HTW_LIMIT_TIMERS, 1);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_TIMERS, 1, 3), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_TIMERS), 4);
	htw_quota_uncharge_n(q, HTW_LIMIT_TIMERS, 4);
	htw_quota_uncharge_n(q, HTW_LIMIT_INSTANCES, 5);
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_TIMERS), 0);
}

/* A charge of several units is all or nothing. */
static void htwheel_quota_bulk_charge(struct kunit *test)
{
	struct htw_quota *q = htw_t_get(test, &init_user_ns, HTW_T_UID(4));

	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_WHEEL_BYTES, 4000, 10000), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_WHEEL_BYTES, 6001, 10000), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_WHEEL_BYTES), 4000);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_WHEEL_BYTES, 6000, 10000), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(q, HTW_LIMIT_WHEEL_BYTES, ULONG_MAX, ULONG_MAX),
			-EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(q, HTW_LIMIT_WHEEL_BYTES), 10000);
	htw_quota_uncharge_n(q, HTW_LIMIT_WHEEL_BYTES, 10000);
}

/*
 * (ns2, C), with ns2 created by B in ns1 and ns1 by A in init_user_ns:
 * the entry charges (ns1, B) and (init, A) too, and any level that is
 * full refuses the charge with every level left as it was.
 */
static void htwheel_quota_chain(struct kunit *test)
{
	kuid_t a = HTW_T_UID(10), b = HTW_T_UID(11), c = HTW_T_UID(12);
	struct user_namespace *ns1 = htw_t_userns(test, &init_user_ns, a);
	struct user_namespace *ns2 = htw_t_userns(test, ns1, b);
	unsigned long before = htw_limits_entries();
	struct htw_quota *leaf, *mid, *top, *sibling;

	leaf = htw_t_get(test, ns2, c);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 3);
	mid = htw_t_get(test, ns1, b);
	top = htw_t_get(test, &init_user_ns, a);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 3);

	KUNIT_ASSERT_EQ(test, htw_limits_charge(leaf, HTW_LIMIT_TIMERS, 3, 5), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_used(leaf, HTW_LIMIT_TIMERS), 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(mid, HTW_LIMIT_TIMERS), 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_TIMERS), 3);

	/* A's own timers and those of its namespaces share A's limit. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(top, HTW_LIMIT_TIMERS, 3, 5), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(top, HTW_LIMIT_TIMERS, 2, 5), 0);

	/* The top is full: the leaf is refused and no level moves. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(leaf, HTW_LIMIT_TIMERS, 1, 5), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(leaf, HTW_LIMIT_TIMERS), 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(mid, HTW_LIMIT_TIMERS), 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_TIMERS), 5);

	/* Another uid in ns1 is a new entry under the same top. */
	sibling = htw_t_get(test, ns1, c);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 4);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(sibling, HTW_LIMIT_TIMERS, 1, 5), -EDQUOT);
	htw_quota_uncharge_n(top, HTW_LIMIT_TIMERS, 2);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(sibling, HTW_LIMIT_TIMERS, 2, 5), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_used(mid, HTW_LIMIT_TIMERS), 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_TIMERS), 5);

	htw_quota_uncharge_n(sibling, HTW_LIMIT_TIMERS, 2);
	htw_quota_uncharge_n(leaf, HTW_LIMIT_TIMERS, 3);
	KUNIT_EXPECT_EQ(test, htw_limits_used(mid, HTW_LIMIT_TIMERS), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_TIMERS), 0);
}

/* The middle level alone can refuse: its limit binds its subtree. */
static void htwheel_quota_chain_middle_full(struct kunit *test)
{
	kuid_t a = HTW_T_UID(20), b = HTW_T_UID(21), c = HTW_T_UID(22);
	struct user_namespace *ns1 = htw_t_userns(test, &init_user_ns, a);
	struct user_namespace *ns2 = htw_t_userns(test, ns1, b);
	struct htw_quota *leaf = htw_t_get(test, ns2, c);
	struct htw_quota *mid = htw_t_get(test, ns1, b);
	struct htw_quota *top = htw_t_get(test, &init_user_ns, a);

	KUNIT_ASSERT_EQ(test, htw_limits_charge(mid, HTW_LIMIT_INSTANCES, 4, 4), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(leaf, HTW_LIMIT_INSTANCES, 1, 4), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_used(leaf, HTW_LIMIT_INSTANCES), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_INSTANCES), 4);
	htw_quota_uncharge_n(mid, HTW_LIMIT_INSTANCES, 4);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_INSTANCES), 0);
}

/* Entries go when their last user goes, parents after their children. */
static void htwheel_quota_chain_freed(struct kunit *test)
{
	struct user_namespace *ns1 = htw_t_userns(test, &init_user_ns, HTW_T_UID(30));
	struct user_namespace *ns2 = htw_t_userns(test, ns1, HTW_T_UID(31));
	unsigned long before = htw_limits_entries();
	struct htw_quota *leaf, *top;

	leaf = htw_quota_get(ns2, HTW_T_UID(32));
	KUNIT_ASSERT_NOT_NULL(test, leaf);
	top = htw_quota_get(&init_user_ns, HTW_T_UID(30));
	KUNIT_ASSERT_NOT_NULL(test, top);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 3);
	htw_quota_put(leaf);
	/* (ns2, 32) and (ns1, 31) had no other user; (init, 30) has. */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 1);
	htw_quota_put(top);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before);
	/* Every namespace reference the table took was given back. */
	KUNIT_EXPECT_EQ(test, refcount_read(&ns1->ns.count), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&ns2->ns.count), 1);
}

/* What is charged for a wheel grows with its geometry; refused: 0. */
static void htwheel_quota_wheel_footprint(struct kunit *test)
{
	struct htw_geometry small = htw_t_geo(NSEC_PER_MSEC, 512, 1024);
	struct htw_geometry many = htw_t_geo(NSEC_PER_MSEC, 512, 1 << 20);
	struct htw_geometry wide = htw_t_geo(NSEC_PER_MSEC, 4096, 1024);
	struct htw_geometry fine = htw_t_geo(10 * NSEC_PER_USEC, 65536, 1024);
	struct htw_geometry bad = htw_t_geo(NSEC_PER_MSEC, 0, 1024);
	size_t s = htw_wheel_footprint(&small);

	KUNIT_EXPECT_GT(test, s, 0);
	KUNIT_EXPECT_GT(test, htw_wheel_footprint(&many), s);
	KUNIT_EXPECT_GT(test, htw_wheel_footprint(&wide), s);
	/*
	 * 4 levels of 65536 buckets, a list head each at least (a spinlock
	 * takes no room on a uniprocessor kernel without lock debugging).
	 */
	KUNIT_EXPECT_GE(test, htw_wheel_footprint(&fine), (size_t)4 * 65536 * sizeof(void *));
	KUNIT_EXPECT_EQ(test, htw_wheel_footprint(&bad), 0);
	/* Not normalised yet (slots 500): the same as after rounding up. */
	small.slots = 500;
	KUNIT_EXPECT_EQ(test, htw_wheel_footprint(&small), s);
}

static struct kunit_case htwheel_quota_cases[] = {
	KUNIT_CASE(htwheel_quota_same_key_same_entry),
	KUNIT_CASE(htwheel_quota_limit_at_init_ns),
	KUNIT_CASE(htwheel_quota_bulk_charge),
	KUNIT_CASE(htwheel_quota_chain),
	KUNIT_CASE(htwheel_quota_chain_middle_full),
	KUNIT_CASE(htwheel_quota_chain_freed),
	KUNIT_CASE(htwheel_quota_wheel_footprint),
	{}
};

static struct kunit_suite htwheel_quota_suite = {
	.name = "htwheel_quota",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_quota_cases,
};

kunit_test_suite(htwheel_quota_suite);
