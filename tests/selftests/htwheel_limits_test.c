// SPDX-License-Identifier: GPL-2.0
/*
 * The unprivileged flood: /dev/htwheel is mode 0666, so one user must not
 * be able to take the machine's memory.  Limits are per user of the
 * opener (user namespace and uid, charged up the namespace chain like the
 * kernel's ucounts) and set by root in /sys/module/htwheel/parameters/:
 *
 *   max_user_instances    open files      open() fails with EMFILE
 *   max_user_timers       live timers     SCHEDULE fails with EDQUOT
 *   max_user_wheel_bytes  wheel memory    the SCHEDULE that would create
 *                                         a wheel fails with EDQUOT
 *
 * Each case sets small limits as root, then floods from children that
 * dropped to uid 65534; the last one floods with the defaults and watches
 * the kernel log for the OOM killer.  Every loop is bounded in count and
 * time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define MS		1000000ULL
#define SEC		(1000 * MS)
#define HOUR		(3600 * SEC)
#define NOBODY		65534
#define OTHER_KUID	70000		/* uid 1 inside the test's namespace */
#define NOFILE		4096		/* well above every instance limit */
#define CHUNK		4096		/* timers per SCHEDULE of a flood */
#define CHILD_SECONDS	60

#define LIM_INSTANCES	16
#define LIM_TIMERS	50000
#define LIM_WHEEL_BYTES	(64UL << 20)

static const char *const params[] = {
	"max_user_instances", "max_user_timers", "max_user_wheel_bytes",
};

FIXTURE(limits) {
	unsigned long saved[3];
	int have[3];
	int kmsg;
};

FIXTURE_SETUP(limits)
{
	self->kmsg = -1;
	if (getuid())
		SKIP(return, "needs root to set the limits and switch users");
	for (int i = 0; i < 3; i++)
		self->have[i] = !htw_test_get_param(params[i], &self->saved[i]);
	self->kmsg = htw_test_kmsg_open();
}

FIXTURE_TEARDOWN(limits)
{
	char line[512];

	for (int i = 0; i < 3; i++)
		if (self->have[i])
			htw_test_set_param(params[i], self->saved[i], NULL);
	if (self->kmsg >= 0) {
		EXPECT_EQ(0, htw_test_kmsg_find(self->kmsg, line, sizeof(line)))
			TH_LOG("kernel log: %s", line);
		close(self->kmsg);
	}
}

/* Set the limits a case works with; a missing parameter fails the case. */
static void set_limits(struct __test_metadata *_metadata,
		       FIXTURE_DATA(limits) *self, unsigned long instances,
		       unsigned long timers, unsigned long bytes)
{
	unsigned long v[3] = { instances, timers, bytes };

	for (int i = 0; i < 3; i++) {
		ASSERT_TRUE(self->have[i])
			TH_LOG("the module has no %s parameter", params[i]);
		ASSERT_EQ(0, htw_test_set_param(params[i], v[i], NULL))
			TH_LOG("cannot set %s", params[i]);
	}
}

/* Become uid/gid @id with no supplementary groups and room for fds. */
static int drop_to(uid_t id)
{
	struct rlimit rl = { NOFILE, NOFILE };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (setgroups(0, NULL) || setgid(id) || setuid(id))
		return -1;
	return 0;
}

/* Wait for a child at most @seconds; kill it after that. */
static int wait_child(pid_t pid, int seconds)
{
	int status;

	for (int i = 0; i < seconds * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("# child %d killed after %d s\n", pid, seconds);
	return 255;
}

/* Run @fn(@arg) in a child as uid @id; its exit status, 0 for success. */
static int run_as(uid_t id, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (drop_to(id)) {
			printf("# cannot become uid %u: %s\n", id, strerror(errno));
			_exit(100);
		}
		_exit(fn(arg));
	}
	return wait_child(pid, CHILD_SECONDS);
}

static int schedule_n(int fd, unsigned int n, uint64_t delay)
{
	static struct htw_timer_entry e[CHUNK];

	return htw_test_schedule_all(fd, e, n, delay);
}

/* Open until refused (at most @max); the fds in @fd, how many in *n. */
static int open_until_refused(int *fd, int max, int *n)
{
	for (*n = 0; *n < max; (*n)++) {
		fd[*n] = htw_test_open(0);
		if (fd[*n] < 0)
			return errno;
	}
	return 0;
}

