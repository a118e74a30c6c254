// SPDX-License-Identifier: GPL-2.0
/*
 * The one object every file of the KUnit module htwheel_kunit.ko shares:
 * its module information and the helpers htw_kunit.h declares.  Which
 * suites the module holds is the list in Kbuild; each suite file
 * registers its own suites.  htw_kunit_tt_module.c builds the same for
 * the time-travel module, htwheel_kunit_tt.ko.
 */
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "htw_compat.h"
#include "htw_kunit.h"

MODULE_DESCRIPTION("KUnit suites for htwheel");
MODULE_LICENSE("GPL");
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
 * A suite's clock (struct htw_clock): its time is what the test sets, and
 * a wake-up is only the armed_tick the wheel records; it never arms an
 * hrtimer.  It lives as long as the test, and so outlives its wheels.
 */
struct htw_t_clock {
	struct htw_clock clock;
	u64 now;
};

static u64 htw_t_clock_now(const struct htw_wheel *w)
{
	return READ_ONCE(container_of(w->clock, struct htw_t_clock, clock)->now);
}

static void htw_t_clock_arm(struct htw_wheel *w, u64 at)
{
}

static void htw_t_clock_disarm(struct htw_wheel *w)
{
}

const struct htw_clock *htw_t_clock(struct kunit *test, u64 start_ns)
{
	struct htw_t_clock *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->clock = (struct htw_clock) {
		.now = htw_t_clock_now,
		.arm = htw_t_clock_arm,
		.disarm = htw_t_clock_disarm,
	};
	c->now = start_ns;
	return &c->clock;
}

/* Set the time of @w's clock, one of htw_t_clock()'s. */
void htw_t_set_now(struct htw_wheel *w, u64 now_ns)
{
	WRITE_ONCE(container_of(w->clock, struct htw_t_clock, clock)->now, now_ns);
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

	w = htw_wheel_create(&geo, htw_t_clock(test, start_ns), NULL, NULL, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(w));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_destroy_action, w), 0);
	return w;
}

/*
 * Built into a kernel (kunit.py run), the first suites can start before
 * the clock has switched to high resolution, and htw_geometry_normalise()
 * refuses ticks below the hrtimer's resolution, as it must.  So every
 * suite that makes fine wheels waits for the switch first, two seconds at
 * most: a kernel that stays at low resolution fails those cases plainly.
 */
int htw_t_high_res(struct kunit_suite *suite)
{
	unsigned long end = jiffies + 2 * HZ;

	while (hrtimer_resolution > HTW_MIN_TICK_NS && time_before(jiffies, end))
		msleep(20);
	return 0;
}

/* Move the manual clock to @now_ns and run the tick there. */
void htw_t_at(struct htw_wheel *w, u64 now_ns)
{
	htw_t_set_now(w, now_ns);
	htw_run_all(w);
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
 * them in kernel/slab/htw_timer/objects of sysfs.  The cache must be listed
 * under its own name, not merged with others: the harness's kernel boots
 * with slab_nomerge, .kunitconfig turns SLAB_MERGE_DEFAULT off.  The count
 * is exact once nothing is in flight: rcu_barrier() finishes RCU-deferred
 * frees, and writing "1" to .../shrink empties KASAN's quarantine for the
 * cache and flushes the per-CPU slabs, whose free objects "objects" would
 * otherwise count as in use.  It needs CONFIG_SLUB_DEBUG; the suites run
 * alone, so nothing else allocates from the cache meanwhile.
 *
 * sysfs is read through a mount of its own: built into a kernel (kunit.py
 * run), the suites run before user space has mounted /sys.
 */
#define HTW_T_SLAB	"kernel/slab/htw_timer/"

static void htw_t_mntput(void *mnt)
{
	kern_unmount(mnt);
}

static struct file *htw_t_sysfs_open(struct kunit *test, const char *name,
				     int flags)
{
	struct file_system_type *sysfs;
	struct vfsmount *mnt;
	struct file *f;

	sysfs = get_fs_type("sysfs");
	KUNIT_ASSERT_NOT_NULL(test, sysfs);
	mnt = vfs_kern_mount(sysfs, SB_KERNMOUNT, "sysfs", NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mnt), "sysfs: %ld", PTR_ERR(mnt));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, htw_t_mntput, mnt), 0);
	f = file_open_root_mnt(mnt, name, flags, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "%s: %ld", name, PTR_ERR(f));
	kunit_release_action(test, htw_t_mntput, mnt);
	return f;
}

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
	f = htw_t_sysfs_open(test, HTW_T_SLAB "shrink", O_WRONLY);
	n = kernel_write(f, "1", 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_EQ_MSG(test, n, 1, HTW_T_SLAB "shrink: %zd", n);
	f = htw_t_sysfs_open(test, HTW_T_SLAB "objects", O_RDONLY);
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
