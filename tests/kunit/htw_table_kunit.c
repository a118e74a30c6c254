// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the timer table (htw_table.c), on
 * manual-clock wheels whose shared memory the suite writes as user space
 * would, by the uapi header's steps.
 *
 * - htwheel_table: a submitted slot fires at its tick with its generation
 *   and is disarmed by the claim; a later arming, not submitted, is read
 *   when the old position comes due and fires then, with no record
 *   before; a cancelled slot is dropped; an earlier arming, submitted,
 *   moves it; the published next wake-up follows the wheel's arming.
 * - htwheel_table2: a record carries the generation that fired; the claim
 *   loses to a cancel and re-arm at the same deadline (the ABA a claim by
 *   the deadline alone fell to); a slot is submitted once until taken in;
 *   a ring of 256 delivers 2048 due slots once each.
 * - htwheel_table_race: user space's arm or cancel between the kernel's
 *   read of a due arming and its claim wins: no record of that arming,
 *   and the later one fires later.
 * - htwheel_table_bounds: a run takes at most a quarter batch of
 *   submissions and visits HTW_TABLE_RUN_SLOTS slots; a tail more than a
 *   ring ahead and slot numbers out of range are counted and skipped; a
 *   full completion ring makes due slots wait, each read again when there
 *   is room, none lost or doubled.
 */
#include <kunit/test.h>
#include <kunit/test-bug.h>
#include <linux/sched/signal.h>

#include "htw_kunit.h"
#include "htw_table.h"

#define T0	(1000 * MS)

struct htw_tb {
	struct htw_wheel *w;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	u32 *sq;
	struct htw_table2_cqe *cq;
	u32 cq_head;
	u32 pushes;		/* submissions written */
};

static void htw_tb_new(struct kunit *test, struct htw_tb *tb, u32 entries)
{
	struct htw_geometry geo = htw_t_geo(MS, 64, entries);
	struct htw_table2_setup ts;
	void *mem;

	tb->w = htw_wheel_create_table(&geo, htw_t_clock(test, T0), NULL, NULL, entries, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(tb->w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action,
							tb->w), 0);
	htw_table_layout_for(entries, &ts);
	mem = htw_table_memory(tb->w);
	tb->hdr = mem;
	tb->slots = mem + ts.slots_off;
	tb->sq = mem + ts.sq_off;
	tb->cq = mem + ts.cq_off;
	tb->cq_head = 0;
	tb->pushes = 0;
}

static void htw_tb_submit(struct htw_tb *tb, u32 slot)
{
	u32 tail = tb->hdr->sq_tail;

	WRITE_ONCE(tb->slots[slot].queued, 1);
	tb->sq[tail & tb->hdr->sq_mask] = slot;
	/* The entry before the tail, as a producer must. */
	smp_store_release(&tb->hdr->sq_tail, tail + 1);
	tb->pushes++;
}

/*
 * Arm or move @slot to @deadline by the uapi header's steps (the doorbell
 * left to the test); returns the new generation.
 */
static u64 htw_tb_arm(struct htw_tb *tb, u32 slot, u64 deadline)
{
	struct htw_table2_slot *s = &tb->slots[slot];
	u64 seq = READ_ONCE(s->seq), gen = (seq >> 1) + 1, old;
	bool need = !(seq & HTW_TABLE2_ARMED) ||
		    deadline < s->deadline_ns[(gen - 1) & 1];

	WRITE_ONCE(s->deadline_ns[gen & 1], deadline);
	if (need && !READ_ONCE(s->queued))
		htw_tb_submit(tb, slot);
	old = xchg(&s->seq, gen << 1 | HTW_TABLE2_ARMED);
	if (!(old & HTW_TABLE2_ARMED) && !READ_ONCE(s->queued))
		htw_tb_submit(tb, slot);
	return gen;
}

/* Cancel @slot: true if its arming was cancelled. */
static bool htw_tb_cancel(struct htw_tb *tb, u32 slot)
{
	u64 gen = (READ_ONCE(tb->slots[slot].seq) >> 1) + 1;

	return xchg(&tb->slots[slot].seq, gen << 1) & HTW_TABLE2_ARMED;
}

