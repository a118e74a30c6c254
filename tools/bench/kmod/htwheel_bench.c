// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel_bench: in-kernel benchmark of the htwheel core against the
 * kernel's own timers (hrtimers and the timer wheel), run by `make bench`.
 *
 * Loading the module runs every case and keeps the results in
 * /sys/kernel/debug/htwheel_bench, in the sample format of
 * Documentation/benchmark.rst (one tab-separated line per repetition):
 *
 *	sample	<section>	<case>	<n>	<who>	<unit>	<value>
 *	meta	<key>	<value>
 *
 * Knobs (module parameters):
 *   sizes=1000,10000,100000,1000000   pending populations n (empty: none)
 *   storm=100000,1000000              timers due in one tick (storm section;
 *                                     empty: none)
 *   seed=20240601                     seed of every random draw (printed)
 *   reps=3                            measured repetitions, after one
 *                                     discarded warm-up repetition
 *   batch=256                         k: operations per timed round, the
 *                                     same at every n
 *   rounds=32                         rounds per phase per repetition; the
 *                                     even ones are timed as a whole (mean
 *                                     per operation), the odd ones per
 *                                     operation (percentiles)
 *   expiry=1                          also run the expiry sections
 *   ops=1                             run the operation sections (off:
 *                                     the expiry sections alone)
 *   observer_us=100                   period of the storm's SCHED_FIFO
 *                                     observer
 *
 * Every repetition sets up each contender afresh, fills it and runs the
 * phases; repetition r runs the contenders in list order when r is even
 * and in reverse when it is odd.  All contenders of a repetition get the
 * same random draws (delays, indices, deadlines).  Means are timed with
 * ktime_get_ns() over a round; per-operation percentiles with the TSC
 * (calibrated against ktime_get_ns() at load), one read per operation,
 * whose cost is printed as meta.  This module reports; it never judges.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/tick.h>
#include <linux/fs.h>
#include <linux/sort.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>

#include "htw_compat.h"
#include "htw_internal.h"
#include "htw_tick.h"

/*
 * The wheel's own functions, without a system call in between, and two
 * of its inner ones: htw_pause()/htw_resume() build a backlog that
 * expires at once (the storm), and the handle table's chunk bytes are the
 * timers' memory.  The shipped module exports none of them; the
 * benchmark's build (HTW_BENCH=1) is a test build, which exports them as
 * it does to the KUnit suites (htw_compat.h).
 */
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static char *sizes = "1000,10000,100000,1000000";
module_param(sizes, charp, 0444);
MODULE_PARM_DESC(sizes, "Comma-separated numbers of pending timers");

static char *storm = "100000,1000000";
module_param(storm, charp, 0444);
MODULE_PARM_DESC(storm, "Comma-separated numbers of timers due in one tick");

static unsigned int seed = 20240601;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Seed of every random draw");

static unsigned int reps = 3;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "Measured repetitions (after one discarded warm-up)");

static unsigned int batch = 256;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "Operations per timed round, the same at every size");

static unsigned int rounds = 32;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "Rounds per phase and repetition (half whole, half per op)");

static bool expiry = true;
module_param(expiry, bool, 0444);
MODULE_PARM_DESC(expiry, "Also run the expiry and storm sections");

static bool ops = true;
module_param(ops, bool, 0444);
MODULE_PARM_DESC(ops, "Run the operation sections (schedule, cancel, re-arm, memory)");

static unsigned int observer_us = 100;
module_param(observer_us, uint, 0444);
MODULE_PARM_DESC(observer_us, "Wake-up period of the storm's SCHED_FIFO observer");

/*
 * Delays are log-uniform: 2^e ns plus up to 2^e ns, e drawn uniformly in
 * [min, max).  Schedule/cancel: 68 s .. 73 min, so nothing fires during a
 * repetition even under qemu's emulation (levels 1 and 2 of a 1 ms x 512
 * htwheel).  Re-arm moves: 67 ms .. 8.6 s, each undone in its round,
 * so no deadline is ever less than 59 s after its timer was filled.  Expiry:
 * 1 ms .. 1.07 s after a lead that covers the arming (ex_lead_ns), so
 * htwheel's timers sit in its levels 0 and 1 (cascades are part of the
 * cost) and the timer wheel's in its levels 0 to 2, as the lead puts them.
 */
#define SC_EXP_MIN	36
#define SC_EXP_MAX	42
#define MV_EXP_MIN	26
#define MV_EXP_MAX	33
#define EX_EXP_MIN	20
#define EX_EXP_MAX	30

#define BENCH_TICK_NS	NSEC_PER_MSEC
#define BENCH_SLOTS	512
#define RESCHED_EVERY	4096
#define WAIT_NS		(120 * NSEC_PER_SEC)

/* The section labels: what is timed, on both sides. */
#define S_WARM	"in-kernel schedule+cancel, warm: a batch re-armed on the same objects over n pending"
#define S_COLD	"in-kernel schedule+cancel, cold: random order over a population armed earlier, new random deadlines"
#define S_RA_WARM "in-kernel re-arm, warm: the same k of n pending moved by the same amounts and back every round, later or earlier first by turns"
#define S_RA_COLD "in-kernel re-arm, cold: k random timers of a population armed earlier, new ones and new amounts every round, moved and back, later or earlier first by turns"
#define S_EXP	"in-kernel expiry, real interrupt path: n timers armed ahead with interrupts on, due over 1.07 s, expiring as they come due; busy time of their CPU beyond the idle gap's rate before it, first deadline to last callback or record; htwheel with a tick of one jiffy and the slack of the timer wheel's level for each deadline (like for like), exact to the jiffy, and exact at 1 ms"
#define S_STORM	"in-kernel expiry storm, real interrupt path: n timers due in one tick, armed ahead with interrupts on; release (htwheel) or first callback (timer_list) to last"
#define S_MEM	"in-kernel memory per pending timer: objects x object size"

#define W_HTW	"htwheel"
#define W_HR	"kmem_cache(SLAB_ACCOUNT)+hrtimer_start / hrtimer_cancel+kmem_cache_free"
#define W_TL	"kmem_cache(SLAB_ACCOUNT)+mod_timer / timer_delete+kmem_cache_free"
#define W_TLF	"mod_timer / timer_delete on a preallocated timer_list"
#define W_HR_RE	"hrtimer_start on a queued hrtimer"
#define W_TL_RE	"mod_timer on a pending timer_list"
#define W_HR_EX	"hrtimer (hard interrupt)"
#define W_TL_EX	"timer_list (timer softirq)"
#define W_HTW_MS	"htwheel, 1 ms tick (a wake-up per ms)"
#define W_HTW_EXACT	"htwheel, exact to the jiffy (no slack)"

static char *out_buf;
static size_t out_len;
#define OUT_SIZE	(2 * 1024 * 1024)

