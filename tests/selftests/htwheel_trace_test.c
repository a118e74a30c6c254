// SPDX-License-Identifier: GPL-2.0
/*
 * The module's trace events (Documentation/tracing.rst), read back
 * through tracefs: a workload of known cookies, handles and refusals,
 * then every event it must have caused, field by field, and none it must
 * not have.
 *
 * Each case records into a tracing instance of its own
 * (instances/htwheel_trace_test), so the system's own buffer, events and
 * filters stay as they were; the instance is removed at the end, and
 * tracefs unmounted again if the test mounted it.  tracefs comes with
 * CONFIG_TRACING, which UML's debug kernel has (selected by its lockdep
 * and irq-flags tracing) though it has no CONFIG_FTRACE; a kernel without
 * it skips, saying so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define HOUR		(3600000ULL * MS)
#define WAIT_MS		10000	/* for a timer of tens of ms, under TCG */
#define INSTANCE	"htwheel_trace_test"
#define MAX_EVENTS	4096
#define TRACE_BYTES	(8 << 20)

/* ---- tracefs ---- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Whether the kernel knows tracefs at all. */
static int have_tracefs(void)
{
	char line[128];
	FILE *f = fopen("/proc/filesystems", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !!strstr(line, "\ttracefs");
	fclose(f);
	return found;
}

/*
 * Where tracefs is, mounting it if nobody has: /sys/kernel/tracing, else
 * the old place under debugfs.  *@mounted says what to unmount after.
 */
static const char *find_tracefs(char *mounted, size_t size)
{
	static const char *const where[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};

	mounted[0] = '\0';
	if (is_dir("/sys/kernel/tracing/events"))
		return where[0];
	if (is_dir("/sys/kernel/debug/tracing/events"))
		return where[1];
	if (!mount("nodev", where[0], "tracefs", 0, NULL)) {
		snprintf(mounted, size, "%s", where[0]);
		return where[0];
	}
	if (!is_dir("/sys/kernel/debug/tracing") &&
	    !mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL))
		snprintf(mounted, size, "/sys/kernel/debug");
	/* debugfs mounts tracefs at tracing/ itself when it is looked at. */
	if (is_dir("/sys/kernel/debug/tracing/events"))
		return where[1];
	return NULL;
}

/* ---- the recorded events ---- */

struct event {
	char name[32];		/* without the "htwheel_" */
	char fields[256];	/* " key=value key=value" */
};

struct trace {
	struct event *ev;
	int n;
};

/* The events of @text, in order, each line's "htwheel_NAME: FIELDS". */
static void parse_trace(char *text, struct trace *tr)
{
	char *line, *save, *p, *colon;

	tr->n = 0;
	for (line = strtok_r(text, "\n", &save); line && tr->n < MAX_EVENTS;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		p = strstr(line, ": htwheel_");
		if (!p)
			continue;
		p += strlen(": htwheel_");
		colon = strchr(p, ':');
		if (!colon || colon - p >= (long)sizeof(tr->ev[0].name))
			continue;
		memcpy(tr->ev[tr->n].name, p, colon - p);
		tr->ev[tr->n].name[colon - p] = '\0';
		snprintf(tr->ev[tr->n].fields, sizeof(tr->ev[0].fields), "%s",
			 colon + 1);
		tr->n++;
	}
}

