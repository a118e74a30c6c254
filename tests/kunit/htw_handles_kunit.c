// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite htwheel_handle_table: the handle table (src/htw_handles.c)
 * driven directly, without a wheel.  Ids come back first-in first-out
 * with their generation bumped, an id whose generations are used up is
 * retired, the table grows a chunk at a time up to its capacity, and a
 * value the table never issued (another key, generation 0, bits above the
 * generation) names nothing.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "htw_handles.h"
#include "htw_test_hooks.h"

#define HTW_H_KEY	0x9e3779b97f4a7c15ULL

KUNIT_DEFINE_ACTION_WRAPPER(htw_h_destroy_action, htw_handles_destroy,
			    struct htw_handles *);

static struct htw_handles *htw_h_table(struct kunit *test, u64 capacity,
				       u64 key)
{
	struct htw_handles *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_EQ(test, htw_handles_init(h, capacity, key), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_h_destroy_action, h), 0);
	return h;
}

static u32 htw_h_id(struct kunit *test, struct htw_handles *h, u64 handle)
{
	u64 gen;
	u32 id;

	KUNIT_ASSERT_TRUE(test, htw_handle_decode(h, handle, &id, &gen));
	return id;
}

static u64 htw_h_gen(struct kunit *test, struct htw_handles *h, u64 handle)
{
	u64 gen;
	u32 id;

	KUNIT_ASSERT_TRUE(test, htw_handle_decode(h, handle, &id, &gen));
	return gen;
}

/* The handle of @id at @gen, as the table would scramble it. */
static u64 htw_h_forge(const struct htw_handles *h, u32 id, u64 gen)
{
	return (gen << HTW_ID_BITS | id) ^ h->key;
}

static u64 htw_h_get(struct kunit *test, struct htw_handles *h)
{
	u64 handle = 0;

	KUNIT_ASSERT_EQ(test, htw_handle_get(h, &handle), 0);
	KUNIT_ASSERT_NE(test, handle, 0);
	return handle;
}

/* Every id of a one-chunk table, in the order the table hands them out. */
static u64 *htw_h_take_all(struct kunit *test, struct htw_handles *h)
{
	u64 *all = kunit_kcalloc(test, HTW_IDS_PER_CHUNK, sizeof(*all), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, all);
	for (i = 0; i < HTW_IDS_PER_CHUNK; i++)
		all[i] = htw_h_get(test, h);
	return all;
}

/* A freed id comes back with the same id and the next generation. */
static void htwheel_handle_table_generation_bump(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	u64 *all = htw_h_take_all(test, h);
	u64 again;

	KUNIT_EXPECT_EQ(test, htw_h_gen(test, h, all[3]), 1);
	htw_handle_put(h, all[3]);
	again = htw_h_get(test, h);
	KUNIT_EXPECT_NE(test, again, all[3]);
	KUNIT_EXPECT_EQ(test, htw_h_id(test, h, again), htw_h_id(test, h, all[3]));
	KUNIT_EXPECT_EQ(test, htw_h_gen(test, h, again), 2);
}

/*
 * Ids come back in the order they were freed, and only after every id
 * freed before them: a freed id goes to the back of the free list.
 */
static void htwheel_handle_table_fifo_reuse(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	static const u32 order[] = { 5, 2, 9, 0 };
	u64 *all, first;
	u32 i;

	/* With free ids left, a freed one waits for all of them. */
	first = htw_h_get(test, h);
	htw_handle_put(h, first);
	KUNIT_EXPECT_NE(test, htw_h_id(test, h, htw_h_get(test, h)),
			htw_h_id(test, h, first));

	h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	all = htw_h_take_all(test, h);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		htw_handle_put(h, all[order[i]]);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		KUNIT_EXPECT_EQ(test, htw_h_id(test, h, htw_h_get(test, h)),
				htw_h_id(test, h, all[order[i]]));
}

/*
 * An id at the end of its generations is used once more and then
 * retired: never handed out again, so the table finally runs out.
 */
