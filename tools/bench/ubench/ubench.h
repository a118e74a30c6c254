/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel_ubench: the user-space half of `make bench`.  What every
 * benchmark of the program shares: clocks, the seeded generator, the
 * sample lines of the bench format, the repetition driver and the
 * /dev/htwheel helpers.
 */
#ifndef HTW_UBENCH_H
#define HTW_UBENCH_H

#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>
#include <linux/htwheel.h>

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Measured repetitions; one more, first, is the discarded warm-up. */
#define UB_REPS		3

void die(const char *what);
void *xcalloc(size_t n, size_t size);

uint64_t mono(void);
uint64_t cpu_now(void);
struct timespec ts_of(uint64_t ns);
void sleep_until(uint64_t t);

void rng_seed(uint64_t seed);
uint64_t rnd(void);
uint64_t ub_seed(void);
uint64_t far_delay(void);

/* Lines of the bench format (tools/bench/report.py). */
void put_sample(const char *section, const char *kase, unsigned long n,
		const char *who, const char *unit, double value);
void put_meta(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void put_hist(const char *name, double bin_lo_us, unsigned long count);
void meta_run(const char *what);

/* Busy, idle and steal time of the whole machine (/proc/stat), in ns. */
struct sysstat {
	uint64_t busy, idle, steal;
};

void sysstat_now(struct sysstat *s);
unsigned int online_cpus(void);

/*
 * One timed window: process CPU time, wall time and, as separate
 * figures, the CPU time of the whole machine (which also holds softirq,
 * hrtimer and work-item time, never charged to the process): @st, the
 * busy columns of /proc/stat (tick-sampled), and @machine, the CPUs
 * times the window less their idle, iowait and steal time (idle is
 * counted exactly under NOHZ, so this is all the CPU the window cost).
 */
struct window {
	uint64_t cpu, wall, machine;
	struct sysstat st;
};

void window_begin(struct window *w);
void window_end(struct window *w);
void window_add(struct window *sum, const struct window *w);

/*
 * A contender in a repetition: run() does one repetition and fills
 * @win (summed over its timed windows), @ops and @calls.  Contenders of
 * one section run in alternating order, a warm-up first.
 */
struct contender {
	const char *who;
	const char *kase;	/* NULL: under each htwheel case of @group */
	void (*run)(struct contender *c);
	void *ctx;
	const char *group;
	/* more rows of the contender under @kase, after print_result's */
	void (*print)(const char *section, const char *kase, unsigned long n,
		      const struct contender *c);
	int own_rows;		/* print() alone prints its rows, @kase unused */
	unsigned long passes;	/* set from the warm-up: see run_section() */
	struct window win;
	double ops, calls;
};

void run_section(const char *section, unsigned long n,
		 struct contender *c, unsigned int nc, uint64_t min_window_ns,
		 unsigned int reps);
void print_result(const char *section, const char *kase, unsigned long n,
		  const struct contender *c);
struct epoll_event;
int epoll_on(int fd);
int loop_wait(int ep, struct epoll_event *ev);
void print_net(const char *section, const char *kase, unsigned long n,
	       const struct contender *c, const struct contender *null);

void raise_limits(unsigned long n);

/* /dev/htwheel */
int open_wheel(int flags);
unsigned long schedule_batches(int fd, struct htw_timer_entry *e,
			       unsigned long n, unsigned long batch);
unsigned long cancel_batches(int fd, struct htw_cancel_entry *c,
			     unsigned long n, unsigned long batch);
void read_wheel_stats(int fd, struct htw_stats *st);

/* Nearest-rank percentile of @n sorted values. */
uint64_t pct(const uint64_t *v, unsigned long n, double p);
void sort_u64(uint64_t *v, unsigned long n);

int bench_sched(unsigned long n);
int bench_rearm(unsigned long n);
int bench_conn(const char *sizes);
int bench_deliver(unsigned long n);
int bench_idle(double secs);
int bench_mem(unsigned long n);
int bench_table(const char *sizes);
int bench_churn(const char *sizes);
int bench_idle_rearm(const char *sizes);
int bench_awake(const char *sizes);

/* The shared timer table's sections, each in its workload's file. */
void bench_sched_table(unsigned long n);
void bench_rearm_table(unsigned long n);
void bench_deliver_table(unsigned long n);
void bench_mem_table(unsigned long n);

#endif
