// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection sweep: every slab allocation and user copy on the
 * open/setup/schedule/cancel/read/drain/eventfd/stats paths is made to fail
 * in turn (fail-nth, failslab and fail_usercopy) and each failure must give
 * a clean errno, keep the instance consistent and usable, and leak nothing
 * (the stage runs a kmemleak scan after the tests).
 *
 * Needs root, CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_USERCOPY and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (the UML debug kernel); skips, saying
 * which is missing, otherwise (Debian's kernels have no fault injection).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define HOUR		(3600ULL * 1000 * MS)
#define MAX_NTH		400
#define DBG		"/sys/kernel/debug"

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Only caches marked SLAB_FAILSLAB fail (cache-filter): all of them but
 * kmemleak's own, which would switch kmemleak off when it fails.
 */
static int faults_enable(void)
{
	char path[512];
	struct dirent *d;
	DIR *dir;

	if (write_file(DBG "/failslab/ignore-gfp-wait", "N") ||
	    write_file(DBG "/failslab/cache-filter", "Y") ||
	    write_file(DBG "/failslab/verbose", "0") ||
	    write_file(DBG "/fail_usercopy/verbose", "0"))
		return -1;
	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || !strncmp(d->d_name, "kmemleak", 8))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", d->d_name);
		write_file(path, "1");	/* merged aliases refuse: fine */
	}
	closedir(dir);
	return 0;
}

/* Why fault injection cannot run here, or NULL if it can. */
static const char *faults_missing(void)
{
	if (getuid())
		return "needs root to arm fault injection";
	if (access("/proc/thread-self/fail-nth", F_OK))
		return "no /proc/thread-self/fail-nth: kernel without CONFIG_FAULT_INJECTION";
	if (access(DBG "/failslab", F_OK))
		return access(DBG, F_OK) || !access(DBG "/fail_usercopy", F_OK) ?
		       "no " DBG "/failslab: kernel without CONFIG_FAILSLAB or debugfs not mounted" :
		       "no " DBG "/failslab: kernel without CONFIG_FAILSLAB";
	if (access(DBG "/fail_usercopy", F_OK))
		return "no " DBG "/fail_usercopy: kernel without CONFIG_FAULT_INJECTION_USERCOPY";
	if (faults_enable())
		return "could not configure failslab and fail_usercopy in " DBG;
	return NULL;
}

/* 1 if the module's timer cache will fail under failslab. */
static int timer_cache_armed(void)
{
	char buf[8] = "";
	int fd = open("/sys/kernel/slab/htw_timer/failslab", O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 1)
		buf[0] = 0;
	close(fd);
	return buf[0] == '1';
}

/* Arm the n-th fault-injection point of this thread. */
static int fail_nth(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return write_file("/proc/thread-self/fail-nth", buf);
}

/* 1 if the armed fault was injected (and disarm either way). */
static int fault_injected(void)
{
	char buf[16] = "";
	int fd = open("/proc/thread-self/fail-nth", O_RDWR), n;

	n = read(fd, buf, sizeof(buf) - 1);
	write(fd, "0", 1);
	close(fd);
	return n > 0 && atoi(buf) == 0;
}


static void stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(fd, HTW_IOC_STATS, st))
		memset(st, 0xff, sizeof(*st));
}

static int wait_ready(int fd, unsigned long long n)
{
	struct htw_stats st;

	for (int i = 0; i < 500; i++) {
		stats(fd, &st);
		if (st.ready >= n)
			return 0;
		poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 10);
	}
	return -1;
}

/* The instance still works: a timer can be scheduled and cancelled. */
static int usable(int fd)
{
	struct htw_timer_entry e;
	struct htw_cancel_entry c = { 0 };
	struct htw_cancel req = { .entries = (uintptr_t)&c, .count = 1 };

	if (htw_test_schedule_all(fd, &e, 1, HOUR) != 1)
		return 0;
	c.handle = e.handle;
	return !ioctl(fd, HTW_IOC_CANCEL, &req) && c.result == HTW_CANCELLED;
}

