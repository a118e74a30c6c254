// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel_ubench: the user-space half of `make bench`, run inside UML.
 *
 *   htwheel_ubench sched   [N]   schedule + cancel N timers, every API
 *   htwheel_ubench deliver [N]   N timers expiring over ~1 s: CPU, lateness
 *   htwheel_ubench idle    SECS  tick wakeups with nothing / one timer 1 h away
 *   htwheel_ubench mem     [N]   kernel memory per pending timer
 *
 * Output: one measurement per line, "<case> <metric> <value>", for
 * tools/bench/report.py.  It measures and prints; it never judges.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <linux/htwheel.h>

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void die(const char *what)
{
	fprintf(stderr, "htwheel_ubench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static uint64_t mono(void) { return now_ns(CLOCK_MONOTONIC); }
static uint64_t cpu(void) { return now_ns(CLOCK_PROCESS_CPUTIME_ID); }

static struct timespec ts_of(uint64_t ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	return ts;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = ts_of(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* xorshift64*: fixed seed, same sequence on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Log-uniform 8.6 s .. 73 min, as the in-kernel bench: nothing fires. */
static uint64_t far_delay(void)
{
	unsigned int e = 33 + rnd() % 9;

	return (1ULL << e) + (rnd() & ((1ULL << e) - 1));
}

static void out(const char *c, const char *m, double v)
{
	printf("%s %s %.6g\n", c, m, v);
	fflush(stdout);
}

/* /proc/stat: busy and idle jiffies of the whole (single-CPU) machine. */
static void cpu_stat(uint64_t *busy, uint64_t *idle)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		die("/proc/stat");
	fclose(f);
	*idle = v[3] + v[4];
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

static void raise_limits(unsigned long n)
{
	struct rlimit rl = { n + 1000, n + 1000 };
	FILE *f;

	f = fopen("/proc/sys/fs/nr_open", "w");
	if (f) {
		fprintf(f, "%lu\n", n + 1000);
		fclose(f);
	}
	f = fopen("/proc/sys/fs/file-max", "w");
	if (f) {
		fprintf(f, "%lu\n", 4 * n + 100000);
		fclose(f);
	}
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit NOFILE");
	rl.rlim_cur = RLIM_INFINITY;
	rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_SIGPENDING, &rl);
}

/* ---- htwheel ---- */

/*
 * The module's default geometry (1 ms x 512).  A kernel without high
 * resolution timers (UML under time travel) refuses a tick below its
 * hrtimer resolution: then take the jiffy, 10 ms.
 */
static int open_wheel(int flags)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	struct htw_setup setup = { .clockid = CLOCK_MONOTONIC };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC | flags);

	if (fd < 0)
		die("open /dev/htwheel");
	if (ioctl(fd, HTW_IOC_API, &api))
		die("HTW_IOC_API");
	if (ioctl(fd, HTW_IOC_SETUP, &setup) && errno == EINVAL) {
		memset(&setup, 0, sizeof(setup));
		setup.clockid = CLOCK_MONOTONIC;
		setup.tick_ns = 10 * NSEC_PER_MSEC;
		if (ioctl(fd, HTW_IOC_SETUP, &setup))
			die("HTW_IOC_SETUP");
	}
	return fd;
}

/* @n timers, @batch per ioctl, each taken whole; returns the ioctls made. */
static unsigned long schedule_batches(int fd, struct htw_timer_entry *e,
				      unsigned long n, unsigned long batch)
{
	unsigned long off, calls = 0;

	for (off = 0; off < n; off += batch) {
		struct htw_schedule s = {
			.entries = (uintptr_t)(e + off),
			.count = n - off < batch ? n - off : batch,
		};

		if (ioctl(fd, HTW_IOC_SCHEDULE, &s) < 0 || s.done != s.count)
			die("HTW_IOC_SCHEDULE");
		calls++;
	}
	return calls;
}

/* @n cancels, @batch per ioctl, each timer pending; returns the ioctls made. */
static unsigned long cancel_batches(int fd, struct htw_cancel_entry *c,
				    unsigned long n, unsigned long batch)
{
	unsigned long off, calls = 0;

	for (off = 0; off < n; off += batch) {
		struct htw_cancel s = {
			.entries = (uintptr_t)(c + off),
			.count = n - off < batch ? n - off : batch,
		};

		if (ioctl(fd, HTW_IOC_CANCEL, &s) < 0 || s.cancelled != s.count)
			die("HTW_IOC_CANCEL");
		calls++;
	}
	return calls;
}

static void read_wheel_stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(fd, HTW_IOC_STATS, st))
		die("HTW_IOC_STATS");
}

