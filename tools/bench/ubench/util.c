// SPDX-License-Identifier: GPL-2.0
/*
 * What every benchmark of htwheel_ubench shares: see ubench.h.
 */
#include "ubench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

void die(const char *what)
{
	fprintf(stderr, "htwheel_ubench: %s: %s\n", what, strerror(errno));
	exit(1);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("calloc");
	return p;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t mono(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

uint64_t cpu_now(void)
{
	return now_ns(CLOCK_PROCESS_CPUTIME_ID);
}

struct timespec ts_of(uint64_t ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	return ts;
}

void sleep_until(uint64_t t)
{
	struct timespec ts = ts_of(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* xorshift64*; the seed is printed, so any run can be repeated. */
static uint64_t rng_state;
static uint64_t seed0;

void rng_seed(uint64_t seed)
{
	seed0 = seed;
	rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint64_t ub_seed(void)
{
	return seed0;
}

uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/*
 * Log-uniform 8.6 s .. 73 min, as the in-kernel bench: nothing fires
 * while it is measured, and a 1 ms x 512 wheel holds them in levels 1-2.
 */
uint64_t far_delay(void)
{
	unsigned int e = 33 + rnd() % 9;

	return (1ULL << e) + (rnd() & ((1ULL << e) - 1));
}

void put_sample(const char *section, const char *kase, unsigned long n,
		const char *who, const char *unit, double value)
{
	printf("sample\t%s\t%s\t%lu\t%s\t%s\t%.6g\n", section, kase, n, who,
	       unit, value);
}

void put_meta(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("meta\t%s\t", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void put_hist(const char *name, double bin_lo_us, unsigned long count)
{
	printf("hist\t%s\t%.6g\t%lu\n", name, bin_lo_us, count);
}

#define CPU_STEP_SPINS	100000

/*
 * The smallest advance of the process CPU clock, spinning: UML's moves in
 * jiffies although clock_getres() says 1 ns.  Bounded, because under UML
 * time travel (inf-cpu) no CPU time ever passes; 0: it did not move.
 */
static uint64_t cpu_step(void)
{
	uint64_t a = cpu_now(), b = a, c = a;
	unsigned long spins = 0;

	while ((b = cpu_now()) == a && ++spins < CPU_STEP_SPINS)
		;
	while ((c = cpu_now()) == b && ++spins < CPU_STEP_SPINS)
		;
	return c - b;
}

/* The facts every output file starts with. */
void meta_run(const char *what)
{
	struct timespec res;
	char load[128] = "";
	FILE *f;

	put_meta("program", "htwheel_ubench %s", what);
	put_meta("seed", "%llu", (unsigned long long)ub_seed());
	put_meta("repetitions", "%d measured after 1 discarded warm-up, order alternating",
		 UB_REPS);
	clock_getres(CLOCK_PROCESS_CPUTIME_ID, &res);
	put_meta("cpu clock",
		 "CLOCK_PROCESS_CPUTIME_ID, resolution %ld ns, measured step %llu ns (a window's error is up to one step)",
		 res.tv_nsec, (unsigned long long)cpu_step());
	put_meta("cpu accounting",
		 "process CPU: the program's user+system time; softirq, hrtimer interrupt and work-item time is not charged to it; the ': system CPU' cases are the whole machine's busy time (/proc/stat user+nice+system+irq+softirq, all CPUs, steal excluded, 1/USER_HZ units) over the same window; the ': machine CPU' cases are the online CPUs times the window less their idle, iowait and steal time (/proc/stat), all the CPU the window cost the machine, whoever was charged: idle is counted exactly where NOHZ is on, the other columns are tick-sampled");
	put_meta("online cpus", "%u", online_cpus());
	put_meta("syscalls",
		 "counted by the program, clock_gettime excluded (vDSO natively, a real system call in UML, alike for every contender)");
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fgets(load, sizeof(load), f))
			load[strcspn(load, "\n")] = 0;
		fclose(f);
		put_meta("loadavg before", "%s", load);
	}
}

void sysstat_now(struct sysstat *s)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8)
		die("/proc/stat");
	fclose(f);
	s->busy = (v[0] + v[1] + v[2] + v[5] + v[6]) * NSEC_PER_SEC / hz;
	s->idle = (v[3] + v[4]) * NSEC_PER_SEC / hz;
	s->steal = v[7] * NSEC_PER_SEC / hz;
}

unsigned int online_cpus(void)
{
	static long n;

	if (!n)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* /proc/stat is read outside the process-CPU window, so it costs nothing there. */
void window_begin(struct window *w)
{
	sysstat_now(&w->st);
	w->wall = mono();
	w->cpu = cpu_now();
}

void window_end(struct window *w)
{
	struct sysstat st;

	w->cpu = cpu_now() - w->cpu;
	w->wall = mono() - w->wall;
	sysstat_now(&st);
	w->st.busy = st.busy - w->st.busy;
	w->st.idle = st.idle - w->st.idle;
	w->st.steal = st.steal - w->st.steal;
	w->machine = online_cpus() * w->wall;
	/* The counters' units are coarser than the wall clock's: never below 0. */
	w->machine = w->machine > w->st.idle + w->st.steal ?
		     w->machine - w->st.idle - w->st.steal : 0;
}

void window_add(struct window *sum, const struct window *w)
{
	sum->cpu += w->cpu;
	sum->wall += w->wall;
	sum->machine += w->machine;
	sum->st.busy += w->st.busy;
	sum->st.idle += w->st.idle;
	sum->st.steal += w->st.steal;
}

void print_result(const char *section, const char *kase, unsigned long n,
		  const struct contender *c)
{
	char k[256];

	put_sample(section, kase, n, c->who, "ns", c->win.cpu / c->ops);
	snprintf(k, sizeof(k), "%s: system CPU", kase);
	put_sample(section, k, n, c->who, "ns", c->win.st.busy / c->ops);
	snprintf(k, sizeof(k), "%s: machine CPU", kase);
	put_sample(section, k, n, c->who, "ns", c->win.machine / c->ops);
	snprintf(k, sizeof(k), "%s: system calls", kase);
	put_sample(section, k, n, c->who, "syscalls", c->calls / c->ops);
	if (c->print)
		c->print(section, kase, n, c);
}

/* A new epoll set watching @fd for input, or an empty one for -1. */
int epoll_on(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		die("epoll_create1");
	if (fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl");
	return ep;
}

/* Where a loop pass leaves its clock readings: never optimised away. */
static volatile uint64_t loop_now;

/*
 * One pass of an event loop's wait on @ep, not waiting: what
 * epoll_wait() returned (0 or 1 event in *@ev).  The clock is read
 * before the wait and after it, as ev_run() and uv_run() read it in
 * every pass of libev's and libuv's loops (their time before polling,
 * and after it for the timers), so every contender's pass pays the same
 * two reads.
 */
int loop_wait(int ep, struct epoll_event *ev)
{
	int r;

	loop_now = mono();
	r = epoll_wait(ep, ev, 1, 0);
	if (r < 0 && errno != EINTR)
		die("epoll_wait");
	loop_now = mono();
	return r < 0 ? 0 : r;
}

/*
 * @c's figures less the null contender's (@null, run in the same
 * repetition): what @c's timers cost beyond the driver that feeds them.
 */
void print_net(const char *section, const char *kase, unsigned long n,
	       const struct contender *c, const struct contender *null)
{
	char k[256];

	if (!null || c == null || !null->ops)
		return;
	snprintf(k, sizeof(k), "%s: net of the driver", kase);
	put_sample(section, k, n, c->who, "ns",
		   c->win.cpu / c->ops - null->win.cpu / null->ops);
	snprintf(k, sizeof(k), "%s: machine CPU, net of the driver", kase);
	put_sample(section, k, n, c->who, "ns",
		   c->win.machine / c->ops - null->win.machine / null->ops);
}

static int same_group(const struct contender *a, const struct contender *b)
{
	if (!a->group || !b->group)
		return a->group == b->group;
	return !strcmp(a->group, b->group);
}

static void run_one(struct contender *c)
{
	memset(&c->win, 0, sizeof(c->win));
	c->ops = 0;
	c->calls = 0;
	c->run(c);
}

/*
 * Every contender's timed window lasts at least @min_window_ns: one whose
 * warm-up was shorter repeats its operations (same N, same delays) that
 * many passes, so that one host preemption weighs on htwheel's few
 * milliseconds no more than on an anchor's seconds.
 */
void run_section(const char *section, unsigned long n, struct contender *c,
		 unsigned int nc, uint64_t min_window_ns, unsigned int reps)
{
	unsigned int r, i, j;
	char order[512];

	for (i = 0; i < nc; i++) {
		c[i].passes = 1;
		run_one(&c[i]);
		if (c[i].win.wall < min_window_ns)
			c[i].passes = (min_window_ns + c[i].win.wall) /
				      (c[i].win.wall + 1);
		if (c[i].passes > 1)
			put_meta("passes", "%s, %s%s%s, n %lu: %lu per window (warm-up %.3f ms)",
				 section, c[i].who, c[i].group ? ", " : "",
				 c[i].group ? c[i].group : "", n, c[i].passes,
				 c[i].win.wall / 1e6);
	}
	for (r = 0; r < reps; r++) {
		order[0] = 0;
		for (j = 0; j < nc; j++) {
			i = r % 2 ? nc - 1 - j : j;
			run_one(&c[i]);
			snprintf(order + strlen(order), sizeof(order) - strlen(order),
				 "%s%s", j ? ", " : "", c[i].who);
		}
		put_meta("order", "%s, n %lu, repetition %u: %s", section, n, r + 1, order);
		for (i = 0; i < nc; i++) {
			if (c[i].own_rows) {
				c[i].print(section, NULL, n, &c[i]);
				continue;
			}
			if (c[i].kase) {
				print_result(section, c[i].kase, n, &c[i]);
				continue;
			}
			for (j = 0; j < nc; j++)
				if (c[j].kase && !strcmp(c[j].who, "htwheel") &&
				    same_group(&c[i], &c[j]))
					print_result(section, c[j].kase, n, &c[i]);
		}
		for (i = 0; i < nc; i++)
			if (c[i].win.st.steal)
				put_meta("steal", "%s, %s, n %lu: %.3f ms", section,
					 c[i].who, n, c[i].win.st.steal / 1e6);
	}
	fflush(stdout);
}

void raise_limits(unsigned long n)
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

/*
 * The module's default geometry.  A kernel without high resolution timers
 * (UML under time travel) refuses a tick below its hrtimer resolution:
 * then take the jiffy, 10 ms.  The tick in effect is printed as meta.
 */
int open_wheel(int flags)
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

unsigned long schedule_batches(int fd, struct htw_timer_entry *e,
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

unsigned long cancel_batches(int fd, struct htw_cancel_entry *c,
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

void read_wheel_stats(int fd, struct htw_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(fd, HTW_IOC_STATS, st))
		die("HTW_IOC_STATS");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void sort_u64(uint64_t *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t pct(const uint64_t *v, unsigned long n, double p)
{
	unsigned long i = (unsigned long)(p / 100 * n);

	if (!n)
		return 0;
	return v[i < n ? i : n - 1];
}