/*
 * Schedule far timers over @nfd files, CHUNK at a time round robin,
 * until one is refused or @max are live; returns the errno of the refusal
 * (0 if none) and the count in *total.
 */
static int schedule_until_refused(const int *fd, int nfd, long max, long *total)
{
	uint64_t end = htw_test_now(CLOCK_MONOTONIC) + CHILD_SECONDS / 2 * SEC;

	*total = 0;
	for (int i = 0; *total < max; i = (i + 1) % nfd) {
		int r = schedule_n(fd[i], max - *total < CHUNK ? max - *total : CHUNK, HOUR);

		if (r < 0)
			return errno;
		*total += r;
		if (htw_test_now(CLOCK_MONOTONIC) > end)
			return ETIME;
	}
	return 0;
}

static void close_all(int *fd, int n)
{
	while (n--)
		close(fd[n]);
}

/* A notification between processes: one byte over a pipe. */
static int tell(int fd)
{
	return write(fd, "x", 1) == 1 ? 0 : -1;
}

static int await(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

/* (a) As nobody: EMFILE exactly at the limit; a close makes room for one. */
struct instances_ctx {
	int to_parent[2], to_child[2];
};

static int instances_as_nobody(void *arg)
{
	struct instances_ctx *c = arg;
	int fd[LIM_INSTANCES + 64], n, err, more;

	err = open_until_refused(fd, LIM_INSTANCES + 64, &n);
	HTW_CHILD_CHECK(n == LIM_INSTANCES && err == EMFILE,
	      "opened %d files, then errno %d (%s); want %d, then EMFILE",
	      n, err, strerror(err), LIM_INSTANCES);
	/* Root opens while this user is at its limit. */
	HTW_CHILD_CHECK(!tell(c->to_parent[1]) && !await(c->to_child[0]), "no word from root");
	close(fd[--n]);
	fd[n] = htw_test_open(0);
	HTW_CHILD_CHECK(fd[n] >= 0, "open after a close: errno %d", errno);
	n++;
	more = htw_test_open(0);
	HTW_CHILD_CHECK(more < 0 && errno == EMFILE, "one too many: fd %d errno %d", more, errno);
	close_all(fd, n);
	return 0;
}

TEST_F_TIMEOUT(limits, instances_emfile_at_exactly_the_limit, 90)
{
	struct instances_ctx c;
	pid_t pid;
	int fd;

	set_limits(_metadata, self, LIM_INSTANCES, LIM_TIMERS, LIM_WHEEL_BYTES);
	ASSERT_EQ(0, pipe(c.to_parent));
	ASSERT_EQ(0, pipe(c.to_child));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(drop_to(NOBODY) ? 100 : instances_as_nobody(&c));
	close(c.to_parent[1]);
	if (!await(c.to_parent[0])) {
		/* Another user's count is its own. */
		fd = htw_test_open(0);
		EXPECT_LE(0, fd) TH_LOG("root refused while nobody is at its limit: errno %d", errno);
		if (fd >= 0)
			close(fd);
		tell(c.to_child[1]);
	}
	EXPECT_EQ(0, wait_child(pid, CHILD_SECONDS));
}

/* The largest geometry: 65,536 slots per level, a 10 us tick. */
static int setup_largest(int fd)
{
	struct htw_setup s = {
		.tick_ns = 10000, .slots = 65536, .clockid = CLOCK_MONOTONIC,
	};

	return ioctl(fd, HTW_IOC_SETUP, &s);
}

/* Open a file and create its largest wheel with one schedule. */
static int wheel_file(int *fd)
{
	*fd = htw_test_open(0);
	if (*fd < 0)
		return errno;
	if (setup_largest(*fd))
		return errno;
	return schedule_n(*fd, 1, HOUR) == 1 ? 0 : errno;
}

/* (b) As nobody: wheels until EDQUOT; the refused file stays usable. */
static int wheel_bytes_as_nobody(void *arg)
{
	int fd[LIM_INSTANCES * 4], n, err = 0;

	for (n = 0; n < LIM_INSTANCES * 4; n++) {
		err = wheel_file(&fd[n]);
		if (err)
			break;
	}
	printf("# %d wheels of 65,536 slots x 10 us fit in %lu MiB\n", n, LIM_WHEEL_BYTES >> 20);
	HTW_CHILD_CHECK(err == EDQUOT, "after %d wheels: errno %d (%s), want EDQUOT", n, err, strerror(err));
	HTW_CHILD_CHECK(n >= 1, "not even one wheel fitted");
	/* Refused: no wheel was made, so the geometry is still open. */
	HTW_CHILD_CHECK(setup_largest(fd[n]) == 0, "SETUP after the refusal: errno %d", errno);
	/* A wheel given back makes room for exactly that wheel again. */
	close(fd[0]);
	HTW_CHILD_CHECK(schedule_n(fd[n], 1, HOUR) == 1, "after a close: errno %d", errno);
	close_all(fd + 1, n);
	return 0;
}

TEST_F_TIMEOUT(limits, wheel_bytes_edquot_and_setup_still_works, 90)
{
	int fd;

	/* Instances are not the limit here: four times as many. */
	set_limits(_metadata, self, LIM_INSTANCES * 4, LIM_TIMERS, LIM_WHEEL_BYTES);
	EXPECT_EQ(0, run_as(NOBODY, wheel_bytes_as_nobody, NULL));
	/* Root's wheels are not nobody's. */
	EXPECT_EQ(0, wheel_file(&fd)) TH_LOG("root could not create a wheel");
	close(fd);
}

/* (c) As nobody: EDQUOT at exactly max_user_timers over three files. */
static int timers_as_nobody(void *arg)
{
	int fd[3], n, err, i;
	struct htw_drain d = {};
	long total;

	err = open_until_refused(fd, 3, &n);
	HTW_CHILD_CHECK(n == 3, "open: errno %d", err);
	err = schedule_until_refused(fd, 3, LIM_TIMERS + CHUNK, &total);
	HTW_CHILD_CHECK(err == EDQUOT && total == LIM_TIMERS,
	      "%ld timers, then errno %d (%s); want %d, then EDQUOT",
	      total, err, strerror(err), LIM_TIMERS);
	for (i = 0; i < 3; i++)
		HTW_CHILD_CHECK(schedule_n(fd[i], 1, HOUR) < 0 && errno == EDQUOT,
		      "file %d: not refused with EDQUOT (errno %d)", i, errno);
	/* Drained timers are given back: exactly that many fit again. */
	HTW_CHILD_CHECK(!ioctl(fd[0], HTW_IOC_DRAIN, &d), "drain: errno %d", errno);
	err = schedule_until_refused(fd + 1, 2, LIM_TIMERS, &total);
	HTW_CHILD_CHECK(err == EDQUOT && total == (long)d.drained,
	      "after draining %llu: %ld more, then errno %d", d.drained, total, err);
	close_all(fd, 3);
	return 0;
}

TEST_F_TIMEOUT(limits, timers_edquot_at_exactly_the_limit, 90)
{
	unsigned long old;
	int fd;

	/* Only this limit is needed: it is older than the others. */
	ASSERT_EQ(0, htw_test_get_param("max_user_timers", &old));
	ASSERT_EQ(0, htw_test_set_param("max_user_timers", LIM_TIMERS, NULL));
	EXPECT_EQ(0, run_as(NOBODY, timers_as_nobody, NULL));
	fd = htw_test_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(CHUNK, schedule_n(fd, CHUNK, HOUR));
	close(fd);
	htw_test_set_param("max_user_timers", old, NULL);
}

/*
 * (d) The user-namespace chain.  nobody ("the creator") holds some files
 * and timers, then a child of it creates a user namespace where it is
 * uid 0 and where root maps a second uid.  Both must count against the
 * creator's limit: uid 0 inside gets what is left, and uid 1 inside gets
 * nothing until uid 0 gives some back.
 */
#define CREATOR_FILES	5
#define CREATOR_TIMERS	20000

struct chain_ctx {
	int up[2];	/* namespace child -> root: "unshared, map me" */
	int down[2];	/* root -> namespace child: "mapped" */
	int pair[2];	/* uid 1 inside -> uid 0 inside */
	int back[2];	/* uid 0 inside -> uid 1 inside */
};

/*
 * uid 1 inside: a kuid of its own, yet charged to the creator.  It drops
 * the copies of its parent's descriptors first, or the file its parent
 * closes would stay open here.
 */
static int chain_second_uid(struct chain_ctx *c, int *inherited, int ninh)
{
	int fd[LIM_INSTANCES + 1], n, err;
	long total;

	close_all(inherited, ninh);
	HTW_CHILD_CHECK(!setgid(1) && !setuid(1), "cannot become uid 1 inside: errno %d", errno);
	fd[0] = htw_test_open(0);
	HTW_CHILD_CHECK(fd[0] < 0 && errno == EMFILE,
	      "uid 1 inside opened a file past its creator's limit (fd %d errno %d)",
	      fd[0], errno);
	HTW_CHILD_CHECK(!tell(c->pair[1]) && !await(c->back[0]), "no word from uid 0 inside");
	err = open_until_refused(fd, LIM_INSTANCES + 1, &n);
	HTW_CHILD_CHECK(n == 1 && err == EMFILE, "after one close: %d files, then errno %d", n, err);
	err = schedule_until_refused(fd, 1, LIM_TIMERS, &total);
	HTW_CHILD_CHECK(err == EDQUOT && total == LIM_TIMERS - CREATOR_TIMERS,
	      "uid 1 inside: %ld timers, then errno %d; want %d, then EDQUOT",
	      total, err, LIM_TIMERS - CREATOR_TIMERS);
	close_all(fd, n);
	return 0;
}

/* uid 0 inside: only what is left of the creator's limits. */
static int chain_ns_root(struct chain_ctx *c)
{
	int fd[LIM_INSTANCES + 1], n, err, status;
	struct htw_drain d = {};
	long total;
	pid_t pid;

	err = open_until_refused(fd, LIM_INSTANCES + 1, &n);
	HTW_CHILD_CHECK(n == LIM_INSTANCES - CREATOR_FILES && err == EMFILE,
	      "uid 0 inside: %d files, then errno %d (%s); want %d, then EMFILE",
	      n, err, strerror(err), LIM_INSTANCES - CREATOR_FILES);
	err = schedule_until_refused(fd, 1, LIM_TIMERS, &total);
	HTW_CHILD_CHECK(err == EDQUOT && total == LIM_TIMERS - CREATOR_TIMERS,
	      "uid 0 inside: %ld timers, then errno %d; want %d, then EDQUOT",
	      total, err, LIM_TIMERS - CREATOR_TIMERS);
	fflush(stdout);
	pid = fork();
	HTW_CHILD_CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(chain_second_uid(c, fd, n));
	if (await(c->pair[0]) == 0) {
		/* Give back one file and every timer. */
		close(fd[--n]);
		ioctl(fd[0], HTW_IOC_DRAIN, &d);
		tell(c->back[1]);
	}
	status = wait_child(pid, CHILD_SECONDS / 2);
	close_all(fd, n);
	return status;
}

static int chain_namespace_child(struct chain_ctx *c)
{
	pid_t self = getpid();

	HTW_CHILD_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): errno %d", errno);
	HTW_CHILD_CHECK(write(c->up[1], &self, sizeof(self)) == sizeof(self) && !await(c->down[0]),
	      "root did not map the namespace");
	/* Mapped: this process is uid 0 inside, with the namespace's caps. */
	HTW_CHILD_CHECK(getuid() == 0, "uid %d inside, want 0", getuid());
	return chain_ns_root(c);
}