/* The text of field @key of @e, up to the next space; NULL if none. */
static const char *field(const struct event *e, const char *key, char *out,
			 size_t size)
{
	char pat[40];
	const char *p;
	size_t len;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(e->fields, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	len = strcspn(p, " ");
	if (len >= size)
		len = size - 1;
	memcpy(out, p, len);
	out[len] = '\0';
	return out;
}

/* Field @key as a number (decimal, 0x hex or negative); ~0 if absent. */
static uint64_t num(const struct event *e, const char *key)
{
	char v[32];

	if (!field(e, key, v, sizeof(v)))
		return ~0ULL;
	return v[0] == '-' ? (uint64_t)strtoll(v, NULL, 0) : strtoull(v, NULL, 0);
}

static int64_t snum(const struct event *e, const char *key)
{
	return (int64_t)num(e, key);
}

static int str_is(const struct event *e, const char *key, const char *want)
{
	char v[64];

	return field(e, key, v, sizeof(v)) && !strcmp(v, want);
}

/* The events named @name of trace id @id, up to @max of them into @out. */
static int select_events(const struct trace *tr, const char *name, uint32_t id,
			 const struct event **out, int max)
{
	int i, n = 0;

	for (i = 0; i < tr->n; i++) {
		if (strcmp(tr->ev[i].name, name) || num(&tr->ev[i], "id") != id)
			continue;
		if (n < max)
			out[n] = &tr->ev[i];
		n++;
	}
	return n;
}

/* ---- the device ---- */

/* The file's trace id, from its fdinfo; 0 if it shows none. */
static uint32_t trace_id(int fd)
{
	char path[64], line[128];
	unsigned int id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "htw-trace-id: %u", &id) == 1)
			break;
	fclose(f);
	return id;
}

static int schedule(int fd, struct htw_timer_entry *e, uint32_t n)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

static uint32_t cancel_one(int fd, uint64_t handle)
{
	struct htw_cancel_entry e = { .handle = handle, .result = ~0U };
	struct htw_cancel req = { .entries = (uintptr_t)&e, .count = 1 };

	if (ioctl(fd, HTW_IOC_CANCEL, &req))
		return ~0U;
	return e.result;
}

static uint64_t ready(int fd)
{
	struct htw_stats st = { .flags = 0 };

	if (ioctl(fd, HTW_IOC_STATS, &st))
		return 0;
	return st.ready;
}

/* Wait until @fd has @n records queued; 1 if it came to that in time. */
static int wait_ready(int fd, uint64_t n)
{
	uint64_t end = htw_test_now(CLOCK_MONOTONIC) + WAIT_MS * MS;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (ready(fd) < n) {
		if (htw_test_now(CLOCK_MONOTONIC) > end)
			return 0;
		poll(&p, 1, 10);
		usleep(2000);
	}
	return 1;
}

/* ---- the fixture: an instance of its own ---- */

FIXTURE(trace) {
	char mounted[64];
	char record_cmd[300];	/* options/record-cmd, "" when not changed */
	char dir[256];		/* the instance */
	int have_instance;
	unsigned long saved[2];
	int have[2];
	char *text;
	struct trace tr;
};

static const char *const params[] = { "max_user_timers", "max_user_instances" };

static void inst_path(FIXTURE_DATA(trace) *self, const char *file, char *out,
		      size_t size)
{
	snprintf(out, size, "%s/%s", self->dir, file);
}

FIXTURE_SETUP(trace)
{
	const char *root;
	char path[320];

	self->mounted[0] = '\0';
	self->record_cmd[0] = '\0';
	self->have_instance = 0;
	self->text = NULL;
	self->tr.ev = NULL;
	for (int i = 0; i < 2; i++)
		self->have[i] = 0;
	if (getuid())
		SKIP(return, "needs root for tracefs and the module's limits");
	if (!have_tracefs())
		SKIP(return, "no tracefs (a kernel without CONFIG_TRACING)");
	root = find_tracefs(self->mounted, sizeof(self->mounted));
	ASSERT_NE(NULL, root) TH_LOG("tracefs is known but could not be mounted");
	snprintf(path, sizeof(path), "%s/events/htwheel", root);
	ASSERT_TRUE(is_dir(path)) TH_LOG("no %s: the module defines no events", path);

	/*
	 * No command-line recording: enabling an event would hook it into
	 * sched_switch, patching the scheduler's hottest code each case,
	 * which under qemu's TCG has locked both CPUs up.  The instance
	 * takes the flag from the top level when it is made.
	 */
	snprintf(self->record_cmd, sizeof(self->record_cmd), "%s/options/record-cmd", root);
	if (write_str(self->record_cmd, "0"))
		self->record_cmd[0] = 0;
	snprintf(self->dir, sizeof(self->dir), "%s/instances/" INSTANCE, root);
	/* One left behind by a run that was killed. */
	if (is_dir(self->dir))
		rmdir(self->dir);
	ASSERT_EQ(0, mkdir(self->dir, 0755))
		TH_LOG("mkdir %s: %s", self->dir, strerror(errno));
	self->have_instance = 1;
	for (int i = 0; i < 2; i++)
		self->have[i] = !htw_test_get_param(params[i], &self->saved[i]);
	self->text = malloc(TRACE_BYTES);
	self->tr.ev = calloc(MAX_EVENTS, sizeof(*self->tr.ev));
	ASSERT_TRUE(self->text && self->tr.ev);
}