static __printf(1, 2) void emit(const char *fmt, ...)
{
	va_list args;

	if (out_len >= OUT_SIZE)
		return;
	va_start(args, fmt);
	out_len += vscnprintf(out_buf + out_len, OUT_SIZE - out_len, fmt, args);
	va_end(args);
}

/* The repetition being run; 0 is the warm-up, which prints nothing. */
static unsigned int cur_rep;

/* @milli: the value in thousandths of @unit, printed with three decimals. */
static void record(const char *section, const char *kase, unsigned long n,
		   const char *who, const char *unit, u64 milli)
{
	if (!cur_rep)
		return;
	emit("sample\t%s\t%s\t%lu\t%s\t%s\t%llu.%03llu\n", section, kase, n,
	     who, unit, div_u64(milli, 1000), milli % 1000);
}

static unsigned long errors;

static void error(const char *what, const char *who, unsigned long n, long v)
{
	errors++;
	emit("meta\terror %s %s n %lu rep %u\t%ld\n", what, who, n, cur_rep, v);
}

/* ---- random draws ---- */

static struct rnd_state rs;

static u64 draw_delay(u32 emin, u32 emax)
{
	u32 e = emin + prandom_u32_state(&rs) % (emax - emin);
	u64 lo = prandom_u32_state(&rs);
	u64 r = ((u64)prandom_u32_state(&rs) << 32 | lo) & ((1ULL << e) - 1);

	return (1ULL << e) + r;
}

/* Every contender of one repetition at one size draws the same sequence. */
static void draws_start(unsigned long n, unsigned int section)
{
	prandom_seed_state(&rs, ((u64)seed << 32) ^ ((u64)n << 8) ^
			   (cur_rep << 4) ^ section);
}