/* ---- schedule + cancel ---- */

struct span {
	uint64_t wall, cpu;
};

static struct span span_start(void)
{
	struct span s = { mono(), cpu() };

	return s;
}

static void span_report(const char *c, struct span s, unsigned long n,
			unsigned long calls)
{
	/* CPU-bound loop on an otherwise idle CPU: wall time is its CPU time. */
	out(c, "cpu_ns", (double)(mono() - s.wall) / n);
	out(c, "tick_cpu_ns", (double)(cpu() - s.cpu) / n);
	out(c, "syscalls", (double)calls / n);
}

static void bench_sched(unsigned long n)
{
	static const unsigned long batches[] = { 1, 64, 1024 };
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	struct htw_cancel_entry *c = calloc(n, sizeof(*c));
	uint64_t *delay = calloc(n, sizeof(*delay));
	int *fds = calloc(n, sizeof(*fds));
	struct itimerspec its = { 0 }, off = { 0 };
	unsigned long i, b, calls;
	struct span s;
	char name[64];

	if (!e || !c || !delay || !fds)
		die("calloc");
	raise_limits(n);
	for (i = 0; i < n; i++)
		delay[i] = far_delay();

	for (b = 0; b < ARRAY_SIZE(batches); b++) {
		int fd = open_wheel(0);

		for (i = 0; i < n; i++) {
			memset(&e[i], 0, sizeof(e[i]));
			e[i].cookie = i;
			e[i].expires = delay[i];
		}
		snprintf(name, sizeof(name), "sched.htwheel_b%lu", batches[b]);
		s = span_start();
		calls = schedule_batches(fd, e, n, batches[b]);
		for (i = 0; i < n; i++) {
			c[i].handle = e[i].handle;
			c[i].result = 0;
			c[i].pad = 0;
		}
		calls += cancel_batches(fd, c, n, batches[b]);
		span_report(name, s, n, calls);
		close(fd);
	}

	/* timerfd: one timer = create + settime + close */
	s = span_start();
	for (i = 0; i < n; i++) {
		int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

		its.it_value = ts_of(delay[i]);
		if (fd < 0 || timerfd_settime(fd, 0, &its, NULL))
			die("timerfd");
		close(fd);
	}
	span_report("sched.timerfd_create", s, n, 3 * n);

	/* timerfd: pre-created fds, settime to arm, settime to disarm */
	for (i = 0; i < n; i++) {
		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (fds[i] < 0)
			die("timerfd_create");
	}
	s = span_start();
	for (i = 0; i < n; i++) {
		its.it_value = ts_of(delay[i]);
		if (timerfd_settime(fds[i], 0, &its, NULL))
			die("timerfd_settime");
	}
	for (i = 0; i < n; i++)
		if (timerfd_settime(fds[i], 0, &off, NULL))
			die("timerfd_settime");
	span_report("sched.timerfd_arm", s, n, 2 * n);
	for (i = 0; i < n; i++)
		close(fds[i]);

	/* POSIX timers: timer_create + timer_settime + timer_delete */
	s = span_start();
	for (i = 0; i < n; i++) {
		struct sigevent sev = { .sigev_notify = SIGEV_NONE };
		timer_t t;

		its.it_value = ts_of(delay[i]);
		if (timer_create(CLOCK_MONOTONIC, &sev, &t) ||
		    timer_settime(t, 0, &its, NULL) || timer_delete(t))
			die("posix timer");
	}
	span_report("sched.posix", s, n, 3 * n);

	free(e);
	free(c);
	free(delay);
	free(fds);
}

/* ---- delivery ---- */

/* Lateness histogram: 4 bins per octave from 1 us; bin 0 is < 1 us. */
#define HBINS	120

struct lat {
	uint64_t *v;
	unsigned long n, early, hist[HBINS];
};