FIXTURE_TEARDOWN(trace)
{
	char path[320];

	for (int i = 0; i < 2; i++)
		if (self->have[i])
			htw_test_set_param(params[i], self->saved[i], NULL);
	if (self->have_instance) {
		inst_path(self, "events/htwheel/enable", path, sizeof(path));
		write_str(path, "0");
		EXPECT_EQ(0, rmdir(self->dir))
			TH_LOG("rmdir %s: %s", self->dir, strerror(errno));
	}
	if (self->record_cmd[0])
		write_str(self->record_cmd, "1");
	if (self->mounted[0])
		umount(self->mounted);
	free(self->text);
	free(self->tr.ev);
}

/* Only the instance's htwheel events, from an empty buffer on. */
static void start(struct __test_metadata *_metadata, FIXTURE_DATA(trace) *self,
		  const char *filter)
{
	char path[320];

	inst_path(self, "tracing_on", path, sizeof(path));
	ASSERT_EQ(0, write_str(path, "0"));
	if (filter) {
		inst_path(self, "events/htwheel/filter", path, sizeof(path));
		ASSERT_EQ(0, write_str(path, filter)) TH_LOG("filter %s refused", filter);
	}
	inst_path(self, "events/htwheel/enable", path, sizeof(path));
	ASSERT_EQ(0, write_str(path, "1"));
	inst_path(self, "trace", path, sizeof(path));
	ASSERT_EQ(0, write_str(path, ""));
	inst_path(self, "tracing_on", path, sizeof(path));
	ASSERT_EQ(0, write_str(path, "1"));
}