/* k distinct indices of [0, m) in random order: the head of @perm. */
static void pick(u32 *perm, u32 m, u32 k)
{
	u32 j;

	for (j = 0; j < k; j++) {
		u32 r = j + prandom_u32_state(&rs) % (m - j);

		swap(perm[j], perm[r]);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* ---- contenders of the schedule/cancel and re-arm sections ---- */

enum cid { C_HTW, C_HR, C_TL, C_TLF, NR_C };

static const char *const c_who[NR_C] = { W_HTW, W_HR, W_TL, W_TLF };
/* Who moves a pending timer, or NULL: the preallocated one would repeat W_TL_RE. */
static const char *const c_rearm_who[NR_C] = { W_HTW, W_HR_RE, W_TL_RE, NULL };

/* The peers' objects: a timer and the cookie its user keeps with it. */
struct hr_obj {
	struct hrtimer timer;
	u64 cookie;
};

struct tl_obj {
	struct timer_list timer;
	u64 cookie;
};

static struct kmem_cache *hr_cache, *tl_cache;

static struct htw_wheel *hw;
static u64 *hw_handle;
static struct hr_obj **hro;
static struct tl_obj **tlo;
static struct timer_list *tlf;
/* Timer-wheel deadlines: jiffies of the fill's clock reading base_ns. */
static unsigned long base_jiffies;
static u64 base_ns;
static unsigned long c_err;

static enum hrtimer_restart hr_nop(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static void tl_nop(struct timer_list *t)
{
}

static int c_setup(enum cid c, unsigned long cap)
{
	struct htw_geometry geo = {
		.tick_ns = BENCH_TICK_NS,
		.slots = BENCH_SLOTS,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = cap,
	};
	unsigned long i;

	switch (c) {
	case C_HTW:
		hw_handle = kvcalloc(cap, sizeof(*hw_handle), GFP_KERNEL);
		if (!hw_handle)
			return -ENOMEM;
		hw = htw_wheel_create(&geo, &htw_hrtimer_clock, NULL, NULL, GFP_KERNEL);
		if (IS_ERR(hw)) {
			kvfree(hw_handle);
			return PTR_ERR(hw);
		}
		break;
	case C_HR:
		hro = kvcalloc(cap, sizeof(*hro), GFP_KERNEL);
		if (!hro)
			return -ENOMEM;
		break;
	case C_TL:
		tlo = kvcalloc(cap, sizeof(*tlo), GFP_KERNEL);
		if (!tlo)
			return -ENOMEM;
		break;
	case C_TLF:
		tlf = kvcalloc(cap, sizeof(*tlf), GFP_KERNEL);
		if (!tlf)
			return -ENOMEM;
		for (i = 0; i < cap; i++)
			timer_setup(&tlf[i], tl_nop, 0);
		break;
	default:
		return -EINVAL;
	}
	base_jiffies = jiffies;
	base_ns = ktime_get_ns();
	return 0;
}

static unsigned long tl_expires(u64 deadline_ns)
{
	return base_jiffies + nsecs_to_jiffies(deadline_ns - base_ns) + 1;
}

/*
 * Direct calls through a switch rather than function pointers, so that
 * no contender pays for an indirect call (a retpoline on Debian's kernel).
 */
static __always_inline void c_arm(enum cid c, u32 i, u64 deadline)
{
	struct htw_timer_spec spec = { .cookie = i, .deadline_ns = deadline };
	struct hr_obj *h;
	struct tl_obj *o;

	switch (c) {
	case C_HTW:
		if (htw_wheel_schedule(hw, &spec, &hw_handle[i]))
			c_err++;
		break;
	case C_HR:
		h = kmem_cache_alloc(hr_cache, GFP_KERNEL);
		hro[i] = h;
		if (!h) {
			c_err++;
			break;
		}
		h->cookie = i;
		htw_hrtimer_setup(&h->timer, hr_nop, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
		hrtimer_start(&h->timer, ns_to_ktime(deadline), HRTIMER_MODE_ABS);
		break;
	case C_TL:
		o = kmem_cache_alloc(tl_cache, GFP_KERNEL);
		tlo[i] = o;
		if (!o) {
			c_err++;
			break;
		}
		o->cookie = i;
		timer_setup(&o->timer, tl_nop, 0);
		mod_timer(&o->timer, tl_expires(deadline));
		break;
	case C_TLF:
		mod_timer(&tlf[i], tl_expires(deadline));
		break;
	default:
		break;
	}
}

static __always_inline void c_disarm(enum cid c, u32 i)
{
	switch (c) {
	case C_HTW:
		if (htw_wheel_cancel(hw, hw_handle[i]) != HTW_WHEEL_CANCEL_OK)
			c_err++;
		break;
	case C_HR:
		if (!hro[i] || hrtimer_cancel(&hro[i]->timer) != 1)
			c_err++;
		kmem_cache_free(hr_cache, hro[i]);
		hro[i] = NULL;
		break;
	case C_TL:
		if (!tlo[i] || timer_delete(&tlo[i]->timer) != 1)
			c_err++;
		kmem_cache_free(tl_cache, tlo[i]);
		tlo[i] = NULL;
		break;
	case C_TLF:
		if (timer_delete(&tlf[i]) != 1)
			c_err++;
		break;
	default:
		break;
	}
}

/*
 * Move pending timer @i to @deadline in place, each side saying it was
 * pending (hrtimer_start() says nothing).
 */
static __always_inline void c_rearm(enum cid c, u32 i, u64 deadline)
{
	switch (c) {
	case C_HTW:
		if (htw_wheel_rearm(hw, hw_handle[i], deadline, 0) !=
		    HTW_WHEEL_REARM_PENDING)
			c_err++;
		break;
	case C_HR:
		hrtimer_start(&hro[i]->timer, ns_to_ktime(deadline), HRTIMER_MODE_ABS);
		break;
	case C_TL:
		if (mod_timer(&tlo[i]->timer, tl_expires(deadline)) != 1)
			c_err++;
		break;
	case C_TLF:
		if (mod_timer(&tlf[i], tl_expires(deadline)) != 1)
			c_err++;
		break;
	default:
		break;
	}
}

/* Cancel whatever is still pending and free everything. */
static void c_teardown(enum cid c, unsigned long cap)
{
	unsigned long i;

	switch (c) {
	case C_HTW:
		htw_wheel_destroy(hw);
		kvfree(hw_handle);
		break;
	case C_HR:
		for (i = 0; i < cap; i++) {
			if (hro[i]) {
				hrtimer_cancel(&hro[i]->timer);
				kmem_cache_free(hr_cache, hro[i]);
			}
			if (!(i % RESCHED_EVERY))
				cond_resched();
		}
		kvfree(hro);
		break;
	case C_TL:
		for (i = 0; i < cap; i++) {
			if (tlo[i]) {
				timer_delete_sync(&tlo[i]->timer);
				kmem_cache_free(tl_cache, tlo[i]);
			}
			if (!(i % RESCHED_EVERY))
				cond_resched();
		}
		kvfree(tlo);
		break;
	case C_TLF:
		for (i = 0; i < cap; i++) {
			timer_delete_sync(&tlf[i]);
			if (!(i % RESCHED_EVERY))
				cond_resched();
		}
		kvfree(tlf);
		break;
	default:
		break;
	}
}

/* ---- slab cache attributes, from /sys/kernel/slab ---- */

/*
 * A slab's object size (its stride, with the free pointer that a
 * SLAB_TYPESAFE_BY_RCU cache may keep after the object) is not in the
 * kernel's API: SLUB publishes it in sysfs (/proc/slabinfo cannot be read
 * from the kernel).  The first number of /sys/kernel/slab/@cache/@attr,
 * or 0 if it cannot be read.
 */
static unsigned long slab_attr(const char *cache, const char *attr)
{
	unsigned long v = 0;
	char path[96], buf[64];
	struct file *f;
	loff_t pos = 0;
	ssize_t got;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return 0;
	got = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	/* "objects" may go on with per-node counts; kstrtoul() takes the newline. */
	*strchrnul(buf, ' ') = 0;
	if (kstrtoul(buf, 10, &v))
		return 0;
	return v;
}

/* ---- timed rounds ---- */

enum op_kind { OP_ARM, OP_DISARM, OP_REARM, OP_REARM_CS };

/* What one kind of operation accumulated over one repetition. */
struct acc {
	u64 whole_ns;		/* rounds timed as a whole */
	u64 whole_ops;
	u64 *op_ns;		/* rounds timed per operation, op_clock() */
	unsigned int nop;
};

static struct acc acc[4];
static u32 *perm, *idx;
static u64 *dl, *nd, *mv;

/*
 * The per-operation clock: the TSC on x86 (UML's included), converted
 * with a ratio measured against ktime_get_ns() at load
 * (op_clock_calibrate()): UML's ktime_get_ns() moves in steps of 256 ns,
 * coarser than one operation.
 */
static __always_inline u64 op_clock(void)
{
#if defined(CONFIG_X86) || defined(CONFIG_UML_X86)
	u32 lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi));
	return (u64)hi << 32 | lo;
#else
	return ktime_get_ns();
#endif
}

static u64 cal_cycles = 1, cal_ns = 1;

static void op_clock_calibrate(void)
{
	u64 c0, t0;

	c0 = op_clock();
	t0 = ktime_get_ns();
	msleep(50);
	cal_cycles = op_clock() - c0;
	cal_ns = ktime_get_ns() - t0;
}

/* Picoseconds in @cycles of op_clock(). */
static u64 op_ps(u64 cycles)
{
	return mul_u64_u64_div_u64(cycles, cal_ns * 1000, cal_cycles);
}

static __always_inline void do_op(enum cid c, enum op_kind kind, u32 i, u64 d)
{
	if (kind == OP_ARM) {
		c_arm(c, i, d);
	} else if (kind == OP_DISARM) {
		c_disarm(c, i);
	} else if (kind == OP_REARM) {
		c_rearm(c, i, d);
	} else {
		/* htwheel's way before it could re-arm in place: a new handle. */
		c_disarm(c, i);
		c_arm(c, i, d);
	}
}

/*
 * k operations on idx[], deadlines nd[]: timed as a whole (two reads of
 * ktime_get_ns()) or per operation (one op_clock() read between
 * operations; converted to ns when reported).
 */
static __always_inline void run_ops(enum cid c, enum op_kind kind, u32 k,
				    bool per_op, struct acc *a)
{
	u64 t0, t;
	u32 j;

	if (per_op) {
		t0 = op_clock();
		for (j = 0; j < k; j++) {
			do_op(c, kind, idx[j], nd[j]);
			t = op_clock();
			a->op_ns[a->nop++] = t - t0;
			t0 = t;
		}
	} else {
		t0 = ktime_get_ns();
		for (j = 0; j < k; j++)
			do_op(c, kind, idx[j], nd[j]);
		a->whole_ns += ktime_get_ns() - t0;
		a->whole_ops += k;
	}
}

static void acc_reset(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(acc); i++) {
		acc[i].whole_ns = 0;
		acc[i].whole_ops = 0;
		acc[i].nop = 0;
	}
}

/* Mean per operation and p50/p99/p99.9 of @a as cases "<name>...". */
static void acc_report(const char *section, const char *name, unsigned long n,
		       const char *who, struct acc *a)
{
	static const struct { const char *sfx; unsigned int per_mille; } pct[] = {
		{ " p50", 500 }, { " p99", 990 }, { " p99.9", 999 },
	};
	char kase[48];
	unsigned int i;

	if (a->whole_ops)
		record(section, name, n, who, "ns",
		       div64_u64(a->whole_ns * 1000, a->whole_ops));
	if (!a->nop)
		return;
	sort(a->op_ns, a->nop, sizeof(*a->op_ns), cmp_u64, NULL);
	for (i = 0; i < ARRAY_SIZE(pct); i++) {
		snprintf(kase, sizeof(kase), "%s%s", name, pct[i].sfx);
		record(section, kase, n, who, "ns",
		       op_ps(a->op_ns[(u64)a->nop * pct[i].per_mille / 1000]));
	}
}

static void pair_report(const char *section, unsigned long n, const char *who)
{
	if (acc[0].whole_ops && acc[1].whole_ops)
		record(section, "schedule+cancel", n, who, "ns",
		       div64_u64(acc[0].whole_ns * 1000, acc[0].whole_ops) +
		       div64_u64(acc[1].whole_ns * 1000, acc[1].whole_ops));
	acc_report(section, "schedule", n, who, &acc[0]);
	acc_report(section, "cancel", n, who, &acc[1]);
}

/*
 * What the wheel holds for n pending timers: its chunks of timers, each an
 * object of the htw_timer cache counted at its share of the pages of its
 * slab (a slab's unused tail included), plus the structures fixed at
 * creation.  Our wheel is the only one alive, so the cache's count of
 * objects must match its chunks.
 */
static void report_memory(unsigned long n)
{
	unsigned long per_slab = slab_attr("htw_timer", "objs_per_slab");
	unsigned long chunk = slab_attr("htw_timer", "object_size");
	unsigned long objsize = per_slab ?
		(PAGE_SIZE << slab_attr("htw_timer", "order")) / per_slab : 0;
	struct htw_geometry geo;
	u64 chunks, bytes;

	objsize = max(objsize, slab_attr("htw_timer", "slab_size"));
	if (!objsize || !chunk) {
		error("no /sys/kernel/slab/htw_timer/slab_size", W_HTW, n, 0);
		return;
	}
	htw_wheel_geometry(hw, &geo);
	chunks = div64_u64(htw_handles_chunk_bytes(&hw->handles), chunk);
	bytes = chunks * objsize + htw_wheel_footprint(&geo);
	record(S_MEM, "bytes per pending timer", n, W_HTW, "B",
	       div64_u64(bytes * 1000, n));
	record(S_MEM, "bytes per pending timer", n, "struct timer_list (sizeof)",
	       "B", sizeof(struct timer_list) * 1000);
	record(S_MEM, "bytes per pending timer", n, "struct hrtimer (sizeof)",
	       "B", sizeof(struct hrtimer) * 1000);
	if (cur_rep == 1)
		emit("meta\thtw_timer mem n %lu\t%llu x %lu (%lu used) + %zu\n",
		     n, chunks, objsize, slab_attr("htw_timer", "objects"),
		     htw_wheel_footprint(&geo));
}

/*
 * Re-arm: k pending timers of n + k moved by a random amount and back,
 * later first in half the rounds and earlier first in the others, so the
 * second move finds the objects the first one just touched.  Warm: the
 * same k timers (n .. n + k - 1) and amounts every round.  Cold: k new
 * random timers and amounts every round.  Each phase draws from its own
 * seed, so every contender gets the same timers and amounts whichever
 * phases ran before.  @how: OP_REARM or OP_REARM_CS, whose cases get @sfx.
 */
static void rearm_phase(enum cid c, unsigned long n, bool cold,
			enum op_kind how, const char *sfx, const char *who)
{
	u32 k = batch, cap = n + k, r, j;
	char later[48], earlier[48];

	draws_start(n, cold ? 4 : 3);
	if (cold)
		for (j = 0; j < cap; j++)
			perm[j] = j;
	for (j = 0; j < k; j++) {
		idx[j] = n + j;
		mv[j] = draw_delay(MV_EXP_MIN, MV_EXP_MAX);
	}
	acc_reset();
	for (r = 0; r < rounds; r++) {
		bool later_first = !(r & 2);

		if (cold) {
			pick(perm, cap, k);
			for (j = 0; j < k; j++) {
				idx[j] = perm[j];
				mv[j] = draw_delay(MV_EXP_MIN, MV_EXP_MAX);
			}
		}
		for (j = 0; j < k; j++)
			nd[j] = later_first ? dl[idx[j]] + mv[j] : dl[idx[j]] - mv[j];
		run_ops(c, how, k, r & 1, &acc[later_first ? 2 : 3]);
		for (j = 0; j < k; j++)
			nd[j] = dl[idx[j]];
		run_ops(c, how, k, r & 1, &acc[later_first ? 3 : 2]);
		cond_resched();
	}
	snprintf(later, sizeof(later), "re-arm later%s", sfx);
	snprintf(earlier, sizeof(earlier), "re-arm earlier%s", sfx);
	acc_report(cold ? S_RA_COLD : S_RA_WARM, later, n, who, &acc[2]);
	acc_report(cold ? S_RA_COLD : S_RA_WARM, earlier, n, who, &acc[3]);
}

/*
 * One contender, one repetition: fill n + k pending, then the phases.
 * Population n + k at every cancel, n at every schedule, in both the warm
 * and the cold phase.
 */
static int run_contender(enum cid c, unsigned long n)
{
	u32 k = batch, cap = n + k, r, j;
	u64 base;
	int ret;

	ret = c_setup(c, cap);
	if (ret)
		return ret;
	c_err = 0;
	draws_start(n, 1);

	base = ktime_get_ns();
	for (j = 0; j < cap; j++) {
		dl[j] = base + draw_delay(SC_EXP_MIN, SC_EXP_MAX);
		perm[j] = j;
	}
	for (j = 0; j < n; j++) {
		c_arm(c, j, dl[j]);
		if (!(j % RESCHED_EVERY))
			cond_resched();
	}
	if (c == C_HTW)
		report_memory(n);

	/* Warm: the same k objects and deadlines, re-armed every round. */
	acc_reset();
	for (j = 0; j < k; j++) {
		idx[j] = n + j;
		nd[j] = dl[n + j];
	}
	for (r = 0; r < rounds; r++) {
		run_ops(c, OP_ARM, k, r & 1, &acc[0]);
		run_ops(c, OP_DISARM, k, r & 1, &acc[1]);
		cond_resched();
	}
	pair_report(S_WARM, n, c_who[c]);

	/* Cold: cancel k random timers of n + k, arm them at new deadlines. */
	for (j = 0; j < k; j++)
		c_arm(c, n + j, dl[n + j]);
	acc_reset();
	for (r = 0; r < rounds; r++) {
		pick(perm, cap, k);
		base = ktime_get_ns();
		for (j = 0; j < k; j++) {
			idx[j] = perm[j];
			nd[j] = base + draw_delay(SC_EXP_MIN, SC_EXP_MAX);
			dl[idx[j]] = nd[j];
		}
		run_ops(c, OP_DISARM, k, r & 1, &acc[1]);
		run_ops(c, OP_ARM, k, r & 1, &acc[0]);
		cond_resched();
	}
	pair_report(S_COLD, n, c_who[c]);

	if (c_rearm_who[c]) {
		rearm_phase(c, n, false, OP_REARM, "", c_rearm_who[c]);
		rearm_phase(c, n, true, OP_REARM, "", c_rearm_who[c]);
	}
	/* The cancel+schedule rows last: they leave new handles behind. */
	if (c == C_HTW) {
		rearm_phase(c, n, false, OP_REARM_CS, ", cancel+schedule", W_HTW);
		rearm_phase(c, n, true, OP_REARM_CS, ", cancel+schedule", W_HTW);
	}

	c_teardown(c, cap);
	if (c_err)
		error("schedule/cancel", c_who[c], n, c_err);
	return 0;
}

/* ---- expiry: real interrupt paths ---- */

/*
 * Every contender is armed with interrupts on, for deadlines at least
 * ex_lead_ns after the arming began: long enough for the arming to end
 * first, so that nothing expires while it runs, and then to leave an
 * idle gap of at least EX_GAP_MIN_NS before the first deadline (the
 * expiry section's baseline).  It starts at a guess per size and grows
 * from what the arming took (the warm-up repetition pays for a guess
 * that was short).
 */
#define EX_LEAD_MIN_NS	(100 * NSEC_PER_MSEC)
#define EX_LEAD_PER_TIMER_NS	2000
#define EX_GAP_MIN_NS	(50 * NSEC_PER_MSEC)

static u64 ex_lead_ns;
/* The CPU the expiry sections run, arm and expire on. */
static unsigned int ex_cpu;

static DECLARE_COMPLETION(ex_done);
static atomic_t ex_fired;
static unsigned long ex_expect;
static u64 ex_first_ns, ex_last_ns;
static u64 *ex_delay;
static u64 *obs_t0, *obs_t1;

static void ex_count(void)
{
	int fired = atomic_inc_return(&ex_fired);
	u64 now;

	if (fired == 1) {
		now = ktime_get_ns();
		WRITE_ONCE(ex_first_ns, now);
		if (obs_t0)
			WRITE_ONCE(*obs_t0, now);
	}
	if (fired == ex_expect) {
		WRITE_ONCE(ex_last_ns, ktime_get_ns());
		complete(&ex_done);
	}
}

static enum hrtimer_restart ex_hr_fn(struct hrtimer *t)
{
	ex_count();
	return HRTIMER_NORESTART;
}

/*
 * How late the latest timer_list callback came after its deadline, on
 * the clock (jiffies may stand still through a long softirq run).  One
 * timer in EX_LATE_SAMPLE reads the clock: the peer's cost stays its own.
 */
#define EX_LATE_SAMPLE	64
static struct timer_list *ex_tl;
static u64 ex_tl_base_ns, ex_tl_worst_late_ns;

static void ex_tl_fn(struct timer_list *t)
{
	unsigned long i = t - ex_tl;
	u64 deadline;

	if (ex_tl && ex_delay && !(i % EX_LATE_SAMPLE)) {
		deadline = ex_tl_base_ns + ex_lead_ns + ex_delay[i];
		ex_tl_worst_late_ns = max(ex_tl_worst_late_ns,
					  ktime_get_ns() - deadline);
	}
	ex_count();
}

/* After each batch the tick moved to the ready queue; no wheel lock. */
static void ex_ready(struct htw_wheel *w, void *owner)
{
	struct htw_wheel_stats st;

	htw_wheel_get_stats(w, &st);
	if (st.fired >= ex_expect && !READ_ONCE(ex_last_ns)) {
		WRITE_ONCE(ex_last_ns, ktime_get_ns());
		complete(&ex_done);
	}
}

static void ex_arm_start(unsigned long n)
{
	atomic_set(&ex_fired, 0);
	ex_expect = n;
	WRITE_ONCE(ex_first_ns, 0);
	WRITE_ONCE(ex_last_ns, 0);
	reinit_completion(&ex_done);
}

/*
 * Whether the arming that began at @base ended in time (an error, from
 * the first measured repetition on, if not); grows the lead for the next
 * contender either way.
 */
static bool ex_armed_in_time(const char *who, unsigned long n, u64 base)
{
	u64 took = ktime_get_ns() - base;
	bool in_time = took + EX_GAP_MIN_NS < ex_lead_ns;

	if (!in_time && cur_rep)
		error("expiry armed late (ns)", who, n, took);
	/* Room for an arming three times as slow (a host preemption). */
	ex_lead_ns = max(ex_lead_ns, 3 * took + EX_LEAD_MIN_NS);
	return in_time;
}

/* False (error noted) if the expiry never completed. */
static bool ex_wait(const char *who, unsigned long n)
{
	if (!wait_for_completion_timeout(&ex_done, nsecs_to_jiffies(WAIT_NS))) {
		error("expiry incomplete", who, n, n - atomic_read(&ex_fired));
		return false;
	}
	if (obs_t1) {
		WRITE_ONCE(*obs_t1, READ_ONCE(ex_last_ns));
		usleep_range(4 * observer_us, 8 * observer_us);
	}
	return true;
}

/* Sleep, interrupts on, until @until on the monotonic clock. */
static void sleep_until(u64 until)
{
	ktime_t at = ns_to_ktime(until);

	while (ktime_get_ns() < until) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_hrtimeout(&at, HRTIMER_MODE_ABS);
	}
}

