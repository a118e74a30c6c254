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
#include <kunit/static_stub.h>
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

static void htw_t_budget_unset(void *ns)
{
	static const unsigned long none[HTW_LIMIT_COUNT];

	htw_ns_limits_set(ns, none);
}

/* Give stand-in namespace @ns a budget of @max of everything. */
static void htw_t_budget(struct kunit *test, struct user_namespace *ns,
			 unsigned long max)
{
	unsigned long all[HTW_LIMIT_COUNT] = { max, max, max };

	KUNIT_ASSERT_EQ(test, htw_ns_limits_set(ns, all), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_budget_unset, ns), 0);
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

	/* Budgets that never bind here: the users' limits are what is tested. */
	htw_t_budget(test, ns1, 100);
	htw_t_budget(test, ns2, 100);
	/* (ns2, -), (ns1, b), (ns1, -) and (init, a): a set budget holds its chain. */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 4);
	leaf = htw_t_get(test, ns2, c);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 5);
	mid = htw_t_get(test, ns1, b);
	top = htw_t_get(test, &init_user_ns, a);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 5);

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
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 6);
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
	struct htw_quota *leaf, *mid, *top;

	htw_t_budget(test, ns1, 100);
	htw_t_budget(test, ns2, 100);
	leaf = htw_t_get(test, ns2, c);
	mid = htw_t_get(test, ns1, b);
	top = htw_t_get(test, &init_user_ns, a);
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
	/* (ns2, 32), (ns2, -), (ns1, 31), (ns1, -), (init, 30). */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 5);
	htw_quota_put(leaf);
	/* Only (init, 30) had another user. */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 1);
	htw_quota_put(top);
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before);
	/* Every namespace reference the table took was given back. */
	KUNIT_EXPECT_EQ(test, refcount_read(&ns1->ns.count), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&ns2->ns.count), 1);
}

/*
 * A namespace with no budget of its own gets a quarter of what is in
 * effect a namespace up: it cannot take all of its creator's limit, and
 * what it takes leaves the rest to the creator and to a sibling.
 */
static void htwheel_quota_ns_default_budget(struct kunit *test)
{
	kuid_t a = HTW_T_UID(40), b = HTW_T_UID(41);
	struct user_namespace *ns1 = htw_t_userns(test, &init_user_ns, a);
	struct user_namespace *ns2 = htw_t_userns(test, &init_user_ns, a);
	struct user_namespace *nested = htw_t_userns(test, ns1, b);
	struct htw_quota *in1 = htw_t_get(test, ns1, b);
	struct htw_quota *in2 = htw_t_get(test, ns2, b);
	struct htw_quota *deep = htw_t_get(test, nested, b);
	struct htw_quota *top = htw_t_get(test, &init_user_ns, a);
	struct htw_ns_budget nb;

	/* A user limit of 64: each namespace 16, one nested in it 4. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 16, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(deep, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	htw_quota_uncharge_n(in1, HTW_LIMIT_TIMERS, 16);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(deep, HTW_LIMIT_TIMERS, 4, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(deep, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	/* The nested namespace's 4 count in ns1's 16, and in a's 64. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 13, 64), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 12, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_used(top, HTW_LIMIT_TIMERS), 16);
	/* The sibling has its own 16, and the creator the rest. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in2, HTW_LIMIT_TIMERS, 16, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(top, HTW_LIMIT_TIMERS, 32, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(top, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	/* What a reader of the budget sees, against the module's parameters. */
	KUNIT_ASSERT_EQ(test, htw_ns_limits_get(ns1, &nb), 0);
	KUNIT_EXPECT_EQ(test, nb.used[HTW_LIMIT_TIMERS], 16);
	KUNIT_EXPECT_EQ(test, nb.own, 0);
	KUNIT_EXPECT_EQ(test, htw_ns_limits_get(&init_user_ns, &nb), -EINVAL);
	htw_quota_uncharge_n(top, HTW_LIMIT_TIMERS, 32);
	htw_quota_uncharge_n(in2, HTW_LIMIT_TIMERS, 16);
	htw_quota_uncharge_n(in1, HTW_LIMIT_TIMERS, 12);
	htw_quota_uncharge_n(deep, HTW_LIMIT_TIMERS, 4);
}