/* Stop recording and parse what was recorded into self->tr. */
static void stop(struct __test_metadata *_metadata, FIXTURE_DATA(trace) *self)
{
	char path[320];
	size_t len = 0;
	ssize_t n;
	int fd;

	inst_path(self, "tracing_on", path, sizeof(path));
	ASSERT_EQ(0, write_str(path, "0"));
	inst_path(self, "trace", path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	while (len < TRACE_BYTES - 1 &&
	       (n = read(fd, self->text + len, TRACE_BYTES - 1 - len)) > 0)
		len += n;
	close(fd);
	self->text[len] = '\0';
	parse_trace(self->text, &self->tr);
	ASSERT_LT(0, self->tr.n) TH_LOG("nothing recorded");
}

/* Every event of the buffer, for a failure's log. */
static void dump(const struct trace *tr)
{
	for (int i = 0; i < tr->n; i++)
		printf("#   htwheel_%s:%s\n", tr->ev[i].name, tr->ev[i].fields);
}

#define COOKIE(i)	(0xc0c0000000000000ULL + (i))
#define NBATCH		5
#define MAXPEND		4	/* so that the fifth entry is refused */

static const uint64_t delays[NBATCH] = { 20 * MS, 30 * MS, 40 * MS, HOUR, HOUR };

/*
 * One file: a batch of five with room for four (one refused, ENOSPC),
 * the fourth cancelled while pending, the first three fired and read,
 * cancels of a fired and of a read timer, a drain, a schedule refused
 * by max_user_timers and an open() refused by max_user_instances.
 */
TEST_F(trace, workload_events_carry_its_values)
{
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC, .max_pending = MAXPEND };
	struct htw_timer_entry e[NBATCH], d[2];
	struct htw_drain drain = { .count = 0 };
	struct htw_expiry rec[8];
	const struct event *ev[64];
	uint64_t t0, t1, fired_sum = 0;
	int fd, fd2, n, i, j, found;
	uint32_t id;
	ssize_t got;

	fd = htw_test_open(O_NONBLOCK);
	ASSERT_LE(0, fd);
	id = trace_id(fd);
	ASSERT_NE(0, id) TH_LOG("fdinfo shows no htw-trace-id");
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_SETUP, &setup));
	ASSERT_TRUE(self->have[0] && self->have[1]);

	start(_metadata, self, NULL);

	memset(e, 0, sizeof(e));
	for (i = 0; i < NBATCH; i++) {
		e[i].cookie = COOKIE(i);
		e[i].expires = delays[i];
	}
	t0 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(MAXPEND, schedule(fd, e, NBATCH));
	t1 = htw_test_now(CLOCK_MONOTONIC);
	ASSERT_EQ(HTW_CANCELLED, cancel_one(fd, e[3].handle));
	ASSERT_TRUE(wait_ready(fd, 3)) TH_LOG("three timers did not fire");
	ASSERT_EQ(HTW_CANCEL_FIRED, cancel_one(fd, e[2].handle));
	got = read(fd, rec, sizeof(rec));
	ASSERT_EQ(3 * (ssize_t)sizeof(rec[0]), got);
	ASSERT_EQ(HTW_CANCEL_UNKNOWN, cancel_one(fd, e[0].handle));

	memset(d, 0, sizeof(d));
	d[0].cookie = COOKIE(10);
	d[1].cookie = COOKIE(11);
	d[0].expires = HOUR;
	d[1].expires = HOUR;
	ASSERT_EQ(2, schedule(fd, d, 2));
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_DRAIN, &drain));
	ASSERT_EQ(2, drain.drained);

	ASSERT_EQ(0, htw_test_set_param("max_user_timers", 0, NULL));
	d[0].expires = HOUR;
	EXPECT_EQ(-1, schedule(fd, d, 1));
	EXPECT_EQ(EDQUOT, errno);
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", self->saved[0], NULL));

	ASSERT_EQ(0, htw_test_set_param("max_user_instances", 0, NULL));
	fd2 = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	EXPECT_EQ(-1, fd2);
	EXPECT_EQ(EMFILE, errno);
	if (fd2 >= 0)
		close(fd2);
	ASSERT_EQ(0, htw_test_set_param("max_user_instances", self->saved[1], NULL));

	stop(_metadata, self);
	close(fd);

	/* Schedules: the batch with one refused, the two, the refused one. */
	n = select_events(&self->tr, "schedule", id, ev, 64);
	ASSERT_EQ(3, n) dump(&self->tr);
	EXPECT_EQ(NBATCH, num(ev[0], "count"));
	EXPECT_EQ(MAXPEND, num(ev[0], "done"));
	EXPECT_EQ(0, snum(ev[0], "error"));
	EXPECT_EQ(2, num(ev[1], "count"));
	EXPECT_EQ(2, num(ev[1], "done"));
	EXPECT_EQ(0, snum(ev[1], "error"));
	EXPECT_EQ(1, num(ev[2], "count"));
	EXPECT_EQ(0, num(ev[2], "done"));
	EXPECT_EQ(-EDQUOT, snum(ev[2], "error"));

	/* Refusals of this file: max_pending, then max_user_timers. */
	n = select_events(&self->tr, "limit", id, ev, 64);
	ASSERT_EQ(2, n) dump(&self->tr);
	EXPECT_TRUE(str_is(ev[0], "limit", "max_pending"));
	EXPECT_TRUE(str_is(ev[0], "error", "ENOSPC"));
	EXPECT_TRUE(str_is(ev[1], "limit", "max_user_timers"));
	EXPECT_TRUE(str_is(ev[1], "error", "EDQUOT"));
	/* The refused open(), under the id that file would have had. */
	found = 0;
	for (i = 0; i < self->tr.n; i++)
		found += !strcmp(self->tr.ev[i].name, "limit") &&
			 num(&self->tr.ev[i], "id") != id &&
			 num(&self->tr.ev[i], "id") != 0 &&
			 str_is(&self->tr.ev[i], "limit", "max_user_instances") &&
			 str_is(&self->tr.ev[i], "error", "EMFILE");
	EXPECT_EQ(1, found) dump(&self->tr);

	/* Expiries: the first three, each once, as read() reported them. */
	n = select_events(&self->tr, "expire", id, ev, 64);
	ASSERT_EQ(3, n) dump(&self->tr);
	for (i = 0; i < 3; i++) {
		const struct event *x = NULL;
		const struct htw_expiry *r = NULL;

		for (j = 0; j < n; j++)
			if (num(ev[j], "cookie") == COOKIE(i))
				x = ev[j];
		for (j = 0; j < 3; j++)
			if (rec[j].cookie == COOKIE(i))
				r = &rec[j];
		ASSERT_NE(NULL, x) TH_LOG("no expire event of cookie %d", i);
		ASSERT_NE(NULL, r) TH_LOG("read() gave no record of cookie %d", i);
		EXPECT_EQ(e[i].handle, num(x, "handle"));
		EXPECT_LE(t0 + delays[i], num(x, "deadline_ns"));
		EXPECT_GE(t1 + delays[i], num(x, "deadline_ns"));
		EXPECT_EQ(r->deadline_ns, num(x, "deadline_ns"));
		EXPECT_LE(0, snum(x, "lateness_ns"));
		EXPECT_EQ(r->expired_ns, num(x, "deadline_ns") + snum(x, "lateness_ns"));
	}

	/* Cancels, in order, with the results the ABI gave. */
	n = select_events(&self->tr, "cancel", id, ev, 64);
	ASSERT_EQ(3, n) dump(&self->tr);
	EXPECT_EQ(e[3].handle, num(ev[0], "handle"));
	EXPECT_TRUE(str_is(ev[0], "result", "cancelled"));
	EXPECT_EQ(e[2].handle, num(ev[1], "handle"));
	EXPECT_TRUE(str_is(ev[1], "result", "fired"));
	EXPECT_EQ(e[0].handle, num(ev[2], "handle"));
	EXPECT_TRUE(str_is(ev[2], "result", "unknown"));

	/* The one read(), all three records. */
	n = select_events(&self->tr, "deliver", id, ev, 64);
	ASSERT_EQ(1, n) dump(&self->tr);
	EXPECT_TRUE(str_is(ev[0], "via", "read"));
	EXPECT_EQ(3, num(ev[0], "records"));

	n = select_events(&self->tr, "drain", id, ev, 64);
	ASSERT_EQ(1, n) dump(&self->tr);
	EXPECT_EQ(2, num(ev[0], "drained"));

	/*
	 * Tick runs: every expiry in one of them; a finished run armed for
	 * later than it ran, and the last left nothing armed.
	 */
	n = select_events(&self->tr, "tick", id, ev, 64);
	ASSERT_LE(1, n) dump(&self->tr);
	ASSERT_GE(64, n);
	for (i = 0; i < n; i++) {
		fired_sum += num(ev[i], "fired");
		EXPECT_LE(num(ev[i], "fired"), num(ev[i], "processed"));
		if (!num(ev[i], "more") && num(ev[i], "next_ns") != ~0ULL)
			EXPECT_LT(num(ev[i], "now_ns"), num(ev[i], "next_ns"));
	}
	EXPECT_EQ(3, fired_sum) dump(&self->tr);
	EXPECT_EQ(~0ULL, num(ev[n - 1], "next_ns")) dump(&self->tr);
}