static void lat_add(struct lat *l, uint64_t seen, uint64_t deadline)
{
	uint64_t late = seen >= deadline ? seen - deadline : 0;
	unsigned int bin = 0;

	if (seen < deadline)
		l->early++;
	if (late >= 1000) {
		double x = (double)late / 1000;

		while (x >= 1.189207115 && bin < HBINS - 1) {	/* 2^(1/4) */
			x /= 1.189207115;
			bin++;
		}
		bin++;
		if (bin >= HBINS)
			bin = HBINS - 1;
	}
	l->hist[bin]++;
	l->v[l->n++] = late;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * CPU used by the whole machine: wall time minus idle time.  UML's CPU
 * clocks advance in 10 ms ticks and the work of timer interrupts and
 * softirqs lands on whatever runs (often the idle task), so process CPU
 * time says little; the idle time in /proc/stat is measured exactly by
 * NO_HZ idle accounting, though printed in 10 ms units.
 */
struct phase {
	uint64_t wall, cpu, busy, idle;
};

static struct phase phase_now(void)
{
	struct phase p = { mono(), cpu(), 0, 0 };

	cpu_stat(&p.busy, &p.idle);
	return p;
}

static void deliver_report(const char *c, struct lat *l, struct phase a,
			   unsigned long syscalls, unsigned long expect)
{
	struct phase b = phase_now();
	long tck = sysconf(_SC_CLK_TCK);
	double busy_ns = (double)(b.busy - a.busy) * NSEC_PER_SEC / tck;
	double idle_ns = (double)(b.idle - a.idle) * NSEC_PER_SEC / tck;
	unsigned int i;

	qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
	out(c, "expiries", l->n);
	out(c, "missing", expect - l->n);
	out(c, "early", l->early);
	out(c, "used_ns", ((double)(b.wall - a.wall) - idle_ns) / l->n);
	out(c, "tick_cpu_ns", (double)(b.cpu - a.cpu) / l->n);
	out(c, "tick_busy_ns", busy_ns / l->n);
	out(c, "tick_idle_ns", idle_ns / l->n);
	out(c, "wall_s", (double)(b.wall - a.wall) / NSEC_PER_SEC);
	out(c, "syscalls", (double)syscalls / l->n);
	out(c, "late_p50_ns", l->v[l->n / 2]);
	out(c, "late_p99_ns", l->v[l->n * 99 / 100]);
	out(c, "late_max_ns", l->v[l->n - 1]);
	for (i = 0; i < HBINS; i++)
		if (l->hist[i])
			printf("%s hist%u %lu\n", c, i, l->hist[i]);
}

#define RBATCH	4096

static void deliver_htwheel(unsigned long n, uint64_t *offset, int use_eventfd)
{
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	struct htw_expiry *rec = calloc(RBATCH, sizeof(*rec));
	const char *name = use_eventfd ? "deliver.htwheel_eventfd" : "deliver.htwheel_read";
	struct lat l = { .v = calloc(n, sizeof(uint64_t)) };
	unsigned long i, calls = 0, kearly = 0;
	int fd = open_wheel(use_eventfd ? O_NONBLOCK : 0), efd = -1, ep = -1;
	struct htw_stats st;
	struct phase p;
	uint64_t t0;

	if (!e || !rec || !l.v)
		die("calloc");
	if (use_eventfd) {
		struct htw_eventfd hev = { 0 };
		struct epoll_event ev = { .events = EPOLLIN };

		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ep = epoll_create1(EPOLL_CLOEXEC);
		hev.fd = efd;
		if (efd < 0 || ep < 0 || ioctl(fd, HTW_IOC_SET_EVENTFD, &hev) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev))
			die("eventfd setup");
	}
	t0 = mono() + 300 * NSEC_PER_MSEC;
	for (i = 0; i < n; i++) {
		e[i].cookie = i;
		e[i].expires = t0 + offset[i];
		e[i].flags = HTW_TIMER_ABSTIME;
	}
	schedule_batches(fd, e, n, 1024);
	sleep_until(t0 - 20 * NSEC_PER_MSEC);
	p = phase_now();
	while (l.n < n) {
		ssize_t r;
		uint64_t seen;

		if (use_eventfd) {
			struct epoll_event ev;
			uint64_t cnt;

			if (epoll_wait(ep, &ev, 1, -1) < 0) {
				if (errno == EINTR)
					continue;
				die("epoll_wait");
			}
			calls += 2;
			if (read(efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
				die("read eventfd");
		}
		for (;;) {
			r = read(fd, rec, RBATCH * sizeof(*rec));
			calls++;
			seen = mono();
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				die("read htwheel");
			}
			for (i = 0; i < (unsigned long)r / sizeof(*rec); i++) {
				if (rec[i].expired_ns < rec[i].deadline_ns)
					kearly++;
				if (rec[i].deadline_ns != e[rec[i].cookie].expires)
					kearly++;	/* garbage, counted as wrong */
				lat_add(&l, seen, rec[i].deadline_ns);
			}
			if (!use_eventfd || l.n >= n)
				break;
		}
	}
	deliver_report(name, &l, p, calls, n);
	read_wheel_stats(fd, &st);
	out(name, "kernel_early", kearly);
	out(name, "tick_ns", st.tick_ns);
	out(name, "tick_wakeups", st.tick_wakeups);
	out(name, "kernel_max_late_ns", st.max_late_ns);
	close(fd);
	if (efd >= 0)
		close(efd);
	if (ep >= 0)
		close(ep);
	free(e);
	free(rec);
	free(l.v);
}

static void deliver_timerfd(unsigned long n, uint64_t *offset)
{
	struct epoll_event *evs = calloc(RBATCH, sizeof(*evs));
	uint64_t *deadline = calloc(n, sizeof(*deadline));
	struct lat l = { .v = calloc(n, sizeof(uint64_t)) };
	int *fds = calloc(n, sizeof(*fds));
	struct itimerspec its = { 0 };
	unsigned long i, calls = 0, probe = n < 1000 ? n : 1000;
	uint64_t t0, t, est, armed_late = 0;
	struct phase p;
	int ep;

	if (!evs || !deadline || !l.v || !fds)
		die("calloc");
	raise_limits(n);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			die("timerfd + epoll_ctl");
	}
	/*
	 * Arming 100k fds takes seconds in UML: start the window after it, with
	 * room for a busy host (timers armed late are counted).
	 */
	t = mono();
	its.it_value = ts_of(3600 * NSEC_PER_SEC);
	for (i = 0; i < probe; i++)
		timerfd_settime(fds[i], 0, &its, NULL);
	est = (mono() - t) / probe;
	t0 = mono() + n * est * 3 + 500 * NSEC_PER_MSEC;
	for (i = 0; i < n; i++) {
		deadline[i] = t0 + offset[i];
		its.it_value = ts_of(deadline[i]);
		if (timerfd_settime(fds[i], TFD_TIMER_ABSTIME, &its, NULL))
			die("timerfd_settime");
	}
	t = mono();
	if (t > t0)
		for (i = 0; i < n; i++)
			armed_late += deadline[i] < t;
	sleep_until(t0 - 20 * NSEC_PER_MSEC);
	p = phase_now();
	while (l.n < n) {
		int k = epoll_wait(ep, evs, RBATCH, -1);
		uint64_t seen, cnt;

		calls++;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		seen = mono();
		for (i = 0; i < (unsigned long)k; i++) {
			unsigned long idx = evs[i].data.u64;

			calls++;
			if (read(fds[idx], &cnt, sizeof(cnt)) != sizeof(cnt))
				continue;	/* spurious: not counted */
			lat_add(&l, seen, deadline[idx]);
		}
	}
	deliver_report("deliver.timerfd_epoll", &l, p, calls, n);
	out("deliver.timerfd_epoll", "armed_after_deadline", armed_late);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(ep);
	free(evs);
	free(deadline);
	free(l.v);
	free(fds);
}

