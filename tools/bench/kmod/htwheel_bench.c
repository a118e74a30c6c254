// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel_bench: in-kernel benchmark of the htwheel core against the
 * kernel's own timers (hrtimers and the timer wheel), run by `make bench`.
 *
 * Loading the module runs every case once and keeps the results, one line
 * per measurement, in /sys/kernel/debug/htwheel_bench:
 *
 *	<contender> <n> <metric> <picoseconds per operation>
 *
 * All contenders get the same pseudo-random delays (fixed seed).  This
 * module reports; it never judges a timing.
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
#include <linux/sort.h>
#include <linux/atomic.h>

#include "htw_test_hooks.h"
#include "htw_tick.h"
#include "htw_compat.h"

MODULE_IMPORT_NS(HTWHEEL);
#if IS_ENABLED(CONFIG_KUNIT)
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
#endif

static char *sizes = "1000,10000,100000,1000000";
module_param(sizes, charp, 0444);
MODULE_PARM_DESC(sizes, "Comma-separated numbers of pending timers");

static unsigned int seed = 20240601;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Seed of the delays");

static unsigned int sample_ops = 16384;
module_param(sample_ops, uint, 0444);
MODULE_PARM_DESC(sample_ops, "Schedule/cancel operations timed at each size");

static bool expiry = true;
module_param(expiry, bool, 0444);
MODULE_PARM_DESC(expiry, "Also measure expiry (interrupts off while arming)");

/*
 * Delays are log-uniform: 2^e ns plus up to 2^e ns, e drawn uniformly.
 * Schedule/cancel: 8.6 s .. 73 min, so nothing fires while we measure
 * (levels 1 and 2 of a 1 ms x 512 wheel).  Expiry: 1 ms .. 2.1 s (levels 0
 * and 1, so cascades are part of the cost).
 */
#define SC_EXP_MIN	33
#define SC_EXP_MAX	42
#define EX_EXP_MIN	20
#define EX_EXP_MAX	31
#define EX_SPAN_NS	BIT_ULL(EX_EXP_MAX)

#define BENCH_TICK_NS	NSEC_PER_MSEC
#define BENCH_SLOTS	512
#define MAX_ROUNDS	256
#define RESCHED_EVERY	4096

static char *out_buf;
static size_t out_len;
#define OUT_SIZE	(64 * 1024)

static __printf(1, 2) void emit(const char *fmt, ...)
{
	va_list args;

	if (out_len >= OUT_SIZE)
		return;
	va_start(args, fmt);
	out_len += vscnprintf(out_buf + out_len, OUT_SIZE - out_len, fmt, args);
	va_end(args);
}

/* Picoseconds per operation, so that user space gets sub-ns precision. */
static void report(const char *who, unsigned long n, const char *metric,
		   u64 ns, u64 ops)
{
	emit("%s %lu %s %llu\n", who, n, metric,
	     ops ? div64_u64(ns * 1000, ops) : 0);
	pr_info("htwheel_bench: %s n=%lu %s %llu.%03llu ns\n", who, n, metric,
		ops ? div64_u64(ns, ops) : 0,
		ops ? div64_u64(ns * 1000, ops) % 1000 : 0);
}

static u64 *sc_delay;		/* schedule/cancel delays, n + k */
static u64 *ex_delay;		/* expiry delays, n */
static u32 *perm;		/* cancel order of the fill */

static void fill_delays(u64 *d, size_t n, u32 emin, u32 emax,
			struct rnd_state *rs)
{
	size_t i;

	for (i = 0; i < n; i++) {
		u32 e = emin + prandom_u32_state(rs) % (emax - emin);
		u64 lo = prandom_u32_state(rs);
		u64 r = ((u64)prandom_u32_state(rs) << 32 | lo) & ((1ULL << e) - 1);

		d[i] = (1ULL << e) + r;
	}
}