/* A filter on the id records one file's events and no other's. */
TEST_F(trace, filter_on_id_follows_one_file)
{
	struct htw_timer_entry e[2];
	struct htw_expiry rec[2];
	const struct event *ev[16];
	char filter[64];
	uint32_t id[2];
	int fd[2], i;

	for (i = 0; i < 2; i++) {
		fd[i] = htw_test_open(O_NONBLOCK);
		ASSERT_LE(0, fd[i]);
		id[i] = trace_id(fd[i]);
		ASSERT_NE(0, id[i]);
	}
	ASSERT_NE(id[0], id[1]);
	snprintf(filter, sizeof(filter), "id == %u", id[0]);
	start(_metadata, self, filter);
	for (i = 0; i < 2; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].cookie = COOKIE(100 + i);
		e[i].expires = 10 * MS;
		ASSERT_EQ(1, schedule(fd[i], &e[i], 1));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE(wait_ready(fd[i], 1));
		ASSERT_EQ((ssize_t)sizeof(rec[i]), read(fd[i], &rec[i], sizeof(rec[i])));
	}
	stop(_metadata, self);
	for (i = 0; i < 2; i++)
		close(fd[i]);

	EXPECT_EQ(1, select_events(&self->tr, "schedule", id[0], ev, 16));
	ASSERT_EQ(1, select_events(&self->tr, "expire", id[0], ev, 16));
	EXPECT_EQ(COOKIE(100), num(ev[0], "cookie"));
	EXPECT_EQ(1, select_events(&self->tr, "deliver", id[0], ev, 16));
	EXPECT_LE(1, select_events(&self->tr, "tick", id[0], ev, 16));
	for (i = 0; i < self->tr.n; i++)
		EXPECT_EQ(id[0], num(&self->tr.ev[i], "id"))
			TH_LOG("htwheel_%s:%s", self->tr.ev[i].name,
			       self->tr.ev[i].fields);
}

