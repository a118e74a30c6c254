/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the user-space tests of the device (tests/selftests,
 * tests/stress): open with the handshake, the clock, the timer slab's
 * object count and the module's parameters.
 */
#ifndef _HTWHEEL_TEST_UTIL_H
#define _HTWHEEL_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

/*
 * @path = build/@name: the test programs are in build/tests, and the
 * programs they run (the CLI, the examples) one level up.  0, or -1 if
 * /proc/self/exe could not be read or the path does not fit.
 */
static inline int htw_test_build_path(char *path, size_t size,
				      const char *name)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);
	char *slash;

	if (n <= 0)
		return -1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return -1;
	*slash = '\0';			/* build/tests */
	slash = strrchr(path, '/');
	if (!slash)
		return -1;
	n = snprintf(slash, path + size - slash, "/%s", name);
	return n < path + size - slash ? 0 : -1;
}

/* The whole of file @fd from its start into @buf, NUL-terminated. */
static inline void htw_test_slurp(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
}

/* The value of @key in the fdinfo of @fd, or -1. */
static inline long long htw_test_fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t len = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = strtoll(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Open /dev/htwheel and do the handshake; -1 with errno on failure. */
static inline int htw_test_open(int flags)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC | flags);

	if (fd >= 0 && ioctl(fd, HTW_IOC_API, &api)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline uint64_t htw_test_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Schedule @n relative timers @delay ns away, cookies 0..n-1, from @e
 * (overwritten); the ioctl's result: how many, or -1 and errno.
 */
static inline int htw_test_schedule_all(int fd, struct htw_timer_entry *e,
					unsigned int n, uint64_t delay)
{
	struct htw_schedule req = { .entries = (uintptr_t)e, .count = n };

	memset(e, 0, n * sizeof(*e));
	for (unsigned int i = 0; i < n; i++) {
		e[i].cookie = i;
		e[i].expires = delay;
	}
	return ioctl(fd, HTW_IOC_SCHEDULE, &req);
}

/* Timers in one object of the module's htw_timer cache (src/htw_handles.h). */
#define HTW_TEST_TIMERS_PER_CHUNK	585

/*
 * Timer slots the module's htw_timer kmem_cache holds, the memory the
 * timers really use: live objects, each a chunk of
 * HTW_TEST_TIMERS_PER_CHUNK timers that a file keeps until it is closed;
 * -1 if that cannot be read (a merged cache has no /sys/kernel/slab entry
 * of its own: the test kernels boot with slab_nomerge).  Writing "1" to
 * shrink first flushes the per-CPU slabs, whose free objects the count
 * would otherwise include.
 */
static inline long htw_test_timer_slots(void)
{
	FILE *f = fopen("/sys/kernel/slab/htw_timer/shrink", "w");
	long n = -1;

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/sys/kernel/slab/htw_timer/objects", "r");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n < 0 ? n : n * HTW_TEST_TIMERS_PER_CHUNK;
}

/* Set a module parameter, returning its old value in *old if asked. */
static inline int htw_test_set_param(const char *name, unsigned long v,
				     unsigned long *old)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/htwheel/parameters/%s", name);
	if (old) {
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%lu", old) != 1) {
			fclose(f);
			return -1;
		}
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lu\n", v);
	return fclose(f);
}

/* Read a module parameter; -1 if it does not exist (an older module). */
static inline int htw_test_get_param(const char *name, unsigned long *v)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/module/htwheel/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%lu", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/*
 * User-Mode Linux: system calls are ptrace round trips and there is one
 * CPU, so latency figures mean nothing there.  uname -m reports the host's
 * machine under UML, so look at what its /proc/cpuinfo says instead.
 */
static inline int htw_test_is_uml(void)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int uml = 0;

	if (!f)
		return 0;
	while (!uml && fgets(line, sizeof(line), f))
		uml = !!strstr(line, "User Mode Linux");
	fclose(f);
	return uml;
}

/*
 * The kernel log from now on: /dev/kmsg opened non-blocking and moved to
 * its end, so that a later htw_test_kmsg_find() sees only what a test
 * caused.  -1 if there is no /dev/kmsg.
 */
static inline int htw_test_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Kernel reports that mean the machine was hurt: stalls, lockups, OOM. */
static const char *const htw_test_kmsg_bad[] = {
	"soft lockup", "hard LOCKUP", "workqueue lockup",
	/* rcu_sched/rcu_preempt "self-detected stall", "detected stalls" */
	"detected stall", "detected expedited stall", "RCU stall",
	"hung task", "hung_task", "blocked for more than",
	"Out of memory", "oom-kill", "invoked oom-killer",
	NULL,
};

/*
 * Read the records logged since htw_test_kmsg_open() and copy the first
 * one that contains a string of htw_test_kmsg_bad into @line.  Returns 1
 * if one did, 0 if none, -1 if the log cannot be read.  Records that were
 * overwritten meanwhile (EPIPE) are skipped.
 */