/* A table of @n slots, each armed at @deadline and taken in. */
static void htw_tb_new_armed(struct kunit *test, struct htw_tb *tb, u32 n,
			     u64 deadline)
{
	u32 i;

	htw_tb_new(test, tb, n);
	for (i = 0; i < n; i++)
		htw_tb_arm(tb, i, deadline);
	while (tb->hdr->sq_head != n)
		KUNIT_ASSERT_GT(test, htw_wheel_table_enter(tb->w), 0);
}

/* The clock to @now and the run there; returns the records it wrote. */
static u32 htw_tb_at(struct htw_tb *tb, u64 now)
{
	u32 before = READ_ONCE(tb->hdr->cq_tail);

	htw_t_at(tb->w, now);
	/* The tail before the records, as a consumer must. */
	return smp_load_acquire(&tb->hdr->cq_tail) - before;
}

static struct htw_table2_cqe htw_tb_take(struct htw_tb *tb)
{
	struct htw_table2_cqe e = tb->cq[tb->cq_head & tb->hdr->cq_mask];

	/* Copied, then consumed: the kernel may write the entry again. */
	smp_store_release(&tb->hdr->cq_head, ++tb->cq_head);
	return e;
}

/*
 * Records from the run at @now and, reading them as they come (the ring
 * is an eighth of the table), the ticks after it; at most 1000 ticks.
 * Returns how many came, up to @n.
 */
static u32 htw_tb_fire_all(struct htw_tb *tb, u64 now, u32 n)
{
	u32 got = htw_tb_at(tb, now), i;

	for (i = 0; i < 1000 && got < n; i++) {
		while (tb->cq_head != READ_ONCE(tb->hdr->cq_tail))
			htw_tb_take(tb);
		htw_wheel_table_room_made(tb->w);
		now += MS;
		got += htw_tb_at(tb, now);
	}
	return got;
}

static void htw_table_fires_at_its_tick(struct kunit *test)
{
	struct htw_table2_cqe e;
	struct htw_tb tb;
	u64 d = T0 + 5 * MS + 1;	/* tick 6 is the first to start after it */
	u64 gen;

	htw_tb_new(test, &tb, 8);
	gen = htw_tb_arm(&tb, 2, d);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_head, 1);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 6 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 6 * MS), 1);
	e = htw_tb_take(&tb);
	KUNIT_EXPECT_EQ(test, e.slot, 2);
	KUNIT_EXPECT_EQ(test, e.gen, gen);
	KUNIT_EXPECT_EQ(test, tb.slots[2].seq, gen << 1);
	/* Idle again: nothing planned, nothing more fires. */
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 100 * MS), 0);
}

static void htw_table_later_store_fires_later(struct kunit *test)
{
	struct htw_tb tb;
	u64 gen;

	htw_tb_new(test, &tb, 8);
	htw_tb_arm(&tb, 1, T0 + 5 * MS);
	htw_wheel_table_enter(tb.w);
	/* Later, by the exchange alone: nothing submitted. */
	gen = htw_tb_arm(&tb, 1, T0 + 20 * MS);
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_tail, 1);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	/* Re-read and re-placed: the kernel now wakes for the new tick. */
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 20 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 19 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 20 * MS), 1);
	KUNIT_EXPECT_EQ(test, htw_tb_take(&tb).gen, gen);
}

static void htw_table_zero_drops_and_earlier_moves(struct kunit *test)
{
	struct htw_tb tb;
	u64 gen;

	htw_tb_new(test, &tb, 8);
	htw_tb_arm(&tb, 0, T0 + 5 * MS);
	htw_tb_arm(&tb, 1, T0 + 50 * MS);
	htw_wheel_table_enter(tb.w);
	/* Cancelled: dropped when its position comes due. */
	KUNIT_EXPECT_TRUE(test, htw_tb_cancel(&tb, 0));
	/* Earlier, submitted: it moves at once. */
	gen = htw_tb_arm(&tb, 1, T0 + 8 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 5 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 8 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 8 * MS), 1);
	KUNIT_EXPECT_EQ(test, htw_tb_take(&tb).gen, gen);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 60 * MS), 0);
}