static void htwheel_handle_table_retire(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	u64 handle;
	u32 i;

	/* The chunk exists once one id was handed out. */
	htw_handle_put(h, htw_h_get(test, h));
	htw_handles_age(h, HTW_GEN_MAX);
	for (i = 0; i < HTW_IDS_PER_CHUNK; i++) {
		handle = htw_h_get(test, h);
		KUNIT_ASSERT_EQ(test, htw_h_gen(test, h, handle), HTW_GEN_MAX);
		htw_handle_put(h, handle);
	}
	KUNIT_EXPECT_EQ(test, htw_handle_get(h, &handle), -ENOSPC);
}

/*
 * Values this table never issues look up as nothing: another table's
 * handles (a key differing in a generation bit beyond HTW_GEN_MAX),
 * generation 0, bits above the generation, 0, and a freed handle.
 */
static void htwheel_handle_table_decode_rejects(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	struct htw_handles *other = htw_h_table(test, HTW_IDS_PER_CHUNK,
						HTW_H_KEY ^ BIT_ULL(62));
	static u64 obj[2];
	u64 mine, foreign, gen;
	u32 id;

	mine = htw_h_get(test, h);
	htw_handle_set(h, mine, &obj[0]);
	foreign = htw_h_get(test, other);
	htw_handle_set(other, foreign, &obj[1]);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, mine), (void *)&obj[0]);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(other, foreign), (void *)&obj[1]);

	KUNIT_EXPECT_FALSE(test, htw_handle_decode(h, foreign, &id, &gen));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, foreign));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(other, mine));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, 0));
	/* Its id, at generation 0 and at HTW_GEN_MAX + 1. */
	id = htw_h_id(test, h, mine);
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, id, 0)));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, id, HTW_GEN_MAX + 1)));
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, htw_h_forge(h, id, 1)),
			    (void *)&obj[0]);

	htw_handle_put(h, mine);
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, mine));
}

/* A reserved handle names nothing until its object is set. */
static void htwheel_handle_table_publish(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	static u64 obj;
	u64 handle = htw_h_get(test, h);

	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, handle));
	htw_handle_set(h, handle, &obj);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, handle), (void *)&obj);
}

/*
 * A table of three chunks grows one chunk at a time as its free list
 * runs dry, hands out each of its ids once, maps every one back to its
 * own object, and refuses a fourth chunk.
 */
static void htwheel_handle_table_grow_across_chunks(struct kunit *test)
{
	const u32 n = 3 * HTW_IDS_PER_CHUNK;
	struct htw_handles *h = htw_h_table(test, n, HTW_H_KEY);
	u64 *handles = kunit_kcalloc(test, n, sizeof(*handles), GFP_KERNEL);
	u64 *objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(n) * sizeof(long),
					    GFP_KERNEL);
	u32 i, id, wrong = 0;
	u64 extra;

	KUNIT_ASSERT_NOT_NULL(test, handles);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_EXPECT_EQ(test, htw_handles_footprint(n), 3 * sizeof(atomic64_t *));
	for (i = 0; i < n; i++) {
		handles[i] = htw_h_get(test, h);
		KUNIT_EXPECT_EQ(test, h->used_chunks, i / HTW_IDS_PER_CHUNK + 1);
		htw_handle_set(h, handles[i], &objs[i]);
		id = htw_h_id(test, h, handles[i]);
		KUNIT_ASSERT_LT(test, id, n);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(id, seen));
	}
	KUNIT_EXPECT_EQ(test, htw_handle_get(h, &extra), -ENOSPC);
	for (i = 0; i < n; i++)
		wrong += htw_handle_lookup(h, handles[i]) != &objs[i];
	KUNIT_EXPECT_EQ(test, wrong, 0);
}

static struct kunit_case htwheel_handle_table_cases[] = {
	KUNIT_CASE(htwheel_handle_table_generation_bump),
	KUNIT_CASE(htwheel_handle_table_fifo_reuse),
	KUNIT_CASE(htwheel_handle_table_retire),
	KUNIT_CASE(htwheel_handle_table_decode_rejects),
	KUNIT_CASE(htwheel_handle_table_publish),
	KUNIT_CASE(htwheel_handle_table_grow_across_chunks),
	{}
};

static struct kunit_suite htwheel_handle_table_suite = {
	.name = "htwheel_handle_table",
	.test_cases = htwheel_handle_table_cases,
};

kunit_test_suite(htwheel_handle_table_suite);