/* Bind the caller to the CPU it runs on, its mask kept in @saved. */
static bool pin_here(cpumask_var_t *saved)
{
	if (!alloc_cpumask_var(saved, GFP_KERNEL))
		return false;
	cpumask_copy(*saved, current->cpus_ptr);
	ex_cpu = raw_smp_processor_id();
	set_cpus_allowed_ptr(current, cpumask_of(ex_cpu));
	return true;
}

static void unpin(cpumask_var_t saved)
{
	set_cpus_allowed_ptr(current, saved);
	free_cpumask_var(saved);
}

/*
 * CPU time ex_cpu spent outside the idle loop: interrupts, softirqs and
 * work items included, which no task's CPU clock is charged with.  The
 * idle time is NOHZ's, kept to the nanosecond at each idle exit, so it
 * needs the tick to be able to stop.
 */
struct busy_mark {
	u64 wall_ns;
	u64 idle_us;
};

static bool busy_mark(struct busy_mark *m)
{
	m->wall_ns = ktime_get_ns();
	m->idle_us = get_cpu_idle_time_us(ex_cpu, NULL);
	return m->idle_us != (u64)-1;
}

static u64 busy_between(const struct busy_mark *a, const struct busy_mark *b)
{
	u64 all = b->wall_ns - a->wall_ns;
	u64 idle = (b->idle_us - a->idle_us) * NSEC_PER_USEC;

	return all > idle ? all - idle : 0;
}

