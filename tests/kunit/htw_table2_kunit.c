// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the version 2 timer table (htw_table.c, struct
 * htw_table2_*), on manual-clock wheels whose shared memory the suite
 * writes as user space would, by the protocol of the uapi header.
 *
 * - an armed slot fires at its tick into a 16-byte record carrying its
 *   generation, and is disarmed by the claim;
 * - the ABA of version 1: between the kernel's read of a due arming and
 *   its claim, user space cancels it and arms the slot again, new cookie
 *   and all, at the same deadline.  The claim fails (the generation
 *   moved), no record names the cancelled arming, and the new arming
 *   fires once, under its own generation;
 * - a slot is submitted once until taken in: @queued says so, and a
 *   re-arm while it is set pushes nothing;
 * - the completion ring at its smallest (256) with 2048 slots due at one
 *   tick: every record once, as the consumer makes room.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <kunit/test-bug.h>

#include "htw_kunit.h"
#include "htw_table.h"

#define T0	(1000 * MS)

struct htw_tb2 {
	struct htw_wheel *w;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	u32 *sq;
	struct htw_table2_cqe *cq;
	u32 cq_head;
	u32 pushes;
};

static void htw_tb2_new(struct kunit *test, struct htw_tb2 *tb, u32 entries)
{
	struct htw_geometry geo = htw_t_geo(MS, 64, entries);
	struct htw_table2_setup ts;
	void *mem;

	tb->w = htw_wheel_create_table(&geo, htw_t_clock(test, T0), NULL, NULL,
				       entries, 0, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(tb->w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action,
							tb->w), 0);
	htw_table2_layout_for(entries, &ts);
	mem = htw_table_memory(tb->w);
	tb->hdr = mem;
	tb->slots = mem + ts.slots_off;
	tb->sq = mem + ts.sq_off;
	tb->cq = mem + ts.cq_off;
	tb->cq_head = 0;
	tb->pushes = 0;
}

static void htw_tb2_submit(struct htw_tb2 *tb, u32 slot)
{
	u32 tail = tb->hdr->sq_tail;

	WRITE_ONCE(tb->slots[slot].queued, 1);
	tb->sq[tail & tb->hdr->sq_mask] = slot;
	/* The entry before the tail, as a producer must. */
	smp_store_release(&tb->hdr->sq_tail, tail + 1);
	tb->pushes++;
}

/* Arm or move @slot to @deadline by the protocol; its new generation. */
static u64 htw_tb2_arm(struct htw_tb2 *tb, u32 slot, u64 deadline)
{
	struct htw_table2_slot *s = &tb->slots[slot];
	u64 seq = READ_ONCE(s->seq), gen = (seq >> 1) + 1, old;
	bool need = !(seq & HTW_TABLE2_ARMED) ||
		    deadline < s->deadline_ns[(gen - 1) & 1];

	WRITE_ONCE(s->deadline_ns[gen & 1], deadline);
	if (need && !READ_ONCE(s->queued))
		htw_tb2_submit(tb, slot);
	old = xchg(&s->seq, gen << 1 | HTW_TABLE2_ARMED);
	if (!(old & HTW_TABLE2_ARMED))
		need = true;
	if (need && !READ_ONCE(s->queued)) {
		htw_tb2_submit(tb, slot);
		/* The submission before the read of next_wakeup_ns. */
		smp_mb();
	}
	return gen;
}

/* Cancel @slot by the protocol: true if its arming was cancelled. */
static bool htw_tb2_cancel(struct htw_tb2 *tb, u32 slot)
{
	struct htw_table2_slot *s = &tb->slots[slot];
	u64 gen = READ_ONCE(s->seq) >> 1;

	return xchg(&s->seq, (gen + 1) << 1) & HTW_TABLE2_ARMED;
}

static u32 htw_tb2_at(struct htw_tb2 *tb, u64 now)
{
	u32 before = READ_ONCE(tb->hdr->cq_tail);

	htw_t_at(tb->w, now);
	/* The tail before the records, as a consumer must. */
	return smp_load_acquire(&tb->hdr->cq_tail) - before;
}

static struct htw_table2_cqe htw_tb2_take(struct htw_tb2 *tb)
{
	struct htw_table2_cqe e = tb->cq[tb->cq_head & tb->hdr->cq_mask];

	/* Copied, then consumed: the kernel may write the entry again. */
	smp_store_release(&tb->hdr->cq_head, ++tb->cq_head);
	return e;
}

static void htw_table2_fires_with_its_generation(struct kunit *test)
{
	struct htw_table2_cqe e;
	struct htw_tb2 tb;
	u64 gen;

	htw_tb2_new(test, &tb, 8);
	gen = htw_tb2_arm(&tb, 3, T0 + 5 * MS + 1);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.slots[3].queued, 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 6 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 6 * MS), 1);
	e = htw_tb2_take(&tb);
	KUNIT_EXPECT_EQ(test, e.slot, 3);
	KUNIT_EXPECT_EQ(test, e.gen, gen);
	KUNIT_EXPECT_EQ(test, e.flags, 0);
	/* Fired: disarmed, the generation kept; a cancel finds it so. */
	KUNIT_EXPECT_EQ(test, tb.slots[3].seq, gen << 1);
	KUNIT_EXPECT_FALSE(test, htw_tb2_cancel(&tb, 3));
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
}