static int chain_creator(void *arg)
{
	struct chain_ctx *c = arg;
	int fd[CREATOR_FILES], n, err;
	long total;
	pid_t pid;

	err = open_until_refused(fd, CREATOR_FILES, &n);
	HTW_CHILD_CHECK(n == CREATOR_FILES, "creator: open errno %d", err);
	err = schedule_until_refused(fd, 1, CREATOR_TIMERS, &total);
	HTW_CHILD_CHECK(!err && total == CREATOR_TIMERS, "creator: %ld timers, errno %d", total, err);
	fflush(stdout);
	pid = fork();
	HTW_CHILD_CHECK(pid >= 0, "fork");
	if (pid == 0)
		_exit(chain_namespace_child(c));
	close(c->up[1]);
	close(c->down[0]);
	err = wait_child(pid, CHILD_SECONDS - 5);
	close_all(fd, n);
	return err;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, s, strlen(s));
		close(fd);
	}
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Root maps the namespace: uid 0 -> nobody, uid 1 -> another kuid. */
static int map_namespace(pid_t pid)
{
	char path[64], map[64];

	snprintf(map, sizeof(map), "0 %d 1\n1 %d 1\n", NOBODY, OTHER_KUID);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	if (write_file(path, map))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	return write_file(path, map);
}