/*
 * A budget of its own binds the namespace (above the default or below),
 * and the default of a namespace nested in it derives from it; set back
 * to 0, the default returns and the entries the budget held go.
 */
static void htwheel_quota_ns_own_budget(struct kunit *test)
{
	kuid_t a = HTW_T_UID(50), b = HTW_T_UID(51);
	struct user_namespace *ns1 = htw_t_userns(test, &init_user_ns, a);
	struct user_namespace *nested = htw_t_userns(test, ns1, b);
	unsigned long before = htw_limits_entries();
	unsigned long own[HTW_LIMIT_COUNT] = { 0, 40, 0 }, none[HTW_LIMIT_COUNT] = {};
	struct htw_quota *in1, *deep;
	struct htw_ns_budget nb;

	KUNIT_ASSERT_EQ(test, htw_ns_limits_set(ns1, own), 0);
	/* (ns1, -) and (init, a) stay for the budget. */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 2);
	KUNIT_ASSERT_EQ(test, htw_ns_limits_get(ns1, &nb), 0);
	KUNIT_EXPECT_EQ(test, nb.own, BIT(HTW_LIMIT_TIMERS));
	KUNIT_EXPECT_EQ(test, nb.max[HTW_LIMIT_TIMERS], 40);
	in1 = htw_t_get(test, ns1, b);
	deep = htw_t_get(test, nested, b);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 40, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	htw_quota_uncharge_n(in1, HTW_LIMIT_TIMERS, 40);
	/* Nested: a quarter of 40. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(deep, HTW_LIMIT_TIMERS, 10, 64), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(deep, HTW_LIMIT_TIMERS, 1, 64), -EDQUOT);
	htw_quota_uncharge_n(deep, HTW_LIMIT_TIMERS, 10);
	/* The other resources kept the default: a quarter of 64. */
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_INSTANCES, 17, 64), -EDQUOT);
	KUNIT_ASSERT_EQ(test, htw_ns_limits_set(ns1, none), 0);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 17, 64), -EDQUOT);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in1, HTW_LIMIT_TIMERS, 16, 64), 0);
	htw_quota_uncharge_n(in1, HTW_LIMIT_TIMERS, 16);
	KUNIT_EXPECT_EQ(test, htw_ns_limits_set(&init_user_ns, own), -EINVAL);
}

static bool htw_t_all_gone(struct user_namespace *ns)
{
	return true;
}

/*
 * A budget whose namespace is gone goes at the next budget set (played
 * by a stub: the test itself holds its stand-in namespaces), and only
 * then; one whose namespace still has an entry in use stays.
 */
static void htwheel_quota_ns_budget_outlives_no_namespace(struct kunit *test)
{
	struct user_namespace *gone = htw_t_userns(test, &init_user_ns, HTW_T_UID(60));
	struct user_namespace *busy = htw_t_userns(test, &init_user_ns, HTW_T_UID(61));
	struct user_namespace *other = htw_t_userns(test, &init_user_ns, HTW_T_UID(62));
	unsigned long before = htw_limits_entries();
	struct htw_quota *in_busy;

	htw_t_budget(test, gone, 8);
	htw_t_budget(test, busy, 8);
	in_busy = htw_t_get(test, busy, HTW_T_UID(63));
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 5);
	kunit_activate_static_stub(test, htw_ns_gone, htw_t_all_gone);
	htw_t_budget(test, other, 8);
	kunit_deactivate_static_stub(test, htw_ns_gone);
	/* gone's two went; other's two came; busy's three stay. */
	KUNIT_EXPECT_EQ(test, htw_limits_entries(), before + 5);
	KUNIT_EXPECT_EQ(test, refcount_read(&gone->ns.count), 1);
	KUNIT_EXPECT_EQ(test, htw_limits_charge(in_busy, HTW_LIMIT_TIMERS, 9, 64), -EDQUOT);
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
	KUNIT_CASE(htwheel_quota_ns_default_budget),
	KUNIT_CASE(htwheel_quota_ns_own_budget),
	KUNIT_CASE(htwheel_quota_ns_budget_outlives_no_namespace),
	KUNIT_CASE(htwheel_quota_wheel_footprint),
	{}
};

static struct kunit_suite htwheel_quota_suite = {
	.name = "htwheel_quota",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_quota_cases,
};

kunit_test_suite(htwheel_quota_suite);