static void bench_deliver(unsigned long n)
{
	uint64_t *offset = calloc(n, sizeof(*offset));
	unsigned long i;

	if (!offset)
		die("calloc");
	/* Uniform over one second. */
	for (i = 0; i < n; i++)
		offset[i] = rnd() % NSEC_PER_SEC;
	deliver_htwheel(n, offset, 0);
	deliver_htwheel(n, offset, 1);
	deliver_timerfd(n, offset);
	free(offset);
}

/* ---- idle ---- */

/* Sum of the "timer" line of /proc/interrupts. */
static uint64_t timer_irqs(void)
{
	char line[512];
	uint64_t sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || !strstr(line, "timer"))
			continue;
		sum += strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return sum;
}

static void bench_idle(double secs)
{
	uint64_t span = (uint64_t)(secs * NSEC_PER_SEC), w0, i0, t;
	struct htw_timer_entry e = { .cookie = 1, .expires = 10 * NSEC_PER_MSEC };
	struct htw_expiry rec;
	struct htw_stats st;
	struct itimerspec its = { 0 };
	int fd = open_wheel(0), tfd;

	/* Let the wheel exist and settle: one timer, fired and read. */
	schedule_batches(fd, &e, 1, 1);
	if (read(fd, &rec, sizeof(rec)) != sizeof(rec))
		die("read");
	usleep(100000);
	read_wheel_stats(fd, &st);
	out("idle", "tick_ns", st.tick_ns);
	out("idle", "window_s", secs);

	/* nothing pending */
	read_wheel_stats(fd, &st);
	w0 = st.tick_wakeups;
	i0 = timer_irqs();
	t = mono();
	sleep_until(t + span);
	read_wheel_stats(fd, &st);
	out("idle.none", "tick_wakeups", st.tick_wakeups - w0);
	out("idle.none", "system_timer_irqs", timer_irqs() - i0);

	/* one htwheel timer an hour away (window ends 1 s before it) */
	memset(&e, 0, sizeof(e));
	e.expires = 3600 * NSEC_PER_SEC;
	read_wheel_stats(fd, &st);
	w0 = st.tick_wakeups;
	i0 = timer_irqs();
	t = mono();
	schedule_batches(fd, &e, 1, 1);
	sleep_until(t + span);
	read_wheel_stats(fd, &st);
	out("idle.htwheel_1h", "tick_wakeups", st.tick_wakeups - w0);
	out("idle.htwheel_1h", "system_timer_irqs", timer_irqs() - i0);
	out("idle.htwheel_1h", "pending", st.pending);
	close(fd);

	/* the same with one timerfd */
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	its.it_value = ts_of(3600 * NSEC_PER_SEC);
	i0 = timer_irqs();
	t = mono();
	timerfd_settime(tfd, 0, &its, NULL);
	sleep_until(t + span);
	out("idle.timerfd_1h", "system_timer_irqs", timer_irqs() - i0);
	close(tfd);
}