static int get_ns_budget(pid_t pid, struct htw_ns_limits *req)
{
	int dev = htw_test_open(0), err;

	memset(req, 0, sizeof(*req));
	if (dev < 0)
		return errno;
	err = htw_test_ns_budget(dev, HTW_IOC_NS_LIMITS_GET, pid, req);
	close(dev);
	return err;
}

#define USERNS_CLONE	"/proc/sys/kernel/unprivileged_userns_clone"

TEST_F_TIMEOUT(limits, user_namespace_chain_counts_against_creator, 90)
{
	struct chain_ctx c;
	int clone_old = -1, status;
	pid_t pid, nspid;

	if (access("/proc/self/ns/user", F_OK))
		SKIP(return, "kernel without CONFIG_USER_NS");
	set_limits(_metadata, self, LIM_INSTANCES, LIM_TIMERS, LIM_WHEEL_BYTES);
	ASSERT_EQ(0, pipe(c.up));
	ASSERT_EQ(0, pipe(c.down));
	ASSERT_EQ(0, pipe(c.pair));
	ASSERT_EQ(0, pipe(c.back));
	/* Debian's switch for unprivileged user namespaces, put back below. */
	if (!read_int(USERNS_CLONE, &clone_old) && clone_old != 1)
		EXPECT_EQ(0, write_file(USERNS_CLONE, "1"));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(drop_to(NOBODY) ? 100 : chain_creator(&c));
	close(c.up[1]);
	close(c.down[0]);
	/* The namespace child says it unshared, and who it is. */
	if (read(c.up[0], &nspid, sizeof(nspid)) == sizeof(nspid)) {
		EXPECT_EQ(0, map_namespace(nspid)) TH_LOG("writing its maps: errno %d", errno);
		/* A budget that never binds: the creator's limits are tested. */
		EXPECT_EQ(0, htw_test_set_ns_budget(nspid, LIM_INSTANCES, LIM_TIMERS, LIM_WHEEL_BYTES));
		tell(c.down[1]);
	}
	status = wait_child(pid, CHILD_SECONDS);
	if (clone_old == 0)
		write_file(USERNS_CLONE, "0");
	EXPECT_EQ(0, status);
}