/*
 * Armed, sleep through the gap until the deadlines begin at @from, then
 * until the last expiry.  Returns the busy time of the second window
 * beyond what the gap's busy rate (everything but the expiry: other
 * kernel threads, deferred work) predicts for it, or 0 (noted as meta
 * when the expiry was lost in that noise, as at a few thousand timers).
 */
static u64 ex_busy_until_done(const char *who, unsigned long n, u64 from)
{
	struct busy_mark a, b, c;
	u64 busy, idle;

	if (!busy_mark(&a)) {
		error("no NOHZ idle time", who, n, 0);
		return 0;
	}
	sleep_until(from);
	busy_mark(&b);
	if (!ex_wait(who, n))
		return 0;
	busy_mark(&c);
	busy = busy_between(&b, &c);
	idle = div64_u64(busy_between(&a, &b) * (c.wall_ns - b.wall_ns),
			 b.wall_ns - a.wall_ns);
	if (cur_rep == 1)
		emit("meta\tin-kernel expiry idle gap %s n %lu\t%llu of %llu ns busy\n",
		     who, n, busy_between(&a, &b), b.wall_ns - a.wall_ns);
	if (busy <= idle) {
		emit("meta\texpiry in the idle noise %s n %lu rep %u\t%llu ns busy, %llu idle\n",
		     who, n, cur_rep, busy, idle);
		return 0;
	}
	return busy - idle;
}