static struct kunit_case htw_table_cases[] = {
	KUNIT_CASE(htw_table_fires_at_its_tick),
	KUNIT_CASE(htw_table_later_store_fires_later),
	KUNIT_CASE(htw_table_zero_drops_and_earlier_moves),
	{}
};

static struct kunit_suite htw_table_suite = {
	.name = "htwheel_table",
	.suite_init = htw_t_high_res,
	.test_cases = htw_table_cases,
};

/*
 * ---- races at the claim: user space's arm or cancel, played by a static
 * stub of htw_table_claim_race() between the claim's read and its
 * compare-and-exchange ----
 */

static struct htw_tb *htw_race_tb;
static u64 htw_race_value, htw_race_gen;
static unsigned int htw_race_calls;

/* Arm again at htw_race_value, or cancel for 0; once. */
static void htw_race_store(struct htw_table2_slot *slot)
{
	u32 n = slot - htw_race_tb->slots;

	if (htw_race_value)
		htw_race_gen = htw_tb_arm(htw_race_tb, n, htw_race_value);
	else
		htw_tb_cancel(htw_race_tb, n);
	htw_race_calls++;
	/* Once: the claim after it must see the slot as user space left it. */
	kunit_deactivate_static_stub(kunit_get_current_test(), htw_table_claim_race);
}

static void htw_race_stub(struct kunit *test, struct htw_tb *tb, u64 value)
{
	htw_race_tb = tb;
	htw_race_value = value;
	htw_race_calls = 0;
	kunit_activate_static_stub(test, htw_table_claim_race, htw_race_store);
}

static void htw_table_race_later_wins(struct kunit *test)
{
	struct htw_tb tb;

	htw_tb_new(test, &tb, 4);
	htw_tb_arm(&tb, 3, T0 + 5 * MS);
	htw_wheel_table_enter(tb.w);
	htw_race_stub(test, &tb, T0 + 30 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_race_calls, 1);
	KUNIT_EXPECT_TRUE(test, tb.slots[3].seq & HTW_TABLE2_ARMED);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 29 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 30 * MS), 1);
	KUNIT_EXPECT_EQ(test, htw_tb_take(&tb).gen, htw_race_gen);
}

static void htw_table_race_cancel_wins(struct kunit *test)
{
	struct htw_tb tb;

	htw_tb_new(test, &tb, 4);
	htw_tb_arm(&tb, 0, T0 + 5 * MS);
	htw_wheel_table_enter(tb.w);
	htw_race_stub(test, &tb, 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_race_calls, 1);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 500 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->cq_tail, 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
}

/* User space moving a due slot 1 ms later each time the kernel would fire it. */
static void htw_race_move_on(struct htw_table2_slot *slot)
{
	u32 n = slot - htw_race_tb->slots;
	u64 seq = READ_ONCE(slot->seq);

	htw_race_gen = htw_tb_arm(htw_race_tb, n,
				  slot->deadline_ns[(seq >> 1) & 1] + MS);
	htw_race_calls++;
}

/*
 * A run moves a slot at most once.  User space moves slot 2 1 ms later
 * just as each visit would fire it; a run of 10 ticks moves it once
 * (tick 1 to 2), and at tick 2 sends it after the run (tick 11) rather
 * than follow it to the run's end; the next run fires it.
 */
static void htw_table_run_moves_a_slot_once(struct kunit *test)
{
	struct htw_table_work work;
	struct htw_table2_cqe e;
	struct htw_tb tb;

	htw_tb_new(test, &tb, 4);
	htw_tb_arm(&tb, 2, T0 + MS);
	htw_wheel_table_enter(tb.w);
	htw_race_tb = &tb;
	htw_race_calls = 0;
	kunit_activate_static_stub(test, htw_table_claim_race, htw_race_move_on);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 10 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_race_calls, 2);
	KUNIT_EXPECT_EQ(test, READ_ONCE(tb.w->armed_tick), 11);
	htw_table_work(tb.w, &work);
	KUNIT_EXPECT_EQ(test, work.replaced, 2);
	kunit_deactivate_static_stub(test, htw_table_claim_race);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 11 * MS), 1);
	e = htw_tb_take(&tb);
	KUNIT_EXPECT_EQ(test, e.gen, htw_race_gen);
	KUNIT_EXPECT_EQ(test, tb.slots[2].deadline_ns[e.gen & 1], T0 + 3 * MS);
}