/* The racing user space of the ABA case: cancel, then arm again. */
static struct htw_tb2 *htw_aba_tb;
static u64 htw_aba_gen;
static bool htw_aba_cancelled;

static void htw_aba_cancel_and_rearm(struct htw_table2_slot *slot)
{
	u32 n = slot - htw_aba_tb->slots;
	u64 deadline = slot->deadline_ns[(slot->seq >> 1) & 1];

	kunit_deactivate_static_stub(kunit_get_current_test(), htw_table2_claim_race);
	htw_aba_cancelled = htw_tb2_cancel(htw_aba_tb, n);
	htw_aba_gen = htw_tb2_arm(htw_aba_tb, n, deadline);
}

static void htw_table2_claim_loses_to_cancel_and_rearm(struct kunit *test)
{
	struct htw_table2_cqe e;
	struct htw_tb2 tb;
	u64 first, d = T0 + 2 * MS;
	u32 n;

	htw_tb2_new(test, &tb, 4);
	first = htw_tb2_arm(&tb, 1, d);
	KUNIT_ASSERT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	htw_aba_tb = &tb;
	htw_aba_cancelled = false;
	kunit_activate_static_stub(test, htw_table2_claim_race, htw_aba_cancel_and_rearm);
	n = htw_tb2_at(&tb, d);
	/* User space was told the first arming is cancelled. */
	KUNIT_EXPECT_TRUE(test, htw_aba_cancelled);
	KUNIT_EXPECT_EQ(test, htw_aba_gen, first + 2);
	/* The new arming was submitted again (it found the slot not armed). */
	KUNIT_EXPECT_EQ(test, tb.pushes, 2);
	/* The claim of the first failed: its record never comes. */
	n += htw_tb2_at(&tb, d + MS);
	n += htw_tb2_at(&tb, d + 2 * MS);
	KUNIT_ASSERT_EQ(test, n, 1);
	e = htw_tb2_take(&tb);
	KUNIT_EXPECT_EQ(test, e.slot, 1);
	KUNIT_EXPECT_EQ(test, e.gen, htw_aba_gen);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, d + 10 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->cq_tail, 1);
}

/* Submitted once until taken in; a later move pushes nothing. */
static void htw_table2_queued_once(struct kunit *test)
{
	struct htw_tb2 tb;

	htw_tb2_new(test, &tb, 8);
	htw_tb2_arm(&tb, 5, T0 + 10 * MS);
	/* Earlier, but still queued: no second submission. */
	htw_tb2_arm(&tb, 5, T0 + 3 * MS);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.slots[5].queued, 0);
	/* Later: nothing to submit; the kernel moves it at the old tick. */
	htw_tb2_arm(&tb, 5, T0 + 8 * MS);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 3 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 7 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 8 * MS), 1);
	/* Cancelled before intake: the kernel reads it once, writes nothing. */
	htw_tb2_arm(&tb, 6, T0 + 9 * MS);
	KUNIT_EXPECT_TRUE(test, htw_tb2_cancel(&tb, 6));
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, htw_tb2_at(&tb, T0 + 20 * MS), 0);
}

/* 2048 slots due at one tick, a ring of 256: every record once. */
static void htw_table2_small_ring_delivers_all_once(struct kunit *test)
{
	const u32 n = 2048;
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(n) * sizeof(long),
					    GFP_KERNEL);
	u64 now = T0 + MS, *gen = kunit_kcalloc(test, n, sizeof(*gen), GFP_KERNEL);
	struct htw_tb2 tb;
	u32 i, got = 0, ring;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, gen);
	htw_tb2_new(test, &tb, n);
	ring = tb.hdr->cq_mask + 1;
	KUNIT_EXPECT_EQ(test, ring, 256);
	for (i = 0; i < n; i++)
		gen[i] = htw_tb2_arm(&tb, i, T0 + MS);
	while (tb.hdr->sq_head != n)
		KUNIT_ASSERT_GT(test, htw_wheel_table_enter(tb.w), 0);
	for (i = 0; i < 200 && got < n; i++) {
		htw_tb2_at(&tb, now);
		/* The tail before the records, as a consumer must. */
		while (tb.cq_head != smp_load_acquire(&tb.hdr->cq_tail)) {
			struct htw_table2_cqe e = htw_tb2_take(&tb);

			KUNIT_ASSERT_LT(test, e.slot, n);
			KUNIT_EXPECT_EQ(test, e.gen, gen[e.slot]);
			KUNIT_EXPECT_FALSE(test, test_and_set_bit(e.slot, seen));
			got++;
		}
		htw_wheel_table_room_made(tb.w);
		now += MS;
	}
	KUNIT_EXPECT_EQ(test, got, n);
	KUNIT_EXPECT_GT(test, tb.hdr->cq_waits, 0);
}

static struct kunit_case htwheel_table2_cases[] = {
	KUNIT_CASE(htw_table2_fires_with_its_generation),
	KUNIT_CASE(htw_table2_claim_loses_to_cancel_and_rearm),
	KUNIT_CASE(htw_table2_queued_once),
	KUNIT_CASE(htw_table2_small_ring_delivers_all_once),
	{}
};

static struct kunit_suite htwheel_table2_suite = {
	.name = "htwheel_table2",
	.suite_init = htw_t_high_res,
	.test_cases = htwheel_table2_cases,
};

kunit_test_suite(htwheel_table2_suite);