/* A slot of a timer table (version 2): its expiry and the ring's delivery. */
/*
 * A file (*@dev, its trace id *@id) and a table of @ts->entries slots made
 * on it (*@fd), mapped at *@map; 0, or -1 if a step failed.
 */
static int open_table(struct htw_table2_setup *ts, int *dev, int *fd, uint32_t *id,
		      void **map)
{
	*dev = htw_test_open(0);
	if (*dev < 0)
		return -1;
	*id = trace_id(*dev);
	*fd = *id ? ioctl(*dev, HTW_IOC_TABLE2_CREATE, ts) : -1;
	if (*fd < 0)
		return -1;
	*map = mmap(NULL, ts->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	return *map == MAP_FAILED ? -1 : 0;
}

/* Arm idle slot @i of a fresh table at @d as generation @gen and submit it. */
static void arm_fresh(struct htw_table2_header *hdr, struct htw_table2_slot *slots,
		      uint32_t *sq, uint32_t i, uint64_t d, uint64_t gen)
{
	uint32_t tail = hdr->sq_tail;

	slots[i].deadline_ns[gen & 1] = d;
	slots[i].queued = 1;
	sq[tail & hdr->sq_mask] = i;
	__atomic_store_n(&hdr->sq_tail, tail + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&slots[i].seq, gen << 1 | HTW_TABLE2_ARMED, __ATOMIC_SEQ_CST);
}

TEST_F(trace, table_slot_expiry_and_ring)
{
	struct htw_table2_setup ts = { .entries = 4 };
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	struct htw_table2_cqe cqe;
	const struct event *ev[16];
	uint64_t deadline, end, records = 0;
	uint32_t *sq, id;
	int dev, fd, n, i;
	void *map;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, open_table(&ts, &dev, &fd, &id, &map));
	hdr = map;
	slots = (void *)((char *)map + ts.slots_off);
	sq = (void *)((char *)map + ts.sq_off);

	start(_metadata, self, NULL);
	/* Arm slot 2 (generation 1), then ring the doorbell. */
	deadline = htw_test_now(CLOCK_MONOTONIC) + 20 * MS;
	arm_fresh(hdr, slots, sq, 2, deadline, 1);
	ASSERT_LE(0, ioctl(fd, HTW_IOC_TABLE2_ENTER, 0));
	end = htw_test_now(CLOCK_MONOTONIC) + WAIT_MS * MS;
	while (__atomic_load_n(&hdr->cq_tail, __ATOMIC_ACQUIRE) == 0 &&
	       htw_test_now(CLOCK_MONOTONIC) < end)
		usleep(2000);
	ASSERT_EQ(1, __atomic_load_n(&hdr->cq_tail, __ATOMIC_ACQUIRE));
	cqe = ((struct htw_table2_cqe *)((char *)map + ts.cq_off))[0];
	__atomic_store_n(&hdr->cq_head, 1, __ATOMIC_RELEASE);
	stop(_metadata, self);
	munmap(map, ts.mmap_size);
	close(fd);
	close(dev);

	ASSERT_EQ(2, cqe.slot);
	EXPECT_EQ(1, cqe.gen);
	n = select_events(&self->tr, "table_expire", id, ev, 16);
	ASSERT_EQ(1, n) dump(&self->tr);
	EXPECT_EQ(2, num(ev[0], "slot"));
	/* A version 2 table's "cookie" is the generation that fired. */
	EXPECT_EQ(1, num(ev[0], "cookie"));
	EXPECT_EQ(deadline, num(ev[0], "deadline_ns"));
	EXPECT_LE(0, snum(ev[0], "lateness_ns"));
	n = select_events(&self->tr, "deliver", id, ev, 16);
	for (i = 0; i < n && i < 16; i++) {
		EXPECT_TRUE(str_is(ev[i], "via", "ring"));
		records += num(ev[i], "records");
	}
	EXPECT_EQ(1, records) dump(&self->tr);
	/* No handle timer of this file ran. */
	EXPECT_EQ(0, select_events(&self->tr, "expire", id, ev, 16));
}