static struct kunit_case htw_table_race_cases[] = {
	KUNIT_CASE(htw_table_run_moves_a_slot_once),
	KUNIT_CASE(htw_table_race_later_wins),
	KUNIT_CASE(htw_table_race_cancel_wins),
	{}
};

static struct kunit_suite htw_table_race_suite = {
	.name = "htwheel_table_race",
	.suite_init = htw_t_high_res,
	.test_cases = htw_table_race_cases,
};

/* ---- bounded work and what user space cannot break ---- */

static void htw_table_batches_submissions(struct kunit *test)
{
	struct htw_tb tb;
	u32 i, n = 4 * HTW_BATCH;

	htw_tb_new(test, &tb, n);
	for (i = 0; i < n; i++)
		htw_tb_arm(&tb, i, T0 + 10 * MS);
	htw_t_set_now(tb.w, T0);
	KUNIT_EXPECT_TRUE(test, htw_run_batch(tb.w, false));
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_head, HTW_BATCH / 4);
	/* The rest is the next tick's; the kernel says so. */
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), n - HTW_BATCH / 4);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 9 * MS), 0);
	/* Firing goes in batches too; the ring takes an eighth at a time. */
	KUNIT_EXPECT_EQ(test, htw_tb_fire_all(&tb, T0 + 10 * MS, n), n);
}

static void htw_table_skips_what_names_nothing(struct kunit *test)
{
	struct htw_tb tb;
	u64 gen;

	htw_tb_new(test, &tb, 4);
	tb.sq[0] = 4;
	tb.sq[1] = U32_MAX;
	/* The entries before the tail, as a producer must. */
	smp_store_release(&tb.hdr->sq_tail, 2);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 2);
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_invalid, 2);
	/* A tail no producer could have written: skipped to, counted once. */
	/* No entries: a tail alone, far ahead. */
	smp_store_release(&tb.hdr->sq_tail, 2 + (1U << 31));
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_head, 2 + (1U << 31));
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_invalid, 3);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
	/* User space writing the kernel's fields changes nothing it reads. */
	tb.hdr->sq_head = 12345;
	tb.hdr->cq_tail = 999;
	gen = htw_tb_arm(&tb, 1, T0 + 2 * MS);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	htw_t_at(tb.w, T0 + 2 * MS);
	KUNIT_EXPECT_EQ(test, tb.hdr->cq_tail, 1);
	KUNIT_EXPECT_EQ(test, tb.cq[0].gen, gen);
}

static void htw_table_full_ring_waits(struct kunit *test)
{
	struct htw_table2_cqe e;
	u32 seen[4] = {}, i;
	u64 gen[4];
	struct htw_tb tb;

	htw_tb_new(test, &tb, 4);
	KUNIT_ASSERT_EQ(test, tb.hdr->cq_mask, 3);
	for (i = 0; i < 4; i++)
		htw_tb_arm(&tb, i, T0 + 2 * MS);
	htw_wheel_table_enter(tb.w);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 2 * MS), 4);
	/* Unread; armed again, due: no room, so they wait. */
	for (i = 0; i < 4; i++)
		gen[i] = htw_tb_arm(&tb, i, T0 + 3 * MS);
	htw_wheel_table_enter(tb.w);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 3 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->cq_waits, 4);
	/*
	 * A look 1 ms later, then 2, 4, ... while the consumer makes no
	 * room, up to HTW_TABLE_ROOM_WAIT_MAX_NS: not a run a tick.
	 */
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 4 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 4 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 6 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 4 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 8 * MS);
	for (i = 0; i < 10; i++)
		htw_tb_at(&tb, T0 + 4 * MS);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns,
			T0 + 4 * MS + HTW_TABLE_ROOM_WAIT_MAX_NS);
	/* The consumer makes room and says so: the next tick. */
	KUNIT_EXPECT_FALSE(test, htw_table_room_made(tb.w));
	htw_tb_take(&tb);
	KUNIT_EXPECT_TRUE(test, htw_table_room_made(tb.w));
	htw_wheel_table_room_made(tb.w);
	KUNIT_EXPECT_EQ(test, READ_ONCE(tb.w->armed_tick), 5);
	tb.cq_head--;
	WRITE_ONCE(tb.hdr->cq_head, tb.cq_head);	/* not read after all */
	/* Room for two: two leave the list, read again and fire. */
	htw_tb_take(&tb);
	htw_tb_take(&tb);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 2);
	htw_tb_take(&tb);
	htw_tb_take(&tb);
	/* One of the others was cancelled meanwhile: it is dropped. */
	for (i = 0; i < 4; i++)
		if (tb.slots[i].seq & HTW_TABLE2_ARMED)
			break;
	KUNIT_ASSERT_LT(test, i, 4);
	KUNIT_EXPECT_TRUE(test, htw_tb_cancel(&tb, i));
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 6 * MS), 1);
	for (i = 0; i < 3; i++) {
		e = htw_tb_take(&tb);
		KUNIT_ASSERT_LT(test, e.slot, 4);
		seen[e.slot]++;
		KUNIT_EXPECT_EQ(test, e.gen, gen[e.slot]);
	}
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_LE(test, seen[i], 1);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 100 * MS), 0);
}

