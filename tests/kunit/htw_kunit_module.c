// SPDX-License-Identifier: GPL-2.0
/*
 * The one object every file of the KUnit module htwheel_kunit.ko shares:
 * its module information and the helpers htw_kunit.h declares.  Which
 * suites the module holds is the list in Kbuild; each suite file
 * registers its own suites.  htw_kunit_tt_module.c builds the same for
 * the time-travel module, htwheel_kunit_tt.ko.
 */
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "htw_compat.h"
#include "htw_kunit.h"

MODULE_DESCRIPTION("KUnit suites for htwheel");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(HTWHEEL);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* The wheel goes when the test ends, passed or not. */
void htw_t_destroy_action(void *wheel)
{
	htw_wheel_destroy(wheel);
}

struct htw_geometry htw_t_geo(u64 tick_ns, u32 slots, u64 max_pending)
{
	return (struct htw_geometry) {
		.tick_ns = tick_ns,
		.slots = slots,
		.clockid = CLOCK_MONOTONIC,
		.max_pending = max_pending,
	};
}

/*
 * A manual-clock wheel destroyed when the test ends: its clock only moves
 * when the test sets it and it never arms its hrtimer, so placement,
 * cascading, arming and expiry are checked exactly and fast.
 */
struct htw_wheel *htw_t_manual(struct kunit *test, u64 tick_ns, u32 slots,
			       u64 max_pending, u64 start_ns)
{
	struct htw_geometry geo = htw_t_geo(tick_ns, slots, max_pending);
	struct htw_wheel *w;

	w = htw_wheel_create_manual(&geo, NULL, NULL, start_ns);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	return w;
}

/* Move the manual clock to @now_ns and run the tick there. */
void htw_t_at(struct htw_wheel *w, u64 now_ns)
{
	htw_wheel_set_now(w, now_ns);
	htw_wheel_run_tick(w);
}

/* Schedule a timer that must be accepted; returns its handle. */
u64 htw_t_sched(struct kunit *test, struct htw_wheel *w, u64 cookie,
		u64 deadline, u64 period, u64 slack)
{
	struct htw_timer_spec spec = {
		.cookie = cookie,
		.deadline_ns = deadline,
		.period_ns = period,
		.slack_ns = slack,
	};
	u64 handle = 0;

	KUNIT_ASSERT_EQ(test, htw_wheel_schedule(w, &spec, &handle), 0);
	KUNIT_ASSERT_NE(test, handle, 0);
	return handle;
}

/*
 * Take up to @max records off the ready queue; every one is checked
 * against the never-early rule.
 */
size_t htw_t_take(struct kunit *test, struct htw_wheel *w,
		  struct htw_wheel_expiry *out, size_t max)
{
	size_t n = htw_wheel_peek_ready(w, out, max), i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_GE_MSG(test, out[i].fired_ns, out[i].deadline_ns,
				    "cookie %llu fired early", out[i].cookie);
	htw_wheel_consume_ready(w, out, n);
	return n;
}

void htw_t_stats(struct htw_wheel *w, struct htw_wheel_stats *st)
{
	htw_wheel_get_stats(w, st);
}

static int htw_t_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* How many different values @v holds (sorted in place). */
u32 htw_t_distinct(u64 *v, u32 n)
{
	u32 i, d = n ? 1 : 0;

	sort(v, n, sizeof(*v), htw_t_cmp_u64, NULL);
	for (i = 1; i < n; i++)
		d += v[i] != v[i - 1];
	return d;
}

/*
 * The lateness statistics are those of @recs, the records of every expiry
 * of the wheel (one-shot timers): an expiry at clock time fired_ns is
 * fired_ns - deadline_ns late, in bucket 0 below 2 ns, in bucket i for
 * [2^i, 2^(i+1)) ns and in the last one from 2^31 ns on.
 */
void htw_t_expect_lateness(struct kunit *test, const struct htw_wheel_stats *st,
			   const struct htw_wheel_expiry *recs, size_t n)
{
	u64 hist[ARRAY_SIZE(st->late_hist)] = {}, worst = 0, late;
	size_t i;

	for (i = 0; i < n; i++) {
		late = recs[i].fired_ns - recs[i].deadline_ns;
		worst = max(worst, late);
		hist[late < 2 ? 0 : min_t(u32, fls64(late) - 1, ARRAY_SIZE(hist) - 1)]++;
	}
	KUNIT_EXPECT_EQ(test, st->max_late_ns, worst);
	for (i = 0; i < ARRAY_SIZE(hist); i++)
		KUNIT_EXPECT_EQ_MSG(test, st->late_hist[i], hist[i],
				    "late_hist[%zu] ([2^%zu, 2^%zu) ns)", i, i, i + 1);
}

/*
 * The memory, not the module's own counter: live objects of the htw_timer
 * kmem_cache, each a chunk of HTW_IDS_PER_CHUNK timers, as SLUB counts
 * them in /sys/kernel/slab/htw_timer/objects (the test kernel boots with
 * slab_nomerge, so it is listed under its own name).  The count is exact
 * once nothing is in flight: rcu_barrier() finishes RCU-deferred frees, and
 * writing "1" to .../shrink empties KASAN's quarantine for the cache and
 * flushes the per-CPU slabs, whose free objects "objects" would otherwise
 * count as in use.  It needs CONFIG_SLUB_DEBUG (the test kernel has it);
 * the suites run alone, so nothing else allocates from the cache meanwhile.
 */
#define HTW_T_SLAB	"/sys/kernel/slab/htw_timer/"

long htw_t_slab_objects(struct kunit *test)
{
	char buf[64] = "";
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	long v;

	if (!IS_ENABLED(CONFIG_SLUB_DEBUG) || !IS_ENABLED(CONFIG_SYSFS))
		kunit_skip(test, "no SLUB object counts in sysfs");
	rcu_barrier();
	f = filp_open(HTW_T_SLAB "shrink", O_WRONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), HTW_T_SLAB "shrink: %ld", PTR_ERR(f));
	n = kernel_write(f, "1", 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_EQ_MSG(test, n, 1, HTW_T_SLAB "shrink: %zd", n);
	f = filp_open(HTW_T_SLAB "objects", O_RDONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), HTW_T_SLAB "objects: %ld", PTR_ERR(f));
	pos = 0;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_GT_MSG(test, n, 0, HTW_T_SLAB "objects: %zd", n);
	buf[n] = '\0';
	/* "N" or, with NUMA, "N N0=...": the first number is the total. */
	buf[strcspn(buf, "\n ")] = '\0';
	KUNIT_ASSERT_EQ_MSG(test, kstrtol(buf, 10, &v), 0, "objects: '%s'", buf);
	return v;
}