/*
 * Two user namespaces that root creates (as a container manager does,
 * here without uid maps: their tasks stay kuid 0), each with the default
 * budget, a quarter of root's limits: the first fills its budget and gets
 * EMFILE and EDQUOT, the second still gets its whole budget, and root the
 * rest of its own.  Root raises the first's file budget; the namespace's
 * own root cannot, nor can nobody.
 */
#define BUDGET_FILES	(LIM_INSTANCES / 4)
#define BUDGET_TIMERS	(LIM_TIMERS / 4)

struct budget_member {
	int go[2], done[2];
	int files, open_err, files2, open_err2, set_err;
	long timers;
	int timer_err;
	struct htw_ns_limits own;
	int get_err;
};

/*
 * In a new user namespace: fill the budget, then (told) open again.  The
 * first file, kept for the budget's ioctls, counts in the budget too.
 */
static int budget_member(struct budget_member *m)
{
	struct htw_ns_limits raise = { .max = { LIM_INSTANCES } };
	int fd[LIM_INSTANCES + 1], n, more, ctl;

	HTW_CHILD_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): errno %d", errno);
	ctl = htw_test_open(0);
	HTW_CHILD_CHECK(ctl >= 0, "open in the namespace: errno %d", errno);
	m->open_err = open_until_refused(fd, LIM_INSTANCES + 1, &n);
	m->files = n + 1;
	m->timer_err = schedule_until_refused(&ctl, 1, LIM_TIMERS, &m->timers);
	m->get_err = htw_test_ns_budget(ctl, HTW_IOC_NS_LIMITS_GET, 0, &m->own);
	m->set_err = htw_test_ns_budget(ctl, HTW_IOC_NS_LIMITS_SET, 0, &raise);
	HTW_CHILD_CHECK(!tell(m->done[1]) && !await(m->go[0]), "no word from root");
	m->open_err2 = open_until_refused(fd + n, LIM_INSTANCES + 1 - n, &more);
	m->files2 = more;
	HTW_CHILD_CHECK(!tell(m->done[1]) && !await(m->go[0]), "no word from root");
	close_all(fd, n + more);
	close(ctl);
	return 0;
}

static pid_t start_member(struct budget_member *m)
{
	pid_t pid;

	if (pipe(m->go) || pipe(m->done))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(budget_member(m));
	return pid;
}

/* Through a descriptor root opened: nobody may not set a budget. */
static int set_as_nobody(void *arg)
{
	struct htw_ns_limits req = { .userns_fd = *(int *)arg, .max = { LIM_INSTANCES } };
	int dev = htw_test_open(0);

	return dev >= 0 && ioctl(dev, HTW_IOC_NS_LIMITS_SET, &req) && errno == EPERM ? 0 : 1;
}