/*
 * The doorbell at a pending signal: it returns -EINTR before taking
 * anything in, as read() does, and the submission stays for later.
 */
static void htw_table_doorbell_signal(struct kunit *test)
{
	struct htw_tb tb;

	htw_tb_new(test, &tb, 4);
	htw_tb_arm(&tb, 1, T0 + 2 * MS);
	allow_signal(SIGUSR1);
	send_sig(SIGUSR1, current, 1);
	KUNIT_EXPECT_TRUE(test, signal_pending(current));
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), -EINTR);
	flush_signals(current);
	disallow_signal(SIGUSR1);
	KUNIT_EXPECT_EQ(test, tb.hdr->sq_head, 0);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
}

/*
 * A run handles HTW_TABLE_RUN_SLOTS slots at most: of twice that many due
 * at once, the first run visits that many (the completion ring, an eighth
 * of the table, takes its fill and the rest wait for room) and plans the
 * next tick; as the consumer reads, every slot fires once.
 */
static void htw_table_run_budget(struct kunit *test)
{
	const u32 n = 2 * HTW_TABLE_RUN_SLOTS;
	struct htw_table_work work;
	u32 ring, got;
	struct htw_tb tb;
	u64 now = T0 + MS;

	htw_tb_new_armed(test, &tb, n, T0 + MS);
	ring = tb.hdr->cq_mask + 1;
	KUNIT_EXPECT_EQ(test, ring, n / 8);
	got = htw_tb_at(&tb, now);
	KUNIT_EXPECT_EQ(test, got, ring);
	htw_table_work(tb.w, &work);
	KUNIT_EXPECT_EQ(test, work.budget_stops, 1);
	KUNIT_EXPECT_EQ(test, work.fired + work.room_waits, HTW_TABLE_RUN_SLOTS);
	KUNIT_EXPECT_EQ(test, READ_ONCE(tb.w->armed_tick), 2);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 2 * MS);
	KUNIT_EXPECT_EQ(test, got + htw_tb_fire_all(&tb, now + MS, n - got), n);
	htw_table_work(tb.w, &work);
	KUNIT_EXPECT_EQ(test, work.fired, n);
}

/*
 * A run moves HTW_TABLE_RUN_MOVES slots later at most; a program that
 * moved four times that many gets them moved over four runs, the next one
 * a backoff later each time (1, 2, 4 ms), not run after run.
 */