static int clean_errno(int err)
{
	return err == ENOMEM || err == EFAULT;
}

/* What each operation sets up, runs with a fault armed, and checks. */
struct fault_op {
	const char *name;
	int (*prepare)(int fd, void *ctx);
	int (*run)(int fd, void *ctx);	/* >= 0 success, -errno failure */
	/* A success (fault or not): its whole effect is there; NULL or a reason. */
	const char *(*check)(int fd, void *ctx, int ret,
			     const struct htw_stats *before, const struct htw_stats *after);
	int min_points;		/* injection points the operation must reach */
	int min_enomem;		/* failures that must be ENOMEM (a module cache) */
};

struct ctx {
	struct htw_timer_entry e[4];
	struct htw_cancel_entry ce[3];
	struct htw_cancel creq;
	struct htw_expiry rec[4];
	struct htw_unexpired out[4];
	struct htw_stats st;
	int efd;
};

static int prep_none(int fd, void *c) { return 0; }

static int prep_three_pending(int fd, void *c)
{
	return htw_test_schedule_all(fd, ((struct ctx *)c)->e, 3, HOUR) == 3 ? 0 : -1;
}

static int prep_three_ready(int fd, void *c)
{
	if (htw_test_schedule_all(fd, ((struct ctx *)c)->e, 3, 0) != 3)
		return -1;
	return wait_ready(fd, 3);
}

static int run_schedule(int fd, void *c)
{
	int ret = htw_test_schedule_all(fd, ((struct ctx *)c)->e + 3, 1, HOUR);

	return ret < 0 ? -errno : ret;
}

/*
 * A batch that fills the file's first chunk of timers (3 are pending)
 * and needs a second: the one allocation of the module in the batch.
 */
#define BATCH	(HTW_TEST_TIMERS_PER_CHUNK + 100)

static int run_schedule_batch(int fd, void *c)
{
	struct htw_timer_entry e[BATCH];
	int ret = htw_test_schedule_all(fd, e, BATCH, HOUR);

	return ret < 0 ? -errno : ret;
}

static int run_cancel(int fd, void *c)
{
	struct ctx *x = c;

	memset(x->ce, 0xcc, sizeof(x->ce));
	for (int i = 0; i < 3; i++) {
		x->ce[i].handle = i < 2 ? x->e[i].handle : 12345;
		x->ce[i].pad = 0;
	}
	memset(&x->creq, 0, sizeof(x->creq));
	x->creq.entries = (uintptr_t)x->ce;
	x->creq.count = 3;
	return ioctl(fd, HTW_IOC_CANCEL, &x->creq) ? -errno : 0;
}

static int run_read(int fd, void *c)
{
	struct ctx *x = c;
	ssize_t r;

	memset(x->rec, 0xcc, sizeof(x->rec));
	r = read(fd, x->rec, sizeof(x->rec));
	return r < 0 ? -errno : (int)(r / sizeof(x->rec[0]));
}

static int run_drain(int fd, void *c)
{
	struct ctx *x = c;
	struct htw_drain req = { .entries = (uintptr_t)x->out, .count = 4 };

	memset(x->out, 0xcc, sizeof(x->out));
	return ioctl(fd, HTW_IOC_DRAIN, &req) ? -errno : (int)req.drained;
}

static int run_eventfd(int fd, void *c)
{
	struct htw_eventfd req = { .fd = ((struct ctx *)c)->efd };

	return ioctl(fd, HTW_IOC_SET_EVENTFD, &req) ? -errno : 0;
}

static int run_stats(int fd, void *c)
{
	struct ctx *x = c;

	memset(&x->st, 0xcc, sizeof(x->st));
	x->st.flags = 0;
	return ioctl(fd, HTW_IOC_STATS, &x->st) ? -errno : 0;
}

