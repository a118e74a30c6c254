// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite htwheel_handle_table: the handle table (src/htw_handles.c)
 * driven directly, without a wheel.  Ids come back last freed first,
 * with their generation bumped and their object with them, an id whose
 * generations are used up is retired, the table grows a chunk at a time
 * up to exactly its capacity, the handle word of an object in use is its
 * handle, and a value the table never issued (another key, generation 0,
 * bits above the generation) names nothing.
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/slab.h>

#include "htw_kunit.h"
#include "htw_handles.h"

#define HTW_H_KEY	0x9e3779b97f4a7c15ULL

/* A table object: 32 bytes, the handle word second. */
struct htw_h_obj {
	u64 payload;
	u64 word;
	u64 more[2];
};

/* Chunks of HTW_IDS_PER_CHUNK test objects, for every table of the suite. */
static struct kmem_cache *htw_h_chunks;

static int htw_h_suite_init(struct kunit_suite *suite)
{
	htw_t_high_res(suite);
	htw_h_chunks = kmem_cache_create("htw_h_chunks",
					 HTW_IDS_PER_CHUNK * sizeof(struct htw_h_obj),
					 0, 0, NULL);
	return htw_h_chunks ? 0 : -ENOMEM;
}

static void htw_h_suite_exit(struct kunit_suite *suite)
{
	kmem_cache_destroy(htw_h_chunks);
}

KUNIT_DEFINE_ACTION_WRAPPER(htw_h_destroy_action, htw_handles_destroy,
			    struct htw_handles *);

static struct htw_handles *htw_h_table(struct kunit *test, u64 capacity,
				       u64 key)
{
	struct htw_handles *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_EQ(test, htw_handles_init(h, capacity, key,
					       sizeof(struct htw_h_obj),
					       offsetof(struct htw_h_obj, word),
					       htw_h_chunks), 0);
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

/* Take an id; its object's handle word must be the handle. */
static struct htw_h_obj *htw_h_take(struct kunit *test, struct htw_handles *h,
				    u64 *handle)
{
	struct htw_h_obj *o = htw_handle_get(h, handle);

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(o));
	KUNIT_ASSERT_NE(test, *handle, 0);
	KUNIT_ASSERT_EQ(test, o->word, *handle);
	return o;
}

static u64 htw_h_get(struct kunit *test, struct htw_handles *h)
{
	u64 handle;

	htw_h_take(test, h, &handle);
	return handle;
}

static void htw_h_put(struct htw_handles *h, u64 handle)
{
	htw_handle_put(h, htw_handle_lookup(h, handle));
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

/* A freed id comes back with the same id, object and the next generation. */
static void htwheel_handle_table_generation_bump(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	u64 *all = htw_h_take_all(test, h);
	struct htw_h_obj *was = htw_handle_lookup(h, all[3]), *o;
	u64 again;

	KUNIT_EXPECT_EQ(test, htw_h_gen(test, h, all[3]), 1);
	htw_h_put(h, all[3]);
	KUNIT_EXPECT_NE(test, was->word, all[3]);
	o = htw_h_take(test, h, &again);
	KUNIT_EXPECT_PTR_EQ(test, o, was);
	KUNIT_EXPECT_NE(test, again, all[3]);
	KUNIT_EXPECT_EQ(test, htw_h_id(test, h, again), htw_h_id(test, h, all[3]));
	KUNIT_EXPECT_EQ(test, htw_h_gen(test, h, again), 2);
}

/*
 * Ids come back last freed first, even with never used ids left: a freed
 * id goes on top of the free stack, its object still in the cache.
 */
static void htwheel_handle_table_lifo_reuse(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	static const u32 order[] = { 5, 2, 9, 0 };
	u64 *all, first, again;
	u32 i;

	first = htw_h_get(test, h);
	htw_h_put(h, first);
	again = htw_h_get(test, h);
	KUNIT_EXPECT_EQ(test, htw_h_id(test, h, again), htw_h_id(test, h, first));
	KUNIT_EXPECT_EQ(test, htw_h_gen(test, h, again), 2);

	h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	all = htw_h_take_all(test, h);
	for (i = 0; i < ARRAY_SIZE(order); i++)
		htw_h_put(h, all[order[i]]);
	for (i = ARRAY_SIZE(order); i-- > 0;)
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
	htw_h_put(h, htw_h_get(test, h));
	htw_handles_age(h, HTW_GEN_MAX);
	for (i = 0; i < HTW_IDS_PER_CHUNK; i++) {
		handle = htw_h_get(test, h);
		KUNIT_ASSERT_EQ(test, htw_h_gen(test, h, handle), HTW_GEN_MAX);
		htw_h_put(h, handle);
	}
	KUNIT_EXPECT_EQ(test, PTR_ERR(htw_handle_get(h, &handle)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, h->used, 0);
}

/*
 * Values this table never issues name nothing: another table's handles
 * (a key differing in a generation bit beyond HTW_GEN_MAX), generation
 * 0, bits above the generation, 0.  A value with the right id leads to
 * that id's object whatever its generation, and only the handle word
 * says whose it is now.
 */
static void htwheel_handle_table_decode_rejects(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	struct htw_handles *other = htw_h_table(test, HTW_IDS_PER_CHUNK,
						HTW_H_KEY ^ BIT_ULL(62));
	struct htw_h_obj *o, *f;
	u64 mine, foreign, gen;
	u32 id;

	o = htw_h_take(test, h, &mine);
	f = htw_h_take(test, other, &foreign);
	KUNIT_EXPECT_PTR_NE(test, o, f);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, mine), o);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(other, foreign), f);

	KUNIT_EXPECT_FALSE(test, htw_handle_decode(h, foreign, &id, &gen));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, foreign));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(other, mine));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, 0));
	/* Its id, at generation 0 and at HTW_GEN_MAX + 1. */
	id = htw_h_id(test, h, mine);
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, id, 0)));
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, id, HTW_GEN_MAX + 1)));
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, htw_h_forge(h, id, 2)), o);
	/* An index past the last object of a chunk. */
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, HTW_IDS_PER_CHUNK, 1)));
	/* The first id of a chunk the table does not have. */
	KUNIT_EXPECT_NULL(test, htw_handle_lookup(h, htw_h_forge(h, htw_chunk_id(1, 0), 1)));

	htw_handle_put(h, o);
	KUNIT_EXPECT_PTR_EQ(test, htw_handle_lookup(h, mine), o);
	KUNIT_EXPECT_NE(test, o->word, mine);
}