/* ---- memory ---- */

static long meminfo_bytes(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10) * 1024;
	fclose(f);
	return v;
}

static void save_slabinfo(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cat /proc/slabinfo > %s 2>/dev/null", path);
	if (system(cmd))
		return;
}

static void mem_delta(const char *c, long slab0, long free0, unsigned long n)
{
	out(c, "slab_bytes", (double)(meminfo_bytes("Slab") - slab0) / n);
	out(c, "memfree_bytes", (double)(free0 - meminfo_bytes("MemFree")) / n);
}

static void bench_mem(unsigned long n, const char *dir)
{
	struct htw_timer_entry *e = calloc(n, sizeof(*e));
	int *fds = calloc(n, sizeof(*fds));
	struct itimerspec its = { 0 };
	char path[512];
	unsigned long i;
	long slab0, free0;
	int fd, ep;

	if (!e || !fds)
		die("calloc");
	raise_limits(n);
	memset(e, 0, n * sizeof(*e));
	memset(fds, 0, n * sizeof(*fds));
	for (i = 0; i < n; i++)
		e[i].expires = 3600 * NSEC_PER_SEC + i;

	fd = open_wheel(0);
	sync();
	snprintf(path, sizeof(path), "%s/slab-htwheel-before.txt", dir);
	save_slabinfo(path);
	slab0 = meminfo_bytes("Slab");
	free0 = meminfo_bytes("MemFree");
	schedule_batches(fd, e, n, 1024);
	mem_delta("mem.htwheel", slab0, free0, n);
	snprintf(path, sizeof(path), "%s/slab-htwheel-after.txt", dir);
	save_slabinfo(path);
	close(fd);
	usleep(200000);

	ep = epoll_create1(EPOLL_CLOEXEC);
	its.it_value = ts_of(3600 * NSEC_PER_SEC);
	snprintf(path, sizeof(path), "%s/slab-timerfd-before.txt", dir);
	save_slabinfo(path);
	slab0 = meminfo_bytes("Slab");
	free0 = meminfo_bytes("MemFree");
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0 || timerfd_settime(fds[i], 0, &its, NULL) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			die("timerfd");
	}
	mem_delta("mem.timerfd_epoll", slab0, free0, n);
	snprintf(path, sizeof(path), "%s/slab-timerfd-after.txt", dir);
	save_slabinfo(path);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(ep);
	free(e);
	free(fds);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "sched")) {
		bench_sched(n);
	} else if (!strcmp(what, "deliver")) {
		bench_deliver(n);
	} else if (!strcmp(what, "idle")) {
		bench_idle(argc > 2 ? atof(argv[2]) : 5);
	} else if (!strcmp(what, "mem")) {
		bench_mem(n, argc > 3 ? argv[3] : ".");
	} else {
		fprintf(stderr, "usage: %s sched|deliver|mem [N] | idle [SECS]\n",
			argv[0]);
		return 2;
	}
	return 0;
}
