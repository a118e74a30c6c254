// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel table: the slots user space arms by writing memory, the two
 * rings, and what the tick does with them (htw_table.h).
 *
 * Each slot has a timer of the wheel's own table, taken when the table is
 * made: slot s is the s-th id, so nothing is allocated afterwards and the
 * timer of a slot is found with a shift and a mask.  A slot's timer keeps
 * its slot number in ->cookie (a record carries the generation the visit
 * claimed).  It is HTW_FREE while the kernel does not track the
 * slot, HTW_PENDING in a bucket at the tick its deadline was last read
 * for, HTW_TRANSIT while a visit holds it, and HTW_READY while it waits
 * for room in the completion ring; only tick_lock's holder moves it, since
 * user space reaches it through the rings alone.
 *
 * A full completion ring costs a look a backoff apart (1 ms doubling to
 * 128 ms, htw_table_room_tick()), or at the next tick once the consumer
 * made room and said so: the slots that came due meanwhile wait in one
 * list, and each run moves as many as there is room for, reading each
 * slot again then (a waiting slot's submission needs nothing more:
 * whatever it says is read when the slot leaves the list).
 *
 * What user space can do to the kernel through the shared pages: name
 * slots in the submission ring (checked against the table's size), write
 * generations, deadlines and queued flags (each read once and used as a
 * value; a generation changed under a claim makes the claim fail), and
 * move the ring indices (the kernel keeps its own copy of each index it
 * writes, and takes in at most a ring's worth, half a batch per run,
 * whatever the tail says).  None of it reaches a pointer or a link.
 */
#include <linux/atomic.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "htw_compat.h"
#include "htw_internal.h"
#include "htw_table.h"
#include "htw_timens.h"
#include "htw_trace.h"

/*
 * The mapping: the header, then each part from a 64-byte boundary, so
 * the lines user space writes are not the ones the kernel writes.
 */
#define HTW_TABLE_ALIGN		64

/**
 * struct htw_table - a wheel's shared table, in kernel memory
 * @mem:         the mapping's pages (__vmalloc(), charged to the memcg)
 * @size:        bytes of @mem, whole pages
 * @hdr:         the header, at the start of @mem
 * @slots:       the slots, in @mem
 * @sq:          the submission ring, in @mem
 * @cq:          the completion ring, in @mem
 * @entries:     slots; fixed
 * @sq_mask:     submission ring entries - 1; fixed
 * @cq_mask:     completion ring entries - 1; fixed
 * @offset:      the opener's time namespace on the wheel's clock; fixed
 * @sq_head:     submissions taken in; the kernel's copy, under tick_lock,
 *               READ_ONCE() by a doorbell deciding whether to run again
 * @cq_tail:     records written; the kernel's copy, under tick_lock
 * @cq_head_seen: the consumer's head at the last look, under tick_lock:
 *               the ring is read again only when this says it is full
 * @cq_published: @cq_tail as last published; WRITE_ONCE() under
 *               tick_lock, read by poll without it
 * @cq_waits:    under tick_lock, published as is
 * @sq_invalid:  under tick_lock, published as is
 * @taken:       submissions taken in; under tick_lock, READ_ONCE() outside
 * @consumed:    ring entries consumed, @taken and the ones skipped over
 *               (bad slot numbers, a tail more than a ring ahead); likewise
 * @fired:       records written; likewise
 * @waiting:     slots due while the completion ring was full, linked
 *               through ->next, first to last; HTW_READY, under tick_lock
 * @waiting_last: the last of them
 * @room_wait:   slots wait and the ring was full at the last look: a
 *               flag for poll's unlocked look, written under tick_lock
 * @room_head:   the consumer's cq_head at that look; under tick_lock,
 *               READ_ONCE() by poll
 * @room_backoff_ns: how long the next run waits for room if the consumer
 *               makes none; under tick_lock
 * @replaced:    slots a visit moved to the later deadline user space
 *               stored; under tick_lock, READ_ONCE() outside
 * @budget_stops: runs that ended at their budget; likewise
 * @move_backoff_ns: how long the next run waits after one that ended at
 *               HTW_TABLE_RUN_MOVES; 0 after a run that did not; under
 *               tick_lock
 */
struct htw_table {
	void *mem;
	size_t size;
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	u32 *sq;
	struct htw_table2_cqe *cq;
	u32 entries;
	u32 sq_mask;
	u32 cq_mask;
	s64 offset;
	u32 sq_head;
	u32 cq_tail;
	u32 cq_head_seen;
	u32 cq_published;
	u64 cq_waits;
	u64 sq_invalid;
	u64 taken;
	u64 consumed;
	u64 fired;
	struct htw_timer *waiting;
	struct htw_timer *waiting_last;
	bool room_wait;
	u32 room_head;
	u64 room_backoff_ns;
	u64 replaced;
	u64 budget_stops;
	u64 move_backoff_ns;
};

/*
 * The layout of a table: the header, slots of 32 bytes, a
 * submission ring of a u32 a slot, and a completion ring of 16-byte
 * records an eighth of that (256 at least, the submission ring's size at
 * most): due slots that find it full wait in the kernel.
 */
static void htw_table_geometry(u32 entries, struct htw_table2_setup *ts)
{
	u32 ring = roundup_pow_of_two(entries);

	memset(ts, 0, sizeof(*ts));
	ts->entries = entries;
	ts->sq_entries = ring;
	ts->cq_entries = min(ring, max(256U, ring / 8));
	ts->slots_off = ALIGN(sizeof(struct htw_table2_header), HTW_TABLE_ALIGN);
	ts->sq_off = ALIGN(ts->slots_off +
			   (u64)entries * sizeof(struct htw_table2_slot),
			   HTW_TABLE_ALIGN);
	ts->cq_off = ALIGN(ts->sq_off + (u64)ring * sizeof(u32), HTW_TABLE_ALIGN);
	ts->mmap_size = PAGE_ALIGN(ts->cq_off +
				   (u64)ts->cq_entries * sizeof(struct htw_table2_cqe));
}

void htw_table_layout_for(u32 entries, struct htw_table2_setup *out)
{
	htw_table_geometry(entries, out);
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_layout_for);

/* Kernel memory besides the mapping: the table and a timer a slot. */
static size_t htw_table_kernel_bytes(u32 entries)
{
	u64 chunks = DIV_ROUND_UP(entries, HTW_IDS_PER_CHUNK);

	return sizeof(struct htw_table) +
	       chunks * HTW_IDS_PER_CHUNK * sizeof(struct htw_timer);
}

size_t htw_table_bytes(u32 entries)
{
	struct htw_table2_setup ts;

	htw_table_geometry(entries, &ts);
	return ts.mmap_size + htw_table_kernel_bytes(entries);
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_bytes);

/* The timer of slot @slot, a number below the table's size. */
static struct htw_timer *htw_table_timer(struct htw_wheel *w, u32 slot)
{
	return htw_id_object(&w->handles,
			     htw_chunk_id(slot / HTW_IDS_PER_CHUNK,
					  slot % HTW_IDS_PER_CHUNK));
}

/* One timer per slot, in slot order, from the wheel's fresh table. */
static int htw_table_take_timers(struct htw_wheel *w, u32 entries)
{
	struct htw_timer *t;
	u64 handle;
	u32 slot;

	for (slot = 0; slot < entries; slot++) {
		t = htw_handle_get(&w->handles, &handle);
		if (IS_ERR(t))
			return PTR_ERR(t);
		if (WARN_ON_ONCE(t != htw_table_timer(w, slot)))
			return -EINVAL;
		t->cookie = slot;
		t->table_run = 0;
		WRITE_ONCE(t->where, htw_where(HTW_FREE, 0));
		if (slot % HTW_BATCH == HTW_BATCH - 1)
			cond_resched();
	}
	return 0;
}

static void htw_table_map_parts(struct htw_table *tb,
				const struct htw_table2_setup *ts)
{
	struct htw_table2_header *hdr = tb->mem;

	tb->size = ts->mmap_size;
	tb->hdr = hdr;
	tb->slots = tb->mem + ts->slots_off;
	tb->sq = tb->mem + ts->sq_off;
	tb->cq = tb->mem + ts->cq_off;
	tb->entries = ts->entries;
	tb->sq_mask = ts->sq_entries - 1;
	tb->cq_mask = ts->cq_entries - 1;
	hdr->entries = tb->entries;
	hdr->sq_mask = tb->sq_mask;
	hdr->cq_mask = tb->cq_mask;
}

int htw_table_init(struct htw_wheel *w, u32 entries, s64 offset)
{
	struct htw_table2_setup ts;
	struct htw_table *tb;
	int ret;

	might_sleep();
	BUILD_BUG_ON(sizeof(struct htw_table2_header) != 256);
	BUILD_BUG_ON(sizeof(struct htw_table2_slot) != 32);
	BUILD_BUG_ON(sizeof(struct htw_table2_cqe) != 16);
	if (!entries || entries > w->geo.max_pending)
		return -EINVAL;
	htw_table_geometry(entries, &ts);
	tb = kzalloc(sizeof(*tb), GFP_KERNEL_ACCOUNT);
	if (!tb)
		return -ENOMEM;
	tb->mem = __vmalloc(ts.mmap_size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!tb->mem) {
		kfree(tb);
		return -ENOMEM;
	}
	htw_table_map_parts(tb, &ts);
	tb->hdr->next_wakeup_ns = U64_MAX;
	tb->offset = offset;
	tb->room_backoff_ns = HTW_TABLE_ROOM_WAIT_MIN_NS;
	w->table = tb;
	/* The owner charged them all at once: no charge per timer. */
	w->table_timers = true;
	ret = htw_table_take_timers(w, entries);
	if (ret)
		htw_table_free(w);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_init);

void htw_table_free(struct htw_wheel *w)
{
	struct htw_table *tb = w->table;

	if (!tb)
		return;
	/* A mapping holds the file, so none is left when this runs. */
	vfree(tb->mem);
	kfree(tb);
	w->table = NULL;
}

int htw_table_mmap(struct htw_wheel *w, struct vm_area_struct *vma)
{
	struct htw_table *tb = w->table;
	unsigned long size = vma->vm_end - vma->vm_start, off;
	int ret;

	/* Private copies would not be the table the kernel reads. */
	if (vma->vm_pgoff || size > tb->size || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* Data, never code: nor can mprotect() make it so later. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/*
	 * A forked child gets no copy: only the process that set the table
	 * up (and its threads) drives the kernel through it.
	 */
	htw_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	htw_vm_flags_clear(vma, VM_MAYEXEC);
	for (off = 0; off < size; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(tb->mem + off));
		if (ret)
			return ret;
		if ((off >> PAGE_SHIFT) % HTW_BATCH == HTW_BATCH - 1)
			cond_resched();
	}
	return 0;
}

bool htw_table_has_completions(struct htw_wheel *w)
{
	struct htw_table *tb = w->table;

	return READ_ONCE(tb->cq_published) != READ_ONCE(tb->hdr->cq_head);
}

u64 htw_table_taken(struct htw_wheel *w)
{
	return READ_ONCE(w->table->taken);
}

void htw_table_work(struct htw_wheel *w, struct htw_table_work *out)
{
	struct htw_table *tb = w->table;

	out->taken = READ_ONCE(tb->taken);
	out->consumed = READ_ONCE(tb->consumed);
	out->fired = READ_ONCE(tb->fired);
	out->replaced = READ_ONCE(tb->replaced);
	out->budget_stops = READ_ONCE(tb->budget_stops);
	out->room_waits = READ_ONCE(tb->cq_waits);
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_work);

void htw_table_get_stats(struct htw_wheel *w, struct htw_table_stats *ts)
{
	struct htw_table_work work;
	struct htw_wheel_stats ws;

	memset(ts, 0, sizeof(*ts));
	htw_wheel_get_stats(w, &ws);
	htw_table_work(w, &work);
	ts->entries = w->table->entries;
	ts->runs = ws.tick_wakeups;
	ts->taken = work.taken;
	ts->consumed = work.consumed;
	ts->fired = work.fired;
	ts->moved = work.replaced;
	ts->budget_stops = work.budget_stops;
	ts->room_waits = work.room_waits;
}

u64 htw_table_consumed(struct htw_wheel *w)
{
	return READ_ONCE(w->table->consumed);
}

bool htw_table_more_to_take(struct htw_wheel *w, u64 consumed_before)
{
	struct htw_table *tb = w->table;

	return READ_ONCE(tb->hdr->sq_tail) != READ_ONCE(tb->sq_head) &&
	       htw_table_consumed(w) - consumed_before <= tb->sq_mask;
}

/* ---- the tick's side ---- */

/*
 * Place @t, which the caller owns, for the deadline @deadline user space
 * wrote (on its clock), as seen from tick @from, and no earlier than tick
 * @not_before; drop it for 0.  The run's end arms the hrtimer for
 * whatever it placed.
 */
static void htw_table_place(struct htw_wheel *w, struct htw_timer *t,
			    u64 deadline, u64 from, u64 not_before)
{
	if (!deadline) {
		htw_timer_set_where(t, HTW_FREE, 0);
		return;
	}
	t->deadline_ns = htw_timens_to_host(deadline, w->table->offset);
	t->expires = max(htw_grid_expiry_tick(&w->grid, t->deadline_ns, 0),
			 not_before);
	htw_wheel_place(w, t, from);
}

/*
 * A visit that finds @t not due places it again.  For the deadline it was
 * placed for, that is the wheel's own cascade to a finer level, work the
 * run's slot budget bounds.  For another, later deadline user space
 * stored, it is a move (the lazy re-arm): once a run, counted against
 * HTW_TABLE_RUN_MOVES; moved again in the same run, it waits for the tick
 * after the run's.  0 drops it.
 */
static void htw_table_move_later(struct htw_wheel *w, struct htw_timer *t,
				 u64 deadline, u64 tick)
{
	u64 not_before = 0;

	if (deadline &&
	    htw_timens_to_host(deadline, w->table->offset) != t->deadline_ns) {
		if (t->table_run == w->run_seq)
			not_before = w->run_end + 1;
		t->table_run = w->run_seq;
		w->run_moves++;
		WRITE_ONCE(w->table->replaced, w->table->replaced + 1);
	}
	htw_table_place(w, t, deadline, tick, not_before);
}

u64 htw_table_run_stopped(struct htw_wheel *w, u64 target, bool by_moves)
{
	struct htw_table *tb = w->table;
	u64 wait;

	lockdep_assert_held(&w->tick_lock);
	WRITE_ONCE(tb->budget_stops, tb->budget_stops + 1);
	if (!by_moves) {
		tb->move_backoff_ns = 0;
		return target + 1;
	}
	tb->move_backoff_ns = clamp(2 * tb->move_backoff_ns,
				    HTW_TABLE_MOVE_WAIT_MIN_NS,
				    HTW_TABLE_MOVE_WAIT_MAX_NS);
	wait = DIV_ROUND_UP_ULL(tb->move_backoff_ns, w->geo.tick_ns);
	return target + max_t(u64, wait, 1);
}

void htw_table_run_done(struct htw_wheel *w)
{
	w->table->move_backoff_ns = 0;
}

/*
 * The deadline generation @seq of a slot is armed for, read
 * after @seq (whose acquire orders it): user space writes the deadline of
 * its next generation into the other half before its exchange, so this
 * half stays the one of @seq as long as @seq is the slot's.
 */
static u64 htw_table_deadline(struct htw_table2_slot *slot, u64 seq)
{
	return READ_ONCE(slot->deadline_ns[(seq >> 1) & 1]);
}

/*
 * Take slot @slot in.  Its submission is over once @queued is
 * 0 again; the full barrier orders that store before the reads of the
 * slot, as user space orders its exchange before its read of @queued:
 * either this reads the arming, or user space submits the slot again.
 */
static void htw_table_take_in(struct htw_wheel *w, struct htw_timer *t,
			      u32 slot)
{
	struct htw_table2_slot *s = &w->table->slots[slot];
	u64 seq;

	WRITE_ONCE(s->queued, 0);
	/* Pairs with user space's exchange of seq before its read of queued. */
	smp_mb();
	if (htw_where_state(READ_ONCE(t->where)) == HTW_READY)
		return;		/* re-read when it leaves the wait list */
	/* The deadline after seq: pairs with user space's exchange. */
	seq = smp_load_acquire(&s->seq);
	htw_wheel_take_out(w, t);
	htw_table_place(w, t, seq & HTW_TABLE2_ARMED ?
			max(htw_table_deadline(s, seq), 1ULL) : 0, w->clk, 0);
}

unsigned int htw_table_take_submissions(struct htw_wheel *w,
					unsigned int budget)
{
	struct htw_table *tb = w->table;
	u32 head = tb->sq_head, tail, n, i, slot;
	struct htw_timer *t;

	lockdep_assert_held(&w->tick_lock);
	/* The entries after the index: pairs with the producer's release. */
	tail = smp_load_acquire(&tb->hdr->sq_tail);
	/* More than a ring ahead: no producer wrote that; skip to it. */
	if (tail - head > tb->sq_mask + 1) {
		tb->sq_invalid++;
		head = tail;
	}
	n = min(tail - head, budget);
	for (i = 0; i < n; i++, head++) {
		slot = READ_ONCE(tb->sq[head & tb->sq_mask]);
		t = slot < tb->entries ? htw_table_timer(w, slot) : NULL;
		if (!t) {
			tb->sq_invalid++;
			continue;
		}
		htw_table_take_in(w, t, slot);
	}
	WRITE_ONCE(tb->consumed, tb->consumed + (u32)(head - tb->sq_head));
	WRITE_ONCE(tb->sq_head, head);	/* a doorbell compares it unlocked */
	WRITE_ONCE(tb->taken, tb->taken + n);
	WRITE_ONCE(tb->hdr->sq_invalid, tb->sq_invalid);
	/* Entries read before the producer may write them again. */
	smp_store_release(&tb->hdr->sq_head, head);
	return n;
}

/*
 * Whether the completion ring is full.  The consumer's head is read again
 * only when the last one read says so: once a visit at most, not once a
 * record.
 */
static bool htw_table_cq_full(struct htw_table *tb)
{
	if (tb->cq_tail - tb->cq_head_seen <= tb->cq_mask)
		return false;
	/* Pairs with the consumer's release: it has read what it consumed. */
	tb->cq_head_seen = smp_load_acquire(&tb->hdr->cq_head);
	return tb->cq_tail - tb->cq_head_seen > tb->cq_mask;
}

static void htw_table_wait_for_room(struct htw_table *tb, struct htw_timer *t)
{
	htw_timer_set_where(t, HTW_READY, 0);
	t->next = NULL;
	if (tb->waiting_last)
		tb->waiting_last->next = t;
	else
		tb->waiting = t;
	tb->waiting_last = t;
	WRITE_ONCE(tb->cq_waits, tb->cq_waits + 1);
	WRITE_ONCE(tb->hdr->cq_waits, tb->cq_waits);
}

static void htw_table_write_cqe(struct htw_table *tb, u32 slot, u64 gen)
{
	struct htw_table2_cqe *e = &tb->cq[tb->cq_tail & tb->cq_mask];

	e->slot = slot;
	e->flags = 0;
	e->gen = gen;
	tb->cq_tail++;
	WRITE_ONCE(tb->fired, tb->fired + 1);
}

/*
 * Between the claim's read of a due slot and its exchange: nothing in the
 * shipped module; in a test build, where a KUnit suite plays user space's
 * racing cancel and re-arm, with a static stub.
 */
VISIBLE_IF_KUNIT void htw_table_claim_race(struct htw_table2_slot *slot)
{
	KUNIT_STATIC_STUB_REDIRECT(htw_table_claim_race, slot);
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_claim_race);

/*
 * Fire the arming @seq names, due at @deadline, by exchanging @seq for
 * itself disarmed: a cancel or a re-arm (each a new generation) made
 * before that exchange wins, and one made after finds the slot fired,
 * so every arming ends exactly once.  False if user space won.
 */
static bool htw_table_claim(struct htw_wheel *w, struct htw_timer *t,
			    u64 seq, u64 deadline, u64 now_ns)
{
	struct htw_table *tb = w->table;
	struct htw_table2_slot *slot = &tb->slots[t->cookie];

	htw_table_claim_race(slot);
	if (cmpxchg64(&slot->seq, seq, seq & ~HTW_TABLE2_ARMED) != seq)
		return false;
	htw_table_write_cqe(tb, t->cookie, seq >> 1);
	if (trace_htwheel_table_expire_enabled())
		trace_htwheel_table_expire(w->geo.trace_id, t->cookie, seq >> 1,
					   htw_timens_to_host(deadline, tb->offset),
					   now_ns);
	htw_timer_set_where(t, HTW_FREE, 0);
	htw_count_bh(w, HTW_C_FIRED, 1);
	return true;
}

bool htw_table_visit(struct htw_wheel *w, struct htw_timer *t, u64 tick,
		     u64 now_ns)
{
	struct htw_table *tb = w->table;
	struct htw_table2_slot *slot = &tb->slots[t->cookie];
	u64 seq, deadline;
	int tries;

	lockdep_assert_held(&w->tick_lock);
	/* Twice at most: a slot user space keeps changing waits a tick. */
	for (tries = 0; tries < 2; tries++) {
		/* The deadline after seq: pairs with user space's exchange. */
		seq = smp_load_acquire(&slot->seq);
		deadline = max(htw_table_deadline(slot, seq), 1ULL);
		if (!(seq & HTW_TABLE2_ARMED) ||
		    htw_grid_expiry_tick(&w->grid,
					 htw_timens_to_host(deadline, tb->offset),
					 0) > tick) {
			/* Disarmed, or moved later: no record. */
			htw_table_move_later(w, t, seq & HTW_TABLE2_ARMED ? deadline : 0,
					     tick);
			return false;
		}
		if (htw_table_cq_full(tb)) {
			htw_table_wait_for_room(tb, t);
			return false;
		}
		if (htw_table_claim(w, t, seq, deadline, now_ns))
			return true;
	}
	t->expires = tick + 1;
	htw_wheel_place(w, t, tick);
	return false;
}

unsigned int htw_table_retry_waiting(struct htw_wheel *w, unsigned int budget,
				     u64 now_ns, unsigned int *fired)
{
	struct htw_table *tb = w->table;
	struct htw_timer *t;
	unsigned int n = 0;

	lockdep_assert_held(&w->tick_lock);
	while (n < budget && tb->waiting && !htw_table_cq_full(tb)) {
		t = tb->waiting;
		tb->waiting = t->next;
		if (!tb->waiting)
			tb->waiting_last = NULL;
		htw_timer_set_where(t, HTW_TRANSIT, 0);
		*fired += htw_table_visit(w, t, w->clk, now_ns);
		n++;
	}
	htw_table_publish_completions(w);
	return n;
}

/*
 * Slots wait for room in a full completion ring: the next run comes when
 * the consumer makes room and says so (poll, read, the doorbell), or a
 * backoff later, which doubles from HTW_TABLE_ROOM_WAIT_MIN_NS to
 * HTW_TABLE_ROOM_WAIT_MAX_NS while the consumer makes none: a process that
 * leaves its ring full and sleeps costs a few runs a second, not a run a
 * tick.  Returns the tick of that run, U64_MAX if no slot waits.
 */
u64 htw_table_room_tick(struct htw_wheel *w)
{
	struct htw_table *tb = w->table;
	u32 head = READ_ONCE(tb->hdr->cq_head);
	u64 wait;

	lockdep_assert_held(&w->tick_lock);
	if (!tb->waiting || !htw_table_cq_full(tb)) {
		WRITE_ONCE(tb->room_wait, false);
		tb->room_backoff_ns = HTW_TABLE_ROOM_WAIT_MIN_NS;
		return tb->waiting ? w->clk + 1 : U64_MAX;
	}
	if (tb->room_wait && head == tb->room_head)
		tb->room_backoff_ns = min(2 * tb->room_backoff_ns,
					  HTW_TABLE_ROOM_WAIT_MAX_NS);
	else
		tb->room_backoff_ns = HTW_TABLE_ROOM_WAIT_MIN_NS;
	WRITE_ONCE(tb->room_head, head);
	WRITE_ONCE(tb->room_wait, true);
	wait = DIV_ROUND_UP_ULL(tb->room_backoff_ns, w->geo.tick_ns);
	return w->clk + max_t(u64, wait, 1);
}

bool htw_table_room_made(struct htw_wheel *w)
{
	struct htw_table *tb = w->table;

	return READ_ONCE(tb->room_wait) &&
	       READ_ONCE(tb->hdr->cq_head) != READ_ONCE(tb->room_head);
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_room_made);

void htw_table_publish_completions(struct htw_wheel *w)
{
	struct htw_table *tb = w->table;

	lockdep_assert_held(&w->tick_lock);
	if (tb->cq_published == tb->cq_tail)
		return;
	trace_htwheel_deliver(w->geo.trace_id, HTW_TRACE_VIA_RING,
			      tb->cq_tail - tb->cq_published);
	/* The records before the index: pairs with the consumer's acquire. */
	smp_store_release(&tb->hdr->cq_tail, tb->cq_tail);
	WRITE_ONCE(tb->cq_published, tb->cq_tail);
}

bool htw_table_publish_wakeup(struct htw_wheel *w, u64 tick)
{
	struct htw_table *tb = w->table;
	u64 at = U64_MAX, host;

	lockdep_assert_held(&w->tick_lock);
	if (tick != U64_MAX) {
		host = htw_grid_tick_time(&w->grid, tick);
		/* Beyond KTIME_MAX the hrtimer is not armed: no run planned. */
		if (host <= KTIME_MAX)
			at = htw_timens_from_host(host, tb->offset);
	}
	WRITE_ONCE(tb->hdr->next_wakeup_ns, at);
	/*
	 * Our time before the producer's tail, as it writes its tail before
	 * reading our time (a full barrier between): either it sees this
	 * time, or we see its submission here.
	 */
	smp_mb();
	return READ_ONCE(tb->hdr->sq_tail) != tb->sq_head;
}

#ifdef HTW_TEST_BUILD
void *htw_table_memory(struct htw_wheel *w)
{
	return w->table->mem;
}
EXPORT_SYMBOL_IF_KUNIT(htw_table_memory);
#endif