/*
 * A program moves 2048 armed slots later, each by arming it anew (an
 * exchange, nothing submitted): the run at their old deadline moves 1024
 * and ends at its budget, which the event htwheel_table_budget says, as
 * HTW_IOC_TABLE2_STATS counts it.
 */
TEST_F(trace, table_budget_stop_is_traced)
{
	struct htw_table2_setup ts = { .entries = 2048 };
	struct htw_table_stats st = { 0 };
	struct htw_table2_header *hdr;
	struct htw_table2_slot *slots;
	const struct event *ev[64];
	uint64_t deadline;
	uint32_t *sq, id, i;
	int dev, fd, n;
	void *map;

	if (!htw_test_table_or_skip(_metadata))
		return;
	ASSERT_EQ(0, open_table(&ts, &dev, &fd, &id, &map));
	hdr = map;
	slots = (void *)((char *)map + ts.slots_off);
	sq = (void *)((char *)map + ts.sq_off);

	start(_metadata, self, NULL);
	deadline = htw_test_now(CLOCK_MONOTONIC) + 100 * MS;
	for (i = 0; i < ts.entries; i++)
		arm_fresh(hdr, slots, sq, i, deadline, 1);
	while (hdr->sq_head != ts.entries)
		ASSERT_LE(0, ioctl(fd, HTW_IOC_TABLE2_ENTER, 0));
	/* The lazy re-arm of every slot, an hour later: generation 2. */
	for (i = 0; i < ts.entries; i++) {
		slots[i].deadline_ns[0] = deadline + HOUR;
		__atomic_exchange_n(&slots[i].seq, 2 << 1 | HTW_TABLE2_ARMED, __ATOMIC_SEQ_CST);
	}
	usleep(400 * 1000);
	stop(_metadata, self);
	ASSERT_EQ(0, ioctl(fd, HTW_IOC_TABLE2_STATS, &st));
	munmap(map, ts.mmap_size);
	close(fd);
	close(dev);

	EXPECT_EQ(ts.entries, st.moved);
	EXPECT_LE(1, st.budget_stops);
	n = select_events(&self->tr, "table_budget", id, ev, 64);
	EXPECT_EQ(st.budget_stops, n) dump(&self->tr);
	ASSERT_LE(1, n);
	EXPECT_EQ(1024, num(ev[0], "moves"));
	EXPECT_EQ(1024, num(ev[0], "slots"));
	EXPECT_LT(deadline, num(ev[0], "next_ns"));
}

/*
 * Trace ids tell nothing of other files: distinct and non-zero, and in no
 * order of open() (a count of opens would rise 63 times in 64 opens;
 * random ids rise about half the time).
 */
#define NIDS	64

TEST(trace_ids_say_nothing_of_other_opens)
{
	uint32_t ids[NIDS];
	int fds[NIDS], i, j, rises = 0;

	for (i = 0; i < NIDS; i++) {
		fds[i] = htw_test_open(0);
		ASSERT_LE(0, fds[i]);
		ids[i] = trace_id(fds[i]);
		EXPECT_NE(0, ids[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(ids[j], ids[i]);
		rises += i && ids[i] > ids[i - 1];
	}
	EXPECT_LE(8, rises);
	EXPECT_GE(NIDS - 8, rises) {
		TH_LOG("%d of %d consecutive opens got a larger id", rises, NIDS - 1);
	}
	for (i = 0; i < NIDS; i++)
		close(fds[i]);
}

TEST_HARNESS_MAIN