TEST_F_TIMEOUT(limits, user_namespace_budgets_keep_siblings_and_creator, 90)
{
	struct budget_member *m = mmap(NULL, 2 * sizeof(*m), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fd[LIM_INSTANCES + 1], n, err, nsfd;
	struct htw_ns_limits got;
	char path[64];
	long total;
	pid_t a, b;

	if (access("/proc/self/ns/user", F_OK))
		SKIP(return, "kernel without CONFIG_USER_NS");
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 0, 2 * sizeof(*m));
	set_limits(_metadata, self, LIM_INSTANCES, LIM_TIMERS, LIM_WHEEL_BYTES);

	a = start_member(&m[0]);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, await(m[0].done[0]));
	EXPECT_EQ(BUDGET_FILES, m[0].files);
	EXPECT_EQ(EMFILE, m[0].open_err);
	EXPECT_EQ(BUDGET_TIMERS, m[0].timers);
	EXPECT_EQ(EDQUOT, m[0].timer_err);
	/* The namespace reads its own budget; it cannot raise it. */
	EXPECT_EQ(0, m[0].get_err);
	EXPECT_EQ(BUDGET_FILES, m[0].own.max[HTW_NS_INSTANCES]);
	EXPECT_EQ(BUDGET_FILES, m[0].own.used[HTW_NS_INSTANCES]);
	EXPECT_EQ(BUDGET_TIMERS, m[0].own.used[HTW_NS_TIMERS]);
	EXPECT_EQ(0, m[0].own.own);
	EXPECT_EQ(EPERM, m[0].set_err);

	/* The sibling gets its whole budget. */
	b = start_member(&m[1]);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, await(m[1].done[0]));
	EXPECT_EQ(BUDGET_FILES, m[1].files);
	EXPECT_EQ(EMFILE, m[1].open_err);
	EXPECT_EQ(BUDGET_TIMERS, m[1].timers);

	/* Root: the rest of its own limits, exactly. */
	err = open_until_refused(fd, LIM_INSTANCES + 1, &n);
	EXPECT_EQ(LIM_INSTANCES - 2 * BUDGET_FILES, n);
	EXPECT_EQ(EMFILE, err);
	if (n) {
		err = schedule_until_refused(fd, 1, LIM_TIMERS, &total);
		EXPECT_EQ(LIM_TIMERS - 2 * BUDGET_TIMERS, total);
		EXPECT_EQ(EDQUOT, err);
	}
	close_all(fd, n);

	/* Root raises the first namespace's files by two; nobody cannot. */
	snprintf(path, sizeof(path), "/proc/%d/ns/user", a);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, nsfd);
	EXPECT_EQ(0, run_as(NOBODY, set_as_nobody, &nsfd));
	close(nsfd);
	EXPECT_EQ(0, htw_test_set_ns_budget(a, BUDGET_FILES + 2, 0, 0));
	ASSERT_EQ(0, get_ns_budget(a, &got));
	EXPECT_EQ(BUDGET_FILES + 2, got.max[HTW_NS_INSTANCES]);
	EXPECT_EQ(BUDGET_TIMERS, got.max[HTW_NS_TIMERS]);
	EXPECT_EQ(1U << HTW_NS_INSTANCES, got.own);
	tell(m[0].go[1]);
	ASSERT_EQ(0, await(m[0].done[0]));
	EXPECT_EQ(2, m[0].files2);
	EXPECT_EQ(EMFILE, m[0].open_err2);
	/* The initial namespace's limits are the module parameters. */
	EXPECT_EQ(EINVAL, get_ns_budget(0, &got));
	EXPECT_EQ(EINVAL, htw_test_set_ns_budget(0, 1, 1, 1));

	/* The sibling's second round finds its budget still full; then both go. */
	tell(m[1].go[1]);
	ASSERT_EQ(0, await(m[1].done[0]));
	EXPECT_EQ(0, m[1].files2);
	EXPECT_EQ(EMFILE, m[1].open_err2);
	tell(m[0].go[1]);
	tell(m[1].go[1]);
	EXPECT_EQ(0, wait_child(a, CHILD_SECONDS));
	EXPECT_EQ(0, wait_child(b, CHILD_SECONDS));
	munmap(m, 2 * sizeof(*m));
}