static int run_setup(int fd, void *c)
{
	struct htw_setup s = { .clockid = CLOCK_MONOTONIC, .tick_ns = 2 * MS };

	return ioctl(fd, HTW_IOC_SETUP, &s) ? -errno : 0;
}

/* Two chunks of the module's timer cache, the mapping and a wheel. */
#define TABLE_SLOTS	(HTW_TEST_TIMERS_PER_CHUNK + 15)

/* The table's own descriptor on success. */
static int run_table_create(int fd, void *c)
{
	struct htw_table2_setup ts = { .entries = TABLE_SLOTS };
	int ret = ioctl(fd, HTW_IOC_TABLE2_CREATE, &ts);

	return ret < 0 ? -errno : ret;
}

/* Made whole: its statistics and its mapping; then let go. */
static const char *check_table_create(int fd, void *c, int ret,
				      const struct htw_stats *b, const struct htw_stats *a)
{
	struct htw_table_stats ts = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	const char *why = NULL;
	void *map;

	if (ioctl(ret, HTW_IOC_TABLE2_STATS, &ts) || ts.entries != TABLE_SLOTS)
		why = "the table's statistics are wrong";
	map = mmap(NULL, page, PROT_READ, MAP_SHARED, ret, 0);
	if (map == MAP_FAILED)
		why = "the table does not map";
	else
		munmap(map, page);
	close(ret);
	return why;
}

static const char *check_schedule(int fd, void *c, int ret,
				  const struct htw_stats *b, const struct htw_stats *a)
{
	if (ret != 1)
		return "scheduled other than 1";
	if (!((struct ctx *)c)->e[3].handle)
		return "no handle written";
	if (a->pending != b->pending + 1 || a->scheduled != b->scheduled + 1)
		return "pending or scheduled did not grow by 1";
	return NULL;
}

static const char *check_batch(int fd, void *c, int ret,
			       const struct htw_stats *b, const struct htw_stats *a)
{
	if (ret < 1 || ret > BATCH)
		return "count out of range";
	if (a->pending != b->pending + ret || a->scheduled != b->scheduled + ret)
		return "pending or scheduled disagree with the count";
	return NULL;
}

static const char *check_cancel(int fd, void *c, int ret,
				const struct htw_stats *b, const struct htw_stats *a)
{
	struct ctx *x = c;

	if (x->ce[0].result != HTW_CANCELLED || x->ce[1].result != HTW_CANCELLED ||
	    x->ce[2].result != HTW_CANCEL_UNKNOWN)
		return "wrong results";
	if (x->creq.cancelled != 2)
		return "cancelled is not 2";
	if (a->pending != b->pending - 2 || a->cancelled != b->cancelled + 2)
		return "pending or cancelled counters wrong";
	return NULL;
}

static const char *check_read(int fd, void *c, int ret,
			      const struct htw_stats *b, const struct htw_stats *a)
{
	struct ctx *x = c;

	if (ret < 1 || ret > 3)
		return "record count out of range";
	for (int i = 0; i < ret; i++)
		if (x->rec[i].cookie > 2 || x->rec[i].reserved)
			return "malformed record";
	if (a->ready != b->ready - ret)
		return "ready did not drop by the records read";
	return NULL;
}

static const char *check_drain(int fd, void *c, int ret,
			       const struct htw_stats *b, const struct htw_stats *a)
{
	struct ctx *x = c;
	unsigned int seen = 0;

	if (ret != 3)
		return "drained is not 3";
	for (int i = 0; i < 3; i++) {
		if (x->out[i].cookie > 2)
			return "unknown cookie described";
		seen |= 1U << x->out[i].cookie;
	}
	if (seen != 7)
		return "not every timer described";
	if (a->pending != 0 || a->cancelled != b->cancelled + 3)
		return "pending or cancelled counters wrong";
	return NULL;
}