static void htw_table_run_moves_budget(struct kunit *test)
{
	const u32 n = 4 * HTW_TABLE_RUN_MOVES;
	struct htw_table_work work;
	u64 at[] = { 1, 2, 4, 8 }, next[] = { 2, 4, 8, 50 };
	struct htw_tb tb;
	u32 i;

	htw_tb_new_armed(test, &tb, n, T0 + MS);
	/* Every slot armed again later, nothing submitted: the lazy re-arm. */
	for (i = 0; i < n; i++)
		htw_tb_arm(&tb, i, T0 + 50 * MS);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + at[i] * MS), 0);
		htw_table_work(tb.w, &work);
		KUNIT_EXPECT_EQ(test, work.replaced, (i + 1) * HTW_TABLE_RUN_MOVES);
		KUNIT_EXPECT_EQ(test, READ_ONCE(tb.w->armed_tick), next[i]);
	}
	KUNIT_EXPECT_EQ(test, work.budget_stops, 3);
	KUNIT_EXPECT_EQ(test, htw_tb_fire_all(&tb, T0 + 50 * MS, n), n);
}

/*
 * Slots armed far away come down the wheel's levels as it turns: that
 * cascade is the wheel's work, bounded by the run's slots, not a move of
 * a deadline user space stored.  Counted as moves, a table of a million
 * slots armed seconds away spent its runs at HTW_TABLE_RUN_MOVES and its
 * backoff, and fired nothing for tens of seconds.
 */
static void htw_table_cascades_are_not_moves(struct kunit *test)
{
	const u32 n = 4 * HTW_TABLE_RUN_MOVES;
	struct htw_table_work work;
	struct htw_tb tb;

	htw_tb_new_armed(test, &tb, n, T0 + 10000 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5000 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 9990 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_fire_all(&tb, T0 + 10000 * MS, n), n);
	htw_table_work(tb.w, &work);
	KUNIT_EXPECT_EQ(test, work.replaced, 0);
	KUNIT_EXPECT_EQ(test, work.budget_stops, 0);
}

static struct kunit_case htw_table_bounds_cases[] = {
	KUNIT_CASE(htw_table_run_moves_budget),
	KUNIT_CASE(htw_table_cascades_are_not_moves),
	KUNIT_CASE(htw_table_run_budget),
	KUNIT_CASE(htw_table_doorbell_signal),
	KUNIT_CASE(htw_table_batches_submissions),
	KUNIT_CASE(htw_table_skips_what_names_nothing),
	KUNIT_CASE(htw_table_full_ring_waits),
	{}
};

static struct kunit_suite htw_table_bounds_suite = {
	.name = "htwheel_table_bounds",
	.suite_init = htw_t_high_res,
	.test_cases = htw_table_bounds_cases,
};

/*
 * ---- htwheel_table2: the protocol's generations: a record carries the
 * generation; the claim loses to a cancel and re-arm at the same deadline
 * (the ABA of a claim by the deadline alone); a slot is submitted once
 * until taken in; the smallest completion ring delivers every record
 * once ----
 */

static void htw_table2_fires_with_its_generation(struct kunit *test)
{
	struct htw_table2_cqe e;
	struct htw_tb tb;
	u64 gen;

	htw_tb_new(test, &tb, 8);
	gen = htw_tb_arm(&tb, 3, T0 + 5 * MS + 1);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.slots[3].queued, 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, T0 + 6 * MS);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 5 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 6 * MS), 1);
	e = htw_tb_take(&tb);
	KUNIT_EXPECT_EQ(test, e.slot, 3);
	KUNIT_EXPECT_EQ(test, e.gen, gen);
	KUNIT_EXPECT_EQ(test, e.flags, 0);
	/* Fired: disarmed, the generation kept; a cancel finds it so. */
	KUNIT_EXPECT_EQ(test, tb.slots[3].seq, gen << 1);
	KUNIT_EXPECT_FALSE(test, htw_tb_cancel(&tb, 3));
	KUNIT_EXPECT_EQ(test, tb.hdr->next_wakeup_ns, U64_MAX);
}

/* The racing user space of the ABA case: cancel, then arm again. */
static struct htw_tb *htw_aba_tb;
static u64 htw_aba_gen;
static bool htw_aba_cancelled;

static void htw_aba_cancel_and_rearm(struct htw_table2_slot *slot)
{
	u32 n = slot - htw_aba_tb->slots;
	u64 deadline = slot->deadline_ns[(slot->seq >> 1) & 1];

	kunit_deactivate_static_stub(kunit_get_current_test(), htw_table_claim_race);
	htw_aba_cancelled = htw_tb_cancel(htw_aba_tb, n);
	htw_aba_gen = htw_tb_arm(htw_aba_tb, n, deadline);
}