/*
 * A real-clock wheel filled with n timers due @lead plus their delay
 * (@storm_delay for every one, or 0 for ex_delay[]) after @base.
 */
/*
 * The timer wheel's granularity for a timer @delta_ns ahead: 8^level
 * jiffies, for the level calc_wheel_index() (kernel/time/timer.c) puts
 * it in: level 0 below 63 jiffies ahead, each next one up to 8 times as
 * far.  The timer wheel fires such a timer up to that much late; a
 * htwheel timer given it as slack fires no later.
 */
static u64 tw_granularity_ns(u64 delta_ns)
{
	u64 delta = nsecs_to_jiffies64(delta_ns);
	unsigned int lvl = 0;

	while (lvl < 8 && delta >= (63ULL << (3 * lvl)))
		lvl++;
	return (u64)TICK_NSEC << (3 * lvl);
}

static struct htw_wheel *ex_wheel_fill(unsigned long n, u64 *base, u64 lead,
				       u64 storm_delay, bool hold, u64 tick_ns,
				       bool tw_slack)
{
	struct htw_geometry geo = {
		.tick_ns = tick_ns,
		.slots = BENCH_SLOTS,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = n,
	};
	struct htw_wheel *w;
	unsigned long i;
	u64 h;

	w = htw_wheel_create(&geo, &htw_hrtimer_clock, ex_ready, NULL, GFP_KERNEL);
	if (IS_ERR(w)) {
		error("wheel create", W_HTW, n, PTR_ERR(w));
		return NULL;
	}
	ex_arm_start(n);
	if (hold)
		htw_pause(w);
	*base = htw_wheel_now(w);
	for (i = 0; i < n; i++) {
		u64 delta = lead + (storm_delay ?: ex_delay[i]);
		struct htw_timer_spec spec = {
			.cookie = i,
			.deadline_ns = *base + delta,
			.slack_ns = tw_slack ? tw_granularity_ns(delta) : 0,
		};

		if (htw_wheel_schedule(w, &spec, &h))
			error("schedule", W_HTW, n, i);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	return w;
}

/*
 * htwheel, spread: the backlog of each due tick goes through the hrtimer
 * softirq and the work item as in service, as the deadlines pass.  With
 * a tick of @tick_ns: one jiffy wakes the CPU as often as the timer
 * wheel does (like for like), 1 ms up to ten times as often.
 */
static u64 expire_htwheel(unsigned long n, u64 tick_ns, bool tw_slack,
			  const char *who)
{
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 base, d = 0;

	w = ex_wheel_fill(n, &base, ex_lead_ns, 0, false, tick_ns, tw_slack);
	if (!w)
		return 0;
	if (ex_armed_in_time(who, n, base))
		d = ex_busy_until_done(who, n, base + ex_lead_ns);
	if (d) {
		htw_wheel_get_stats(w, &st);
		record(S_EXP, "worst lateness", n, who, "us", st.max_late_ns);
	}
	htw_wheel_destroy(w);
	return d;
}

/*
 * htwheel, storm: a wheel held (its hrtimer may fire, its runs do
 * nothing; interrupts stay on) while it is filled and the tick passes;
 * releasing it arms the hrtimer for the due tick at once, and the storm
 * goes through the hrtimer softirq and the work item.  Release to last.
 */
static u64 storm_htwheel(unsigned long n)
{
	struct htw_wheel *w;
	u64 base, t0, d = 0;

	w = ex_wheel_fill(n, &base, 0, BENCH_TICK_NS, true, BENCH_TICK_NS, false);
	if (!w)
		return 0;
	sleep_until(base + 3 * BENCH_TICK_NS);
	t0 = ktime_get_ns();
	WRITE_ONCE(*obs_t0, t0);
	htw_resume(w);
	if (ex_wait(W_HTW, n))
		d = READ_ONCE(ex_last_ns) - t0;
	htw_wheel_destroy(w);
	return d;
}

/*
 * The kernel's timers: arrays, no allocation, so nothing is freed on
 * expiry on either side (htwheel's records stay queued).
 */
static void *ex_kernel_alloc(bool hrt, unsigned long n)
{
	struct timer_list *tl = NULL;
	struct hrtimer *hr = NULL;
	unsigned long i;

	if (hrt)
		hr = kvcalloc(n, sizeof(*hr), GFP_KERNEL);
	else
		tl = kvcalloc(n, sizeof(*tl), GFP_KERNEL);
	for (i = 0; hr && i < n; i++)
		htw_hrtimer_setup(&hr[i], ex_hr_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_ABS);
	for (i = 0; tl && i < n; i++)
		timer_setup(&tl[i], ex_tl_fn, 0);
	ex_arm_start(n);
	return hr ? (void *)hr : (void *)tl;
}

static void ex_kernel_free(bool hrt, void *timers, unsigned long n)
{
	struct timer_list *tl = timers;
	struct hrtimer *hr = timers;
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (hrt)
			hrtimer_cancel(&hr[i]);
		else
			timer_delete_sync(&tl[i]);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	kvfree(timers);
}

/*
 * hrtimer and timer_list, spread: each expires through one hard
 * interrupt (hrtimer) or timer softirq (timer_list) per due instant, as
 * the deadlines pass.
 */
static u64 expire_kernel(bool hrt, unsigned long n)
{
	const char *who = hrt ? W_HR_EX : W_TL_EX;
	struct timer_list *tl;
	struct hrtimer *hr;
	unsigned long i, j0;
	u64 base, d = 0;
	void *timers;

	timers = ex_kernel_alloc(hrt, n);
	if (!timers) {
		error("alloc", who, n, -ENOMEM);
		return 0;
	}
	hr = timers;
	tl = timers;
	base = ktime_get_ns();
	j0 = jiffies;
	ex_tl_worst_late_ns = 0;
	ex_tl_base_ns = base;
	ex_tl = hrt ? NULL : tl;
	for (i = 0; i < n; i++) {
		if (hrt)
			hrtimer_start(&hr[i], ns_to_ktime(base + ex_lead_ns + ex_delay[i]),
				      HRTIMER_MODE_ABS);
		else
			mod_timer(&tl[i], j0 + nsecs_to_jiffies(ex_lead_ns + ex_delay[i]) + 1);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	if (ex_armed_in_time(who, n, base))
		d = ex_busy_until_done(who, n, base + ex_lead_ns);
	if (d && !hrt)
		record(S_EXP, "worst lateness", n, who, "us", ex_tl_worst_late_ns);
	ex_tl = NULL;
	ex_kernel_free(hrt, timers, n);
	return d;
}

/*
 * timer_list, storm: n timers due in one jiffy ex_lead_ns ahead, expired
 * by one timer softirq as that jiffy passes.  From the first callback to
 * the last: the interrupt and the softirq's entry before the first one
 * are not counted, a few microseconds in the peer's favour.
 */
static u64 storm_kernel(unsigned long n)
{
	const char *who = W_TL_EX;
	struct timer_list *tl;
	unsigned long i, due;
	u64 base, d = 0;

	tl = ex_kernel_alloc(false, n);
	if (!tl) {
		error("alloc", who, n, -ENOMEM);
		return 0;
	}
	base = ktime_get_ns();
	due = jiffies + nsecs_to_jiffies(ex_lead_ns) + 1;
	for (i = 0; i < n; i++) {
		mod_timer(&tl[i], due);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	if (ex_armed_in_time(who, n, base) && ex_wait(who, n))
		d = READ_ONCE(ex_last_ns) - READ_ONCE(ex_first_ns);
	ex_kernel_free(false, tl, n);
	return d;
}

static void run_expiry(unsigned long n)
{
	static const unsigned int order[2][5] = {
		{ 0, 1, 2, 3, 4 }, { 4, 3, 2, 1, 0 },
	};
	const char *who[5] = { W_HTW, W_HR_EX, W_TL_EX, W_HTW_MS, W_HTW_EXACT };
	cpumask_var_t saved;
	unsigned long i;
	unsigned int j;
	u64 d;

	ex_delay = kvmalloc_array(n, sizeof(*ex_delay), GFP_KERNEL);
	if (!ex_delay) {
		error("alloc", "expiry", n, -ENOMEM);
		return;
	}
	/* Armed, expired and accounted on one CPU, with their work items. */
	if (!pin_here(&saved)) {
		error("alloc", "expiry cpumask", n, -ENOMEM);
		kvfree(ex_delay);
		return;
	}
	draws_start(n, 2);
	for (i = 0; i < n; i++)
		ex_delay[i] = draw_delay(EX_EXP_MIN, EX_EXP_MAX);
	for (j = 0; j < ARRAY_SIZE(order[0]); j++) {
		unsigned int c = order[cur_rep & 1][j];

		if (c == 0)
			d = expire_htwheel(n, TICK_NSEC, true, W_HTW);
		else if (c == 3)
			d = expire_htwheel(n, BENCH_TICK_NS, false, W_HTW_MS);
		else if (c == 4)
			d = expire_htwheel(n, TICK_NSEC, false, W_HTW_EXACT);
		else
			d = expire_kernel(c == 1, n);
		if (d)
			record(S_EXP, "expiry per timer", n, who[c], "ns",
			       div64_u64(d * 1000, n));
	}
	unpin(saved);
	kvfree(ex_delay);
	ex_delay = NULL;
}

/* ---- storm: n due in one tick, a SCHED_FIFO observer on the CPU ---- */

static u64 obs_release, obs_end, obs_worst;
static DECLARE_COMPLETION(obs_running);

/*
 * Wakes every observer_us; its delay counts from the later of its due
 * time and the release (htwheel's release, the timer_list's first
 * callback), so the fill before it does not, and only for wake-ups due
 * before the storm ended (obs_end), so the teardown after it does not
 * either.
 */
static int observer_fn(void *arg)
{
	u64 period = (u64)observer_us * NSEC_PER_USEC, target, now, from, t0;
	ktime_t at;

	complete(&obs_running);
	while (!kthread_should_stop()) {
		target = ktime_get_ns() + period;
		at = ns_to_ktime(target);
		set_current_state(TASK_INTERRUPTIBLE);
		schedule_hrtimeout(&at, HRTIMER_MODE_ABS);
		now = ktime_get_ns();
		t0 = READ_ONCE(obs_release);
		if (!t0 || now <= t0)
			continue;
		if (READ_ONCE(obs_end) && target >= READ_ONCE(obs_end))
			continue;
		from = max(target, t0);
		if (now > from && now - from > obs_worst)
			WRITE_ONCE(obs_worst, now - from);
	}
	return 0;
}

static void run_storm(unsigned long n)
{
	static const char *const who[2] = {
		W_HTW, "timer_list (timer softirq), all due in one jiffy",
	};
	struct task_struct *obs;
	cpumask_var_t saved;
	unsigned int j, c;
	u64 d;

	/* The expiry, its work item and the observer share one CPU. */
	if (!pin_here(&saved))
		return;
	for (j = 0; j < 2; j++) {
		c = (j + cur_rep) & 1;
		WRITE_ONCE(obs_release, 0);
		WRITE_ONCE(obs_end, 0);
		WRITE_ONCE(obs_worst, 0);
		obs = kthread_create(observer_fn, NULL, "htwb_observer");
		if (IS_ERR(obs)) {
			error("observer", who[c], n, PTR_ERR(obs));
			continue;
		}
		kthread_bind(obs, ex_cpu);
		sched_set_fifo(obs);
		get_task_struct(obs);
		reinit_completion(&obs_running);
		wake_up_process(obs);
		/* Running and sleeping on its period before the storm is built. */
		wait_for_completion(&obs_running);
		usleep_range(2 * observer_us, 4 * observer_us);
		obs_t0 = &obs_release;
		obs_t1 = &obs_end;
		d = c == 0 ? storm_htwheel(n) : storm_kernel(n);
		obs_t0 = NULL;
		obs_t1 = NULL;
		kthread_stop(obs);
		put_task_struct(obs);
		if (!d)
			continue;
		record(S_STORM, "tick duration", n, who[c], "us", d);
		record(S_STORM, "longest SCHED_FIFO wake-up delay", n, who[c], "us",
		       READ_ONCE(obs_worst));
	}
	unpin(saved);
}

/* ---- driver ---- */

/* Picoseconds per op_clock() read. */
static u64 clock_read_ps(void)
{
	u64 c0, c1 = 0;
	unsigned int i;

	c0 = op_clock();
	for (i = 0; i < 1024; i++)
		c1 = op_clock();
	return div_u64(op_ps(c1 - c0), 1024);
}

static int run_size(unsigned long n)
{
	unsigned long cap = n + batch;
	unsigned int j, i;
	int ret = 0;

	dl = kvmalloc_array(cap, sizeof(*dl), GFP_KERNEL);
	perm = kvmalloc_array(cap, sizeof(*perm), GFP_KERNEL);
	idx = kvmalloc_array(batch, sizeof(*idx), GFP_KERNEL);
	nd = kvmalloc_array(batch, sizeof(*nd), GFP_KERNEL);
	mv = kvmalloc_array(batch, sizeof(*mv), GFP_KERNEL);
	for (i = 0; i < ARRAY_SIZE(acc); i++)
		acc[i].op_ns = kvmalloc_array((u64)batch * rounds,
					      sizeof(u64), GFP_KERNEL);
	if (!dl || !perm || !idx || !nd || !mv || !acc[0].op_ns || !acc[1].op_ns ||
	    !acc[2].op_ns || !acc[3].op_ns) {
		ret = -ENOMEM;
		goto out;
	}
	ex_lead_ns = EX_LEAD_MIN_NS + n * EX_LEAD_PER_TIMER_NS;
	for (cur_rep = 0; cur_rep <= reps; cur_rep++) {
		for (j = 0; ops && j < NR_C; j++) {
			enum cid c = cur_rep & 1 ? NR_C - 1 - j : j;

			ret = run_contender(c, n);
			if (ret) {
				error("setup", c_who[c], n, ret);
				goto out;
			}
		}
		if (expiry)
			run_expiry(n);
	}
	if (expiry)
		emit("meta\tin-kernel expiry lead n %lu\t%llu ms, arming to first deadline\n",
		     n, div_u64(ex_lead_ns, NSEC_PER_MSEC));
out:
	for (i = 0; i < ARRAY_SIZE(acc); i++) {
		kvfree(acc[i].op_ns);
		acc[i].op_ns = NULL;
	}
	kvfree(dl);
	kvfree(perm);
	kvfree(idx);
	kvfree(nd);
	kvfree(mv);
	return ret;
}

/* The next size of a comma-separated list; false at its end. */
static bool next_size(char **cur, unsigned long *n)
{
	char *tok;

	while ((tok = strsep(cur, ",")) != NULL) {
		/* An empty list (storm= alone) asks for none. */
		if (!*tok)
			continue;
		if (!kstrtoul(tok, 0, n) && *n && *n <= HTW_MAX_PENDING - batch)
			return true;
		emit("meta\tsize refused\t%s\n", tok);
	}
	return false;
}

static void run_all(void)
{
	char *list, *cur;
	unsigned long n;

	list = kstrdup(sizes, GFP_KERNEL);
	cur = list;
	while (list && next_size(&cur, &n))
		run_size(n);
	kfree(list);
	if (!expiry)
		return;
	list = kstrdup(storm, GFP_KERNEL);
	cur = list;
	while (list && next_size(&cur, &n)) {
		ex_lead_ns = EX_LEAD_MIN_NS + n * EX_LEAD_PER_TIMER_NS;
		for (cur_rep = 0; cur_rep <= reps; cur_rep++)
			run_storm(n);
	}
	kfree(list);
}

static ssize_t results_read(struct file *file, char __user *buf, size_t len,
			    loff_t *ppos)
{
	return simple_read_from_buffer(buf, len, ppos, out_buf, out_len);
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
	.llseek = default_llseek,
};

static struct dentry *results_dentry;

static int __init htw_bench_init(void)
{
	u64 ps;

	out_buf = kvzalloc(OUT_SIZE, GFP_KERNEL);
	if (!out_buf)
		return -ENOMEM;
	if (!reps || !batch || rounds < 2) {
		kvfree(out_buf);
		return -EINVAL;
	}
	/* Like htwheel's timer cache: charged to the caller's memory cgroup. */
	hr_cache = kmem_cache_create("htwb_hrtimer", sizeof(struct hr_obj), 0,
				     SLAB_ACCOUNT, NULL);
	tl_cache = kmem_cache_create("htwb_timer_list", sizeof(struct tl_obj), 0,
				     SLAB_ACCOUNT, NULL);
	if (!hr_cache || !tl_cache) {
		kmem_cache_destroy(hr_cache);
		kmem_cache_destroy(tl_cache);
		kvfree(out_buf);
		return -ENOMEM;
	}
	emit("# htwheel_bench: sample format of Documentation/benchmark.rst\n");
	emit("meta\tseed\t%u\n", seed);
	emit("meta\tin-kernel repetitions\t%u after 1 warm-up\n", reps);
	emit("meta\tin-kernel batch k\t%u operations per round at every n, %u rounds per phase\n",
	     batch, rounds);
	emit("meta\tin-kernel order\teven repetitions htwheel first, odd ones htwheel last\n");
	op_clock_calibrate();
	ps = clock_read_ps();
	emit("meta\tin-kernel per-op clock\trdtsc, %llu cycles in %llu ns, read %llu.%03llu ns\n",
	     cal_cycles, cal_ns, div_u64(ps, 1000), ps % 1000);
	emit("meta\tin-kernel htwheel re-arm\t%s\n",
	     "htw_wheel_rearm() in place; the cases \"..., cancel+schedule\" take a new handle");
	emit("meta\tin-kernel htwheel geometry\ttick_ns %llu slots %u\n",
	     (u64)BENCH_TICK_NS, BENCH_SLOTS);
	emit("meta\tin-kernel hz\t%u\n", HZ);
	emit("meta\tsizeof struct timer_list\t%zu\n", sizeof(struct timer_list));
	emit("meta\tsizeof struct hrtimer\t%zu\n", sizeof(struct hrtimer));
	emit("meta\tin-kernel cpus\t%u online\n", num_online_cpus());
	emit("meta\tslab_size htwb_hrtimer (hrtimer + cookie)\t%lu\n",
	     slab_attr("htwb_hrtimer", "slab_size"));
	emit("meta\tslab_size htwb_timer_list (timer_list + cookie)\t%lu\n",
	     slab_attr("htwb_timer_list", "slab_size"));

	run_all();
	emit("meta\tin-kernel errors\t%lu\n", errors);
	emit("# done\n");
	kmem_cache_destroy(hr_cache);
	kmem_cache_destroy(tl_cache);
	results_dentry = debugfs_create_file("htwheel_bench", 0444, NULL, NULL,
					     &results_fops);
	return 0;
}

static void __exit htw_bench_exit(void)
{
	debugfs_remove(results_dentry);
	kvfree(out_buf);
}

module_init(htw_bench_init);
module_exit(htw_bench_exit);

MODULE_DESCRIPTION("htwheel benchmark against hrtimers and the timer wheel");
MODULE_LICENSE("GPL");