/* Registered: a timer due now rings it (bounded wait). */
static const char *check_eventfd(int fd, void *c, int ret,
				 const struct htw_stats *b, const struct htw_stats *a)
{
	struct ctx *x = c;
	struct htw_timer_entry e;
	uint64_t v;

	if (ret)
		return "non-zero success";
	while (read(x->efd, &v, sizeof(v)) == sizeof(v))
		;
	if (htw_test_schedule_all(fd, &e, 1, 0) != 1)
		return "could not schedule";
	if (poll(&(struct pollfd){ .fd = x->efd, .events = POLLIN }, 1, 2000) != 1)
		return "the eventfd was not registered";
	while (read(x->efd, &v, sizeof(v)) == sizeof(v))
		;
	return NULL;
}

static const char *check_stats(int fd, void *c, int ret,
			       const struct htw_stats *b, const struct htw_stats *a)
{
	struct ctx *x = c;

	if (x->st.pending != 3 || x->st.scheduled != 3 || !x->st.tick_ns || !x->st.slots ||
	    x->st.clockid != CLOCK_MONOTONIC)
		return "counters or geometry wrong";
	return NULL;
}

static const char *check_setup(int fd, void *c, int ret,
			       const struct htw_stats *b, const struct htw_stats *a)
{
	return a->tick_ns == 2 * MS ? NULL : "the tick was not set";
}

/*
 * The minimums are what the operations must reach at the least (copies
 * in and out, the module's allocations); a failslab or fail_usercopy that
 * never gets to them makes the sweep fail instead of pass.
 */
static const struct fault_op ops[] = {
	{ "first schedule (creates the wheel)", prep_none, run_schedule, check_schedule, 4, 2 },
	{ "schedule", prep_three_pending, run_schedule, check_schedule, 3, 1 },
	{ "schedule batch across a chunk", prep_three_pending, run_schedule_batch, check_batch, 4, 1 },
	{ "cancel", prep_three_pending, run_cancel, check_cancel, 2, 0 },
	{ "read", prep_three_ready, run_read, check_read, 1, 0 },
	{ "drain", prep_three_pending, run_drain, check_drain, 2, 0 },
	{ "set eventfd", prep_none, run_eventfd, check_eventfd, 1, 0 },
	{ "stats", prep_three_pending, run_stats, check_stats, 1, 0 },
	{ "setup", prep_none, run_setup, check_setup, 1, 0 },
	{ "table create", prep_three_pending, run_table_create, check_table_create, 5, 1 },
};

/*
 * Failures that may leave an effect behind, by design and documented:
 * results or descriptions that cannot be written after cancel or drain
 * took effect, and the partial count of a batch schedule.
 */
static int effect_allowed(const struct fault_op *op, int ret)
{
	if (ret == -EFAULT && (op->run == run_cancel || op->run == run_drain))
		return 1;
	return op->run == run_schedule_batch && ret > 0 && ret < BATCH;
}

FIXTURE(fault) {
	int ok;
};

FIXTURE_SETUP(fault)
{
	const char *why = faults_missing();

	if (why)
		SKIP(return, "%s", why);
	self->ok = 1;
}

FIXTURE_TEARDOWN(fault)
{
	fail_nth(0);
}