/*
 * A never used object comes zeroed but for its handle word; a reused one
 * keeps what its last user wrote but for the handle word.
 */
static void htwheel_handle_table_object_contents(struct kunit *test)
{
	struct htw_handles *h = htw_h_table(test, HTW_IDS_PER_CHUNK, HTW_H_KEY);
	u64 *all = htw_h_take_all(test, h);
	struct htw_h_obj *o, *again;
	u64 next;
	u32 i;

	for (i = 0; i < HTW_IDS_PER_CHUNK; i++) {
		o = htw_handle_lookup(h, all[i]);
		KUNIT_EXPECT_EQ(test, o->payload | o->more[0] | o->more[1], 0);
	}
	o->payload = 42;
	htw_handle_put(h, o);
	again = htw_h_take(test, h, &next);
	KUNIT_EXPECT_PTR_EQ(test, again, o);
	KUNIT_EXPECT_EQ(test, again->payload, 42);
	KUNIT_EXPECT_EQ(test, again->word, next);
}

/*
 * A table of three chunks less a few grows one chunk at a time as its
 * free list runs dry, hands out each of its ids once, maps every one back
 * to its own object, and refuses one more than its capacity even with
 * room in its last chunk, until an id is given back.
 */
static void htwheel_handle_table_grow_across_chunks(struct kunit *test)
{
	const u32 n = 3 * HTW_IDS_PER_CHUNK - 5;
	struct htw_handles *h = htw_h_table(test, n, HTW_H_KEY);
	u64 *handles = kunit_kcalloc(test, n, sizeof(*handles), GFP_KERNEL);
	void **objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(n) * sizeof(long),
					    GFP_KERNEL);
	u32 i, id, wrong = 0;
	u64 extra;

	KUNIT_ASSERT_NOT_NULL(test, handles);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_EXPECT_EQ(test, htw_handles_footprint(n), 3 * sizeof(void *));
	for (i = 0; i < n; i++) {
		objs[i] = htw_h_take(test, h, &handles[i]);
		KUNIT_EXPECT_EQ(test, h->used_chunks, i / HTW_IDS_PER_CHUNK + 1);
		id = htw_id_ordinal(htw_h_id(test, h, handles[i]));
		KUNIT_ASSERT_LT(test, id, n);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(id, seen));
	}
	KUNIT_EXPECT_EQ(test, htw_handles_chunk_bytes(h),
			3 * HTW_IDS_PER_CHUNK * sizeof(struct htw_h_obj));
	KUNIT_EXPECT_EQ(test, PTR_ERR(htw_handle_get(h, &extra)), -ENOSPC);
	for (i = 0; i < n; i++)
		wrong += htw_handle_lookup(h, handles[i]) != objs[i];
	KUNIT_EXPECT_EQ(test, wrong, 0);
	htw_handle_put(h, objs[7]);
	htw_h_take(test, h, &extra);
	KUNIT_EXPECT_EQ(test, PTR_ERR(htw_handle_get(h, &extra)), -ENOSPC);
}

/*
 * Sizes, offsets and capacities the table cannot hold are refused, and so
 * is a chunk cache too small for HTW_IDS_PER_CHUNK objects.
 */
static void htwheel_handle_table_refuses_layouts(struct kunit *test)
{
	const size_t size = sizeof(struct htw_h_obj);
	struct kmem_cache *c = htw_h_chunks;
	struct htw_handles h = {};

	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, 8, HTW_H_KEY, 20, 0, c), -EINVAL);
	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, 8, HTW_H_KEY, size, 4, c), -EINVAL);
	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, 8, HTW_H_KEY, size, size, c), -EINVAL);
	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, 0, HTW_H_KEY, size, 0, c), -EINVAL);
	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, HTW_HANDLES_MAX + 1,
					       HTW_H_KEY, size, 0, c), -EINVAL);
	KUNIT_EXPECT_EQ(test, htw_handles_init(&h, 8, HTW_H_KEY, 2 * size, 0, c),
			-EINVAL);
	htw_handles_destroy(&h);	/* nothing to free */
}

static struct kunit_case htwheel_handle_table_cases[] = {
	KUNIT_CASE(htwheel_handle_table_generation_bump),
	KUNIT_CASE(htwheel_handle_table_lifo_reuse),
	KUNIT_CASE(htwheel_handle_table_retire),
	KUNIT_CASE(htwheel_handle_table_decode_rejects),
	KUNIT_CASE(htwheel_handle_table_object_contents),
	KUNIT_CASE(htwheel_handle_table_grow_across_chunks),
	KUNIT_CASE(htwheel_handle_table_refuses_layouts),
	{}
};

static struct kunit_suite htwheel_handle_table_suite = {
	.name = "htwheel_handle_table",
	.suite_init = htw_h_suite_init,
	.suite_exit = htw_h_suite_exit,
	.test_cases = htwheel_handle_table_cases,
};

kunit_test_suite(htwheel_handle_table_suite);