/* One budget request through @dev; the errno, 0 for success. */
static int ns_request(int dev, unsigned long cmd, struct htw_ns_limits req)
{
	return ioctl(dev, cmd, &req) ? errno : 0;
}

/*
 * The budget ioctls' refusals, each with nothing changed: no descriptor,
 * one of no namespace or of another kind, the initial namespace, fields
 * that must be 0, and a file without the handshake.  In a user namespace
 * of its own (where the kernel has them), a refused set leaves the
 * default, and a set one reads back.
 */
static int ns_requests_in_namespace(void *arg)
{
	struct htw_ns_limits req = { .userns_fd = -1 }, bad;
	int dev;

	HTW_CHILD_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): errno %d", errno);
	dev = htw_test_open(0);
	HTW_CHILD_CHECK(dev >= 0, "open in the namespace: errno %d", errno);
	bad = req;
	bad.max[0] = 1;
	bad.reserved[3] = 1;
	HTW_CHILD_CHECK(ns_request(dev, HTW_IOC_NS_LIMITS_SET, bad) == EINVAL, "reserved not refused");
	bad = req;
	bad.used[1] = 1;
	HTW_CHILD_CHECK(ns_request(dev, HTW_IOC_NS_LIMITS_SET, bad) == EINVAL, "used not refused");
	HTW_CHILD_CHECK(!ioctl(dev, HTW_IOC_NS_LIMITS_GET, &req) && !req.own,
			"a refused set changed the budget (own %#x, errno %d)", req.own, errno);
	HTW_CHILD_CHECK(req.max[HTW_NS_INSTANCES] == LIM_INSTANCES / 4 &&
			req.used[HTW_NS_INSTANCES] == 1,
			"budget %llu files, %llu used; want %d, 1",
			(unsigned long long)req.max[HTW_NS_INSTANCES],
			(unsigned long long)req.used[HTW_NS_INSTANCES], LIM_INSTANCES / 4);
	close(dev);
	return 0;
}

TEST_F_TIMEOUT(limits, ns_budget_requests_refused_with_their_errnos, 60)
{
	struct htw_ns_limits req = { .userns_fd = -1 }, bad;
	int dev, raw, null, nsfd;

	set_limits(_metadata, self, LIM_INSTANCES, LIM_TIMERS, LIM_WHEEL_BYTES);
	dev = htw_test_open(0);
	ASSERT_LE(0, dev);
	/* The test runs in the initial namespace: it has no budget. */
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, req));
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_SET, req));
	nsfd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0) {
		bad = req;
		bad.userns_fd = nsfd;
		EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
		close(nsfd);
	}
	/* No descriptor, or one that is no user namespace. */
	bad = req;
	bad.userns_fd = -2;
	EXPECT_EQ(EBADF, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
	bad.userns_fd = 1000000;
	EXPECT_EQ(EBADF, ns_request(dev, HTW_IOC_NS_LIMITS_SET, bad));
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	bad.userns_fd = null;
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
	close(null);
	nsfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0) {
		bad.userns_fd = nsfd;
		EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
		close(nsfd);
	}
	/* Fields that must be 0. */
	bad = req;
	bad.flags = 1;
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
	bad = req;
	bad.pad = 1;
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_GET, bad));
	bad = req;
	bad.own = 1;
	EXPECT_EQ(EINVAL, ns_request(dev, HTW_IOC_NS_LIMITS_SET, bad));
	EXPECT_EQ(-1, ioctl(dev, HTW_IOC_NS_LIMITS_GET, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* Before the handshake, like every other ioctl. */
	raw = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, raw);
	EXPECT_EQ(EBADFD, ns_request(raw, HTW_IOC_NS_LIMITS_GET, req));
	close(raw);
	close(dev);
	if (!access("/proc/self/ns/user", F_OK))
		EXPECT_EQ(0, run_as(NOBODY, ns_requests_in_namespace, NULL));
}

/* (e) With the default limits: how far one user gets, and how it ends. */
struct flood {
	int files, wheels, open_err, wheel_err, timer_err, guard;
	long timers;
	long avail_kb, used_kb;
};