TEST_F(fault, sweep_every_operation)
{
	struct htw_stats before, after;
	struct ctx c;

	/* The module's own cache is one that fails (slab_nomerge boots). */
	ASSERT_EQ(1, timer_cache_armed()) TH_LOG("htw_timer is not marked failslab");

	c.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, c.efd);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		const struct fault_op *op = &ops[k];
		int n, injected = 1, failures = 0, enomem = 0, partial = 0, points = 0;
		int chunk_full = 0;

		for (n = 1; n <= MAX_NTH && injected; n++) {
			int fd = htw_test_open(O_NONBLOCK), ret, spare;

			ASSERT_LE(0, fd);
			ASSERT_EQ(0, op->prepare(fd, &c)) TH_LOG("%s: prepare", op->name);
			stats(fd, &before);
			/* The lowest free descriptor: a failure leaves it free. */
			spare = dup(fd);
			close(spare);
			ASSERT_EQ(0, fail_nth(n));
			ret = op->run(fd, &c);
			injected = fault_injected();
			points += injected;
			stats(fd, &after);
			if (ret >= 0) {
				/* Succeeded with the fault armed: all of its effect. */
				const char *why = op->check(fd, &c, ret, &before, &after);

				EXPECT_EQ(NULL, why)
					TH_LOG("%s, fault %d (%s): success %d, but %s", op->name, n,
					       injected ? "injected" : "not reached", ret, why);
				partial += injected && op->run == run_schedule_batch && ret < BATCH;
				chunk_full += injected && op->run == run_schedule_batch &&
					      ret == HTW_TEST_TIMERS_PER_CHUNK - 3;
			}
			if (ret < 0) {
				failures++;
				enomem += ret == -ENOMEM;
				EXPECT_TRUE(clean_errno(-ret))
					TH_LOG("%s, fault %d: errno %d", op->name, n, -ret);
			}
			/* A failure changes nothing, counters included. */
			if (ret < 0 && !effect_allowed(op, ret)) {
				EXPECT_EQ(before.pending, after.pending)
					TH_LOG("%s, fault %d: pending changed (ret %d)", op->name, n, ret);
				EXPECT_EQ(before.ready, after.ready)
					TH_LOG("%s, fault %d: ready changed", op->name, n);
				EXPECT_EQ(before.scheduled, after.scheduled)
					TH_LOG("%s, fault %d: scheduled changed", op->name, n);
				EXPECT_EQ(-1, fcntl(spare, F_GETFD))
					TH_LOG("%s, fault %d: a descriptor was left", op->name, n);
			}
			if (ret > 0 && op->run == run_schedule_batch)
				EXPECT_EQ(before.pending + ret, after.pending);
			EXPECT_TRUE(usable(fd)) TH_LOG("%s, fault %d: unusable", op->name, n);
			close(fd);
		}
		/* The sweep ran past the last injection point. */
		EXPECT_FALSE(injected) TH_LOG("%s: still failing at %d", op->name, MAX_NTH);
		TH_LOG("%s: %d injection points, %d clean failures (%d ENOMEM), %d partial",
		       op->name, points, failures, enomem, partial);
		EXPECT_LE(op->min_points, points) TH_LOG("%s: too few injection points", op->name);
		/* A batch's timer allocations fail as partial counts, the rest as ENOMEM. */
		EXPECT_LE(op->min_enomem, enomem + partial)
			TH_LOG("%s: no allocation of the module failed", op->name);
		/*
		 * Timers come from chunks, so the batch's one allocation of
		 * timers is the second chunk, once the first is full: it
		 * fails as a partial count of exactly the timers that fit
		 * (faults in the later copies give other partial counts).
		 */
		if (op->run == run_schedule_batch)
			EXPECT_EQ(1, chunk_full) TH_LOG("the chunk allocation should fail once");
	}
	close(c.efd);
}

TEST_F(fault, open_and_handshake)
{
	int injected = 1, n;

	for (n = 1; n <= MAX_NTH && injected; n++) {
		int fd;

		ASSERT_EQ(0, fail_nth(n));
		fd = htw_test_open(O_NONBLOCK);
		injected = fault_injected();
		if (fd < 0) {
			EXPECT_TRUE(clean_errno(errno)) TH_LOG("fault %d: errno %d", n, errno);
			continue;
		}
		EXPECT_TRUE(usable(fd));
		close(fd);
	}
	EXPECT_FALSE(injected);
	/* open() allocates (the file's state) and the handshake copies in and out. */
	EXPECT_LE(3, n - 2) TH_LOG("only %d injection points", n - 2);
}

TEST_HARNESS_MAIN