static inline int htw_test_kmsg_find(int fd, char *line, size_t size)
{
	char rec[2048];
	ssize_t n;
	int i;

	if (fd < 0)
		return -1;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		rec[n] = '\0';
		for (i = 0; htw_test_kmsg_bad[i]; i++) {
			if (strstr(rec, htw_test_kmsg_bad[i])) {
				rec[strcspn(rec, "\n")] = '\0';
				if (strlen(rec) >= size)
					rec[size - 1] = '\0';
				memcpy(line, rec, strlen(rec) + 1);
				return 1;
			}
		}
	}
}

/*
 * A check inside a forked child, where the harness's ASSERTs do not reach
 * the parent: say what went wrong and return 1, the child's exit status.
 */
#define HTW_CHILD_CHECK(cond, fmt, ...) do {				\
	if (!(cond)) {							\
		printf("# %s:%d: " fmt "\n", __func__, __LINE__,	\
		       ##__VA_ARGS__);					\
		fflush(stdout);						\
		return 1;						\
	}								\
} while (0)

/*
 * Whether the module has the shared timer table, asked on a file of its
 * own (a file takes the handshake once): 1 or 0, or -errno if the device
 * cannot be asked at all.
 */
static inline int htw_test_table_supported(void)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = ioctl(fd, HTW_IOC_API, &api) ? -errno :
					      !!(api.features & HTW_FEATURE_TABLE);
	close(fd);
	return ret;
}

/*
 * HTW_IOC_NS_LIMITS_GET or _SET (@cmd) through file @dev on the user
 * namespace of @pid (0: the caller's own, by -1): 0 or the errno.
 */
static inline int htw_test_ns_budget(int dev, unsigned long cmd, pid_t pid,
				     struct htw_ns_limits *req)
{
	char path[64];
	int err = 0;

	req->userns_fd = -1;
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
		req->userns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (req->userns_fd < 0)
			return errno;
	}
	if (ioctl(dev, cmd, req))
		err = errno;
	if (pid)
		close(req->userns_fd);
	return err;
}

/* Set the budget of @pid's user namespace through a file of its own. */
static inline int htw_test_set_ns_budget(pid_t pid, uint64_t files, uint64_t timers,
					 uint64_t bytes)
{
	struct htw_ns_limits req = { .max = { files, timers, bytes } };
	int dev = htw_test_open(0), err;

	if (dev < 0)
		return errno;
	err = htw_test_ns_budget(dev, HTW_IOC_NS_LIMITS_SET, pid, &req);
	close(dev);
	return err;
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

/* What htw_test_in_time_ns() returns on a kernel without time namespaces. */
#define HTW_TEST_NS_UNSUPPORTED	99

static inline void htw_test_split_ns(long long off_ns, long long *sec,
				     long long *nsec)
{
	*sec = off_ns / 1000000000LL;
	*nsec = off_ns % 1000000000LL;
	if (*nsec < 0) {	/* the file wants 0 <= nsec < 1 s */
		(*sec)--;
		*nsec += 1000000000LL;
	}
}

/*
 * Run @fn in a child in a new time namespace whose CLOCK_MONOTONIC is
 * @mono_ns and CLOCK_BOOTTIME @boot_ns from the host's, and return its
 * exit status (HTW_TEST_NS_UNSUPPORTED, or 90..93 when the namespace could
 * not be made).  The offsets must be written before any task is in the
 * namespace, and only children of the unsharing process are; so the
 * caller runs this in a child of its own.
 */
static inline int htw_test_in_time_ns(long long mono_ns, long long boot_ns,
				      int (*fn)(void))
{
	long long ms, mn, bs, bn;
	int status;
	pid_t pid;
	FILE *f;

	htw_test_split_ns(mono_ns, &ms, &mn);
	htw_test_split_ns(boot_ns, &bs, &bn);
	if (unshare(CLONE_NEWTIME))
		return errno == EINVAL ? HTW_TEST_NS_UNSUPPORTED : 90;
	f = fopen("/proc/self/timens_offsets", "w");
	if (!f)
		return 91;
	fprintf(f, "monotonic %lld %lld\nboottime %lld %lld\n", ms, mn, bs, bn);
	if (fclose(f))
		return 92;
	pid = fork();
	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 93;
	return WEXITSTATUS(status);
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * True if the kernel reports the table.  If it does not, the test is
 * marked skipped, as such a kernel cannot run it, and the caller returns.
 */
static inline bool htw_test_table_or_skip(struct __test_metadata *_metadata)
{
	int ret = htw_test_table_supported();

	ASSERT_LE(0, ret) TH_LOG("HTW_IOC_API: %s", strerror(-ret));
	if (!ret)
		SKIP(return false, "the kernel does not report HTW_FEATURE_TABLE");
	return true;
}
#endif

#endif /* _HTWHEEL_TEST_UTIL_H */