static void htw_table2_claim_loses_to_cancel_and_rearm(struct kunit *test)
{
	struct htw_table2_cqe e;
	struct htw_tb tb;
	u64 first, d = T0 + 2 * MS;
	u32 n;

	htw_tb_new(test, &tb, 4);
	first = htw_tb_arm(&tb, 1, d);
	KUNIT_ASSERT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	htw_aba_tb = &tb;
	htw_aba_cancelled = false;
	kunit_activate_static_stub(test, htw_table_claim_race, htw_aba_cancel_and_rearm);
	n = htw_tb_at(&tb, d);
	/* User space was told the first arming is cancelled. */
	KUNIT_EXPECT_TRUE(test, htw_aba_cancelled);
	KUNIT_EXPECT_EQ(test, htw_aba_gen, first + 2);
	/* The new arming was submitted again (it found the slot not armed). */
	KUNIT_EXPECT_EQ(test, tb.pushes, 2);
	/* The claim of the first failed: its record never comes. */
	n += htw_tb_at(&tb, d + MS);
	n += htw_tb_at(&tb, d + 2 * MS);
	KUNIT_ASSERT_EQ(test, n, 1);
	e = htw_tb_take(&tb);
	KUNIT_EXPECT_EQ(test, e.slot, 1);
	KUNIT_EXPECT_EQ(test, e.gen, htw_aba_gen);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, d + 10 * MS), 0);
	KUNIT_EXPECT_EQ(test, tb.hdr->cq_tail, 1);
}

/* Submitted once until taken in; a later move pushes nothing. */
static void htw_table2_queued_once(struct kunit *test)
{
	struct htw_tb tb;

	htw_tb_new(test, &tb, 8);
	htw_tb_arm(&tb, 5, T0 + 10 * MS);
	/* Earlier, but still queued: no second submission. */
	htw_tb_arm(&tb, 5, T0 + 3 * MS);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, tb.slots[5].queued, 0);
	/* Later: nothing to submit; the kernel moves it at the old tick. */
	htw_tb_arm(&tb, 5, T0 + 8 * MS);
	KUNIT_EXPECT_EQ(test, tb.pushes, 1);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 3 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 7 * MS), 0);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 8 * MS), 1);
	/* Cancelled before intake: the kernel reads it once, writes nothing. */
	htw_tb_arm(&tb, 6, T0 + 9 * MS);
	KUNIT_EXPECT_TRUE(test, htw_tb_cancel(&tb, 6));
	KUNIT_EXPECT_EQ(test, htw_wheel_table_enter(tb.w), 1);
	KUNIT_EXPECT_EQ(test, htw_tb_at(&tb, T0 + 20 * MS), 0);
}

/* 2048 slots due at one tick, a ring of 256: every record once. */
static void htw_table2_small_ring_delivers_all_once(struct kunit *test)
{
	const u32 n = 2048;
	unsigned long *seen = kunit_kzalloc(test, BITS_TO_LONGS(n) * sizeof(long),
					    GFP_KERNEL);
	u64 now = T0 + MS, *gen = kunit_kcalloc(test, n, sizeof(*gen), GFP_KERNEL);
	struct htw_tb tb;
	u32 i, got = 0, ring;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, gen);
	htw_tb_new(test, &tb, n);
	ring = tb.hdr->cq_mask + 1;
	KUNIT_EXPECT_EQ(test, ring, 256);
	for (i = 0; i < n; i++)
		gen[i] = htw_tb_arm(&tb, i, T0 + MS);
	while (tb.hdr->sq_head != n)
		KUNIT_ASSERT_GT(test, htw_wheel_table_enter(tb.w), 0);
	for (i = 0; i < 200 && got < n; i++) {
		htw_tb_at(&tb, now);
		/* The tail before the records, as a consumer must. */
		while (tb.cq_head != smp_load_acquire(&tb.hdr->cq_tail)) {
			struct htw_table2_cqe e = htw_tb_take(&tb);

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

kunit_test_suites(&htw_table_suite, &htwheel_table2_suite, &htw_table_race_suite,
		  &htw_table_bounds_suite);