static void shuffle(u32 *p, size_t n, struct rnd_state *rs)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n - 1; i > 0; i--) {
		size_t j = prandom_u32_state(rs) % (i + 1);

		swap(p[i], p[j]);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median of per-round times, scaled to the total number of operations. */
static u64 median_total(u64 *t, unsigned int rounds)
{
	sort(t, rounds, sizeof(*t), cmp_u64, NULL);
	return t[rounds / 2] * rounds;
}

/*
 * Every contender implements the same five steps on its own timers:
 * fill to n pending, then rounds of k schedules and k cancels (timed, at
 * n pending), then cancel the n (timed, in random order).
 */
struct contender {
	const char *name;
	int (*setup)(unsigned long cap);
	void (*teardown)(void);
	void (*arm)(unsigned long i, u64 base_ns, u64 delay_ns);
	void (*disarm)(unsigned long i);
	u64 (*now)(void);
	int err;
};

static u64 bench_ktime(void)
{
	return ktime_get_ns();
}

/* ---- htwheel ---- */

static struct htw_wheel *hw;
static u64 *hw_handle;

static int hw_setup(unsigned long cap)
{
	struct htw_geometry geo = {
		.tick_ns = BENCH_TICK_NS,
		.slots = BENCH_SLOTS,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = cap,
	};

	hw_handle = kvcalloc(cap, sizeof(*hw_handle), GFP_KERNEL);
	if (!hw_handle)
		return -ENOMEM;
	hw = htw_wheel_create(&geo, NULL, NULL, GFP_KERNEL);
	if (IS_ERR(hw)) {
		kvfree(hw_handle);
		return PTR_ERR(hw);
	}
	return 0;
}

static void hw_teardown(void)
{
	htw_wheel_destroy(hw);
	kvfree(hw_handle);
}

static struct contender htwheel_c;

static void hw_arm(unsigned long i, u64 base_ns, u64 delay_ns)
{
	struct htw_timer_spec spec = {
		.cookie = i,
		.deadline_ns = base_ns + delay_ns,
	};

	if (htw_wheel_schedule(hw, &spec, &hw_handle[i]))
		htwheel_c.err++;
}

static void hw_disarm(unsigned long i)
{
	if (htw_wheel_cancel(hw, hw_handle[i]) != HTW_WHEEL_CANCEL_OK)
		htwheel_c.err++;
}

static u64 hw_now(void)
{
	return htw_wheel_now(hw);
}

static struct contender htwheel_c = {
	.name = "htwheel", .setup = hw_setup, .teardown = hw_teardown,
	.arm = hw_arm, .disarm = hw_disarm, .now = hw_now,
};

/* ---- hrtimer ---- */

static struct hrtimer *hrt;
static atomic_t hr_fired;
static unsigned long hr_expect;
static u64 hr_last_ns;

static enum hrtimer_restart hr_fn(struct hrtimer *t)
{
	if (atomic_inc_return(&hr_fired) == hr_expect)
		WRITE_ONCE(hr_last_ns, ktime_get_ns());
	return HRTIMER_NORESTART;
}

static int hr_setup(unsigned long cap)
{
	unsigned long i;

	hrt = kvcalloc(cap, sizeof(*hrt), GFP_KERNEL);
	if (!hrt)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		htw_hrtimer_setup(&hrt[i], hr_fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	return 0;
}

static void hr_teardown(void)
{
	kvfree(hrt);
}

static void hr_arm(unsigned long i, u64 base_ns, u64 delay_ns)
{
	hrtimer_start(&hrt[i], ns_to_ktime(base_ns + delay_ns), HRTIMER_MODE_ABS);
}

static struct contender hrtimer_c;

static void hr_disarm(unsigned long i)
{
	if (hrtimer_cancel(&hrt[i]) != 1)
		hrtimer_c.err++;
}

static struct contender hrtimer_c = {
	.name = "hrtimer", .setup = hr_setup, .teardown = hr_teardown,
	.arm = hr_arm, .disarm = hr_disarm, .now = bench_ktime,
};

/* ---- timer_list (the kernel timer wheel) ---- */

static struct timer_list *tl;
static atomic_t tl_fired;
static unsigned long tl_expect;
static u64 tl_last_ns;
static unsigned long tl_base_jiffies;

static void tl_fn(struct timer_list *t)
{
	if (atomic_inc_return(&tl_fired) == tl_expect)
		WRITE_ONCE(tl_last_ns, ktime_get_ns());
}

static int tl_setup(unsigned long cap)
{
	unsigned long i;

	tl = kvcalloc(cap, sizeof(*tl), GFP_KERNEL);
	if (!tl)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		timer_setup(&tl[i], tl_fn, 0);
	return 0;
}

static void tl_teardown(void)
{
	kvfree(tl);
}

/* base_ns is ignored: timer_list works in jiffies from tl_base_jiffies. */
static void tl_arm(unsigned long i, u64 base_ns, u64 delay_ns)
{
	mod_timer(&tl[i], tl_base_jiffies + nsecs_to_jiffies(delay_ns) + 1);
}

static struct contender timer_c;

static void tl_disarm(unsigned long i)
{
	if (timer_delete(&tl[i]) != 1)
		timer_c.err++;
}

static u64 tl_now(void)
{
	tl_base_jiffies = jiffies;
	return ktime_get_ns();
}

static struct contender timer_c = {
	.name = "timer", .setup = tl_setup, .teardown = tl_teardown,
	.arm = tl_arm, .disarm = tl_disarm, .now = tl_now,
};

/*
 * timer_list in a 64-byte object allocated per schedule and freed per
 * cancel: what the kernel timer wheel costs when, like htwheel, it has to
 * own the memory of the timers it is given (htwheel allocates a 64-byte
 * struct htw_timer in every schedule).
 */
struct tla_obj {
	struct timer_list timer;
	u64 cookie;
	u64 pad[2];
};

static struct kmem_cache *tla_cache;
static struct tla_obj **tla;

static int tla_setup(unsigned long cap)
{
	tla = kvcalloc(cap, sizeof(*tla), GFP_KERNEL);
	if (!tla)
		return -ENOMEM;
	tla_cache = kmem_cache_create("htwb_timer", sizeof(struct tla_obj),
				      0, 0, NULL);
	if (!tla_cache) {
		kvfree(tla);
		return -ENOMEM;
	}
	return 0;
}

static void tla_teardown(void)
{
	kmem_cache_destroy(tla_cache);
	kvfree(tla);
}

static struct contender timer_alloc_c;

static void tla_arm(unsigned long i, u64 base_ns, u64 delay_ns)
{
	struct tla_obj *o = kmem_cache_alloc(tla_cache, GFP_KERNEL);

	tla[i] = o;
	if (!o) {
		timer_alloc_c.err++;
		return;
	}
	o->cookie = i;
	timer_setup(&o->timer, tl_fn, 0);
	mod_timer(&o->timer, tl_base_jiffies + nsecs_to_jiffies(delay_ns) + 1);
}

static void tla_disarm(unsigned long i)
{
	if (!tla[i] || timer_delete(&tla[i]->timer) != 1)
		timer_alloc_c.err++;
	kmem_cache_free(tla_cache, tla[i]);
	tla[i] = NULL;
}

static struct contender timer_alloc_c = {
	.name = "timer_alloc", .setup = tla_setup, .teardown = tla_teardown,
	.arm = tla_arm, .disarm = tla_disarm, .now = tl_now,
};

static struct contender *contenders[] = {
	&htwheel_c, &hrtimer_c, &timer_c, &timer_alloc_c,
};

/* ---- schedule / cancel at n pending ---- */

static u64 round_t[2][MAX_ROUNDS];

static int bench_sched_cancel(struct contender *c, unsigned long n)
{
	unsigned long k = clamp_t(unsigned long, n / 4, 1, 1024);
	unsigned int rounds = clamp_t(unsigned int, sample_ops / k, 3, MAX_ROUNDS);
	unsigned long i, r;
	u64 t0, t1, base;
	int ret;

	ret = c->setup(n + k);
	if (ret)
		return ret;
	c->err = 0;

	base = c->now();
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		c->arm(i, base, sc_delay[i]);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	t1 = ktime_get_ns();
	report(c->name, n, "fill", t1 - t0, n);

	for (r = 0; r < rounds; r++) {
		base = c->now();
		t0 = ktime_get_ns();
		for (i = n; i < n + k; i++)
			c->arm(i, base, sc_delay[i]);
		t1 = ktime_get_ns();
		round_t[0][r] = t1 - t0;
		t0 = ktime_get_ns();
		for (i = n; i < n + k; i++)
			c->disarm(i);
		t1 = ktime_get_ns();
		round_t[1][r] = t1 - t0;
		cond_resched();
	}
	report(c->name, n, "schedule", median_total(round_t[0], rounds),
	       (u64)k * rounds);
	report(c->name, n, "cancel", median_total(round_t[1], rounds),
	       (u64)k * rounds);

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		c->disarm(perm[i]);
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	t1 = ktime_get_ns();
	report(c->name, n, "drain", t1 - t0, n);
	emit("%s %lu errors %d\n", c->name, n, c->err);

	c->teardown();
	return 0;
}

/* ---- expiry ---- */

/*
 * htwheel: a manual-clock wheel, so that the whole expiry is one tick run
 * we can time: n timers, the clock jumps past the last deadline, then the
 * run (cascades included) and taking every record off the ready queue.
 */
static int bench_expiry_htwheel(unsigned long n)
{
	struct htw_geometry geo = {
		.tick_ns = BENCH_TICK_NS,
		.slots = BENCH_SLOTS,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = n,
	};
	const u64 start = 1000 * NSEC_PER_SEC;
	struct htw_wheel_expiry *rec;
	struct htw_wheel_stats st;
	struct htw_wheel *w;
	u64 t0, t1, t2, got = 0, h;
	unsigned long i;
	size_t m;
	int err = 0;

	rec = kmalloc_array(64, sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	w = htw_wheel_create_manual(&geo, NULL, NULL, start);
	if (IS_ERR(w)) {
		kfree(rec);
		return PTR_ERR(w);
	}
	for (i = 0; i < n; i++) {
		struct htw_timer_spec spec = {
			.cookie = i, .deadline_ns = start + ex_delay[i],
		};

		if (htw_wheel_schedule(w, &spec, &h))
			err++;
		if (!(i % RESCHED_EVERY))
			cond_resched();
	}
	htw_wheel_set_now(w, start + EX_SPAN_NS + 2 * BENCH_TICK_NS);
	t0 = ktime_get_ns();
	htw_wheel_run_tick(w);
	t1 = ktime_get_ns();
	while ((m = htw_wheel_peek_ready(w, rec, 64))) {
		htw_wheel_consume_ready(w, rec, m);
		got += m;
	}
	t2 = ktime_get_ns();
	htw_wheel_get_stats(w, &st);
	report("htwheel", n, "expiry", t2 - t0, n);
	report("htwheel", n, "expiry_tick", t1 - t0, n);
	emit("htwheel %lu expiry_cascaded %llu\n", n, st.cascaded);
	emit("htwheel %lu expiry_errors %llu\n", n, err + (n - got));
	htw_wheel_destroy(w);
	kfree(rec);
	return 0;
}

/*
 * hrtimer and timer_list: arm n timers with interrupts off, wait past the
 * last deadline, then enable interrupts: one interrupt (hrtimer) or one
 * timer softirq (timer_list) expires them all.  Time from enabling to the
 * last callback, per timer.
 */
static int bench_expiry_kernel(struct contender *c, unsigned long n,
			       atomic_t *fired, unsigned long *expect,
			       u64 *last_ns)
{
	unsigned long flags, i;
	u64 base, t0, end, deadline;
	int ret;

	ret = c->setup(n);
	if (ret)
		return ret;
	atomic_set(fired, 0);
	*expect = n;
	WRITE_ONCE(*last_ns, 0);

	local_irq_save(flags);
	base = c->now();
	for (i = 0; i < n; i++)
		c->arm(i, base, ex_delay[i]);
	/* timer_list rounds up to jiffies: wait two more. */
	end = base + EX_SPAN_NS + 3 * NSEC_PER_SEC / HZ;
	while (ktime_get_ns() < end)
		cpu_relax();
	t0 = ktime_get_ns();
	local_irq_restore(flags);

	deadline = t0 + 60 * NSEC_PER_SEC;
	/*
	 * The callback that makes the count n stores the time after its
	 * increment, maybe on another CPU: wait for the time too.
	 */
	while ((atomic_read(fired) < n || !READ_ONCE(*last_ns)) &&
	       ktime_get_ns() < deadline)
		cond_resched();
	if (atomic_read(fired) < n) {
		emit("%s %lu expiry_errors %lu\n", c->name, n,
		     n - atomic_read(fired));
		for (i = 0; i < n; i++)
			c->disarm(i);
	} else {
		report(c->name, n, "expiry", READ_ONCE(*last_ns) - t0, n);
		emit("%s %lu expiry_errors 0\n", c->name, n);
	}
	c->teardown();
	return 0;
}

/* ---- driver ---- */

static int run_size(unsigned long n)
{
	unsigned long k = clamp_t(unsigned long, n / 4, 1, 1024);
	struct rnd_state rs;
	unsigned int i;
	int ret = -ENOMEM;

	sc_delay = kvmalloc_array(n + k, sizeof(*sc_delay), GFP_KERNEL);
	ex_delay = kvmalloc_array(n, sizeof(*ex_delay), GFP_KERNEL);
	perm = kvmalloc_array(n, sizeof(*perm), GFP_KERNEL);
	if (!sc_delay || !ex_delay || !perm)
		goto out;
	prandom_seed_state(&rs, seed ^ n);
	fill_delays(sc_delay, n + k, SC_EXP_MIN, SC_EXP_MAX, &rs);
	fill_delays(ex_delay, n, EX_EXP_MIN, EX_EXP_MAX, &rs);
	shuffle(perm, n, &rs);

	for (i = 0; i < ARRAY_SIZE(contenders); i++) {
		ret = bench_sched_cancel(contenders[i], n);
		if (ret)
			goto out;
	}
	if (expiry) {
		ret = bench_expiry_htwheel(n);
		if (!ret)
			ret = bench_expiry_kernel(&hrtimer_c, n, &hr_fired,
						  &hr_expect, &hr_last_ns);
		if (!ret)
			ret = bench_expiry_kernel(&timer_c, n, &tl_fired,
						  &tl_expect, &tl_last_ns);
	}
out:
	if (ret)
		emit("error %lu %d\n", n, ret);
	kvfree(sc_delay);
	kvfree(ex_delay);
	kvfree(perm);
	return ret;
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
	char *list, *cur, *tok;
	unsigned long n;

	out_buf = kvzalloc(OUT_SIZE, GFP_KERNEL);
	list = kstrdup(sizes, GFP_KERNEL);
	if (!out_buf || !list) {
		kvfree(out_buf);
		kfree(list);
		return -ENOMEM;
	}
	emit("# htwheel_bench: contender n metric ps_per_op\n");
	emit("config tick_ns %llu slots %u hz %u seed %u\n",
	     (u64)BENCH_TICK_NS, BENCH_SLOTS, HZ, seed);
	cur = list;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (kstrtoul(tok, 0, &n) || !n)
			continue;
		run_size(n);
	}
	kfree(list);
	emit("done\n");
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