static long mem_available_kb(void)
{
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * The guard: a default that lets one unprivileged user pin more than half
 * of the memory that was available when it started is no limit on a
 * shared machine (two such users exhaust it).  Stopping there also keeps
 * today's unlimited module from taking the test machine down with it.
 */
static int over_guard(struct flood *fl)
{
	fl->used_kb = fl->avail_kb - mem_available_kb();
	if (fl->used_kb > fl->avail_kb / 2)
		fl->guard = 1;
	return fl->guard;
}

/*
 * Open files until refused, each with the largest wheel if it may have
 * one; the files with a wheel go to @wfd.  Files whose wheel was refused
 * stay open: they are what an attacker would keep too.
 */
static int flood_files(struct flood *fl, int *wfd, uint64_t end)
{
	while (fl->files < NOFILE - 16 && !over_guard(fl)) {
		int fd, err;

		if (htw_test_now(CLOCK_MONOTONIC) > end)
			return ETIME;
		fd = htw_test_open(0);
		if (fd < 0)
			return errno;
		fl->files++;
		err = setup_largest(fd) ? errno : 0;
		if (!err)
			err = schedule_n(fd, 1, HOUR) == 1 ? 0 : errno;
		if (!err)
			wfd[fl->wheels++] = fd;
		else if (!fl->wheel_err)
			fl->wheel_err = err;
	}
	return 0;
}

static int flood_timers(struct flood *fl, const int *fd, uint64_t end)
{
	int full = 0;

	fl->timers = fl->wheels;	/* one each already */
	for (int i = 0; fl->wheels && full < fl->wheels; i = (i + 1) % fl->wheels) {
		int r;

		if (over_guard(fl))
			return 0;
		if (htw_test_now(CLOCK_MONOTONIC) > end)
			return ETIME;
		r = schedule_n(fd[i], CHUNK, HOUR);
		if (r < 0 && errno == ENOSPC) {
			full++;		/* this file is full; others may not be */
			continue;
		}
		if (r < 0)
			return errno;
		fl->timers += r;
	}
	return full ? ENOSPC : 0;
}

static int flood_as_nobody(void *arg)
{
	struct flood *fl = arg;
	uint64_t end = htw_test_now(CLOCK_MONOTONIC) + (CHILD_SECONDS - 10) * SEC;
	static int fd[NOFILE];

	fl->avail_kb = mem_available_kb();
	fl->open_err = flood_files(fl, fd, end);
	/* The wheels' bytes may be refused before the files are. */
	fl->timer_err = flood_timers(fl, fd, end);
	over_guard(fl);
	return 0;
}

TEST_F_TIMEOUT(limits, default_limits_flood_ends_in_errnos_not_oom, 90)
{
	unsigned long inst = 0;
	struct flood *fl;
	int have_inst;

	/*
	 * The defaults scale with RAM at the objects' production sizes; the
	 * UML test kernel's KASAN, kmemleak and slab debugging make each
	 * timer cost about six times that (946,179 timers took 389 MiB), so
	 * a flood there measures the debug allocator, not the limits.
	 */
	if (htw_test_is_uml())
		SKIP(return, "UML debug kernel: debug allocators inflate every object; run on real kernels");
	fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fl);
	memset(fl, 0, sizeof(*fl));
	/* Each case's teardown put back what it changed: these are the defaults. */
	have_inst = !htw_test_get_param("max_user_instances", &inst);
	EXPECT_EQ(0, run_as(NOBODY, flood_as_nobody, fl));
	ksft_print_msg("one user: %d files (open ended: %s), %d wheels (%s), %ld timers (%s); "
		       "%ld of %ld MiB available taken%s\n",
		       fl->files, fl->open_err ? strerror(fl->open_err) : "not refused",
		       fl->wheels, fl->wheel_err ? strerror(fl->wheel_err) : "none refused",
		       fl->timers, fl->timer_err ? strerror(fl->timer_err) : "not refused",
		       fl->used_kb >> 10, fl->avail_kb >> 10,
		       fl->guard ? ", stopped by the half-of-memory guard" : "");
	EXPECT_FALSE(fl->guard) TH_LOG("one unprivileged user took over half the available memory");
	EXPECT_TRUE(have_inst) TH_LOG("the module has no max_user_instances parameter");
	EXPECT_EQ(EMFILE, fl->open_err);
	if (have_inst)
		EXPECT_EQ(inst, fl->files);
	EXPECT_TRUE(!fl->wheel_err || fl->wheel_err == EDQUOT) TH_LOG("wheel refused with %s",
								    strerror(fl->wheel_err));
	EXPECT_TRUE(fl->timer_err == EDQUOT || fl->timer_err == ENOSPC)
		TH_LOG("timers ended with %s", strerror(fl->timer_err));
	munmap(fl, sizeof(*fl));
}

TEST_HARNESS_MAIN
