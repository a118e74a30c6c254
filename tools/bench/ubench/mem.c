// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel memory per pending timer, counted in slab objects: the change of
 * every cache's active objects times its object size (/proc/slabinfo)
 * across arming N timers, over the caches that grew with N.  Page-level
 * counters (Slab, MemFree) move with whatever else churned the same
 * pages; object counts do not.  The user-space timers (libuv, libev) use
 * no kernel memory per timer; their user memory is their sizeof.  A
 * section of its own counts a shared timer table's: its mapping
 * (mmap_size, the vmalloc'ed pages the kernel shares) and the slab
 * objects of its kernel timers.
 */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <uv.h>
#include <ev.h>

#define MAX_CACHES	512

struct slab {
	char name[64];
	unsigned long active, size;
};

struct slabs {
	struct slab s[MAX_CACHES];
	unsigned int n;
};

static void slabs_read(struct slabs *t)
{
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "r");

	t->n = 0;
	if (!f)
		die("/proc/slabinfo");
	while (fgets(line, sizeof(line), f) && t->n < MAX_CACHES) {
		struct slab *s = &t->s[t->n];
		unsigned long num;

		if (sscanf(line, "%63s %lu %lu %lu", s->name, &s->active, &num,
			   &s->size) == 4)
			t->n++;
	}
	fclose(f);
}

enum mem_kind { M_WHEEL, M_TIMERFD, M_UV, M_EV, M_TABLE };

struct mem {
	enum mem_kind kind;
	unsigned long n;
	double kbytes, ubytes;
	double sbytes, vbytes;		/* the table's mapping; VmallocUsed's growth */
	char caches[512];
	struct slabs before, after;
	struct htw_timer_entry *e;
	int *fds;
};

/* Bytes of the caches that grew by at least one object per 1024 timers. */
static double slabs_delta(struct mem *m)
{
	double sum = 0;
	unsigned int i, j;

	m->caches[0] = 0;
	for (i = 0; i < m->after.n; i++) {
		const struct slab *a = &m->after.s[i];
		unsigned long b = 0;

		for (j = 0; j < m->before.n; j++)
			if (!strcmp(m->before.s[j].name, a->name))
				b = m->before.s[j].active;
		if (a->active < b || a->active - b < m->n / 1024 + 1)
			continue;
		sum += (double)(a->active - b) * a->size;
		snprintf(m->caches + strlen(m->caches), sizeof(m->caches) - strlen(m->caches),
			 "%s%s %.2f B", m->caches[0] ? ", " : "", a->name,
			 (double)(a->active - b) * a->size / m->n);
	}
	return sum;
}

/* VmallocUsed of /proc/meminfo, in bytes: a check on the table's pages. */
static double vmalloc_used(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024.0;
}

/*
 * The slab objects that come with HTW_IOC_TABLE_SETUP (its kernel timers,
 * taken all at once) and the mapping; arming the slots allocates nothing,
 * but they are armed an hour away before the count, as the other
 * contenders' timers are.
 */
static void mem_table(struct mem *m)
{
	int fd = open_wheel(0), err;
	struct ub_table t;
	unsigned long i;
	uint64_t base;
	double vm;

	slabs_read(&m->before);
	vm = vmalloc_used();
	err = table_setup(&t, fd, m->n);
	if (err) {
		errno = -err;
		die("HTW_IOC_TABLE_SETUP");
	}
	base = mono() + 3600 * NSEC_PER_SEC;
	for (i = 0; i < m->n; i++)
		table_arm(&t, i, base + i);
	table_enter(&t);
	slabs_read(&m->after);
	m->vbytes = (vmalloc_used() - vm) / m->n;
	m->kbytes = slabs_delta(m) / m->n;
	m->sbytes = (double)t.ts.mmap_size / m->n;
	m->ubytes = 0;
	table_close(&t);
}

static void run_mem(struct contender *c)
{
	struct mem *m = c->ctx;
	struct itimerspec its = { .it_value = ts_of(3600 * NSEC_PER_SEC) };
	unsigned long i;
	int fd, ep;

	c->ops = m->n;
	switch (m->kind) {
	case M_WHEEL:
		fd = open_wheel(0);
		for (i = 0; i < m->n; i++)
			m->e[i] = (struct htw_timer_entry){ .cookie = i,
				.expires = 3600 * NSEC_PER_SEC + i };
		slabs_read(&m->before);
		schedule_batches(fd, m->e, m->n, 1024);
		slabs_read(&m->after);
		m->kbytes = slabs_delta(m) / m->n;
		close(fd);
		m->ubytes = sizeof(m->e->handle);
		break;
	case M_TIMERFD:
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			die("epoll_create1");
		slabs_read(&m->before);
		for (i = 0; i < m->n; i++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };

			m->fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
			if (m->fds[i] < 0 || timerfd_settime(m->fds[i], 0, &its, NULL) ||
			    epoll_ctl(ep, EPOLL_CTL_ADD, m->fds[i], &ev))
				die("timerfd");
		}
		slabs_read(&m->after);
		m->kbytes = slabs_delta(m) / m->n;
		for (i = 0; i < m->n; i++)
			close(m->fds[i]);
		close(ep);
		m->ubytes = sizeof(int);
		break;
	case M_UV:
		m->kbytes = 0;
		m->ubytes = sizeof(uv_timer_t);
		break;
	case M_EV:
		m->kbytes = 0;
		m->ubytes = sizeof(ev_timer);
		break;
	case M_TABLE:
		mem_table(m);
		break;
	}
	/* Let RCU-freed objects go before the next contender counts. */
	usleep(200000);
}

static void print_mem(const char *section, const char *kase, unsigned long n,
		      const struct contender *c)
{
	const struct mem *m = c->ctx;

	(void)kase;
	put_sample(section, "kernel bytes per timer (slab objects)", n, c->who, "B", m->kbytes);
	put_sample(section, "user bytes per timer (what the program keeps)", n, c->who, "B",
		   m->ubytes);
	if (m->caches[0])
		put_meta("slab caches", "%s, n %lu: %s", c->who, n, m->caches);
}

int bench_mem(unsigned long n)
{
	static const char section[] =
		"memory per pending timer: N timers an hour away";
	struct mem m[4] = {
		{ .kind = M_WHEEL }, { .kind = M_TIMERFD }, { .kind = M_UV }, { .kind = M_EV },
	};
	struct contender c[4] = {
		{ .who = "htwheel" },
		{ .who = "timerfd + epoll_ctl" },
		{ .who = "libuv uv_timer_t (user space, its heap node inside)" },
		{ .who = "libev ev_timer (user space, plus its heap slot)" },
	};
	unsigned int i;

	meta_run("mem");
	raise_limits(n);
	put_meta("memory",
		 "htwheel's user bytes: the handle it keeps to cancel; timerfd's: the fd");
	for (i = 0; i < 4; i++) {
		m[i].n = n;
		m[i].e = xcalloc(n, sizeof(*m[i].e));
		m[i].fds = xcalloc(n, sizeof(int));
		c[i].run = run_mem;
		c[i].ctx = &m[i];
		c[i].print = print_mem;
		c[i].own_rows = 1;
	}
	put_meta("sizeof uv_timer_t", "%zu", sizeof(uv_timer_t));
	put_meta("sizeof ev_timer", "%zu", sizeof(ev_timer));
	run_section(section, n, c, 4, 0, UB_REPS);
	return 0;
}

#define TABLE_MEM_CASE	"bytes per table timer (mmap_size + slab objects)"

/*
 * The table's total beside what a timer of each other kind costs in all,
 * kernel and user memory: a handle timer and the handle kept to cancel
 * it, a libuv or libev timer's struct.
 */
static void print_table_mem(const char *section, const char *kase,
			    unsigned long n, const struct contender *c)
{
	const struct mem *m = c->ctx;

	(void)kase;
	put_sample(section, TABLE_MEM_CASE, n, c->who, "B",
		   m->sbytes + m->kbytes + m->ubytes);
	if (m->kind != M_TABLE) {
		if (m->caches[0])
			put_meta("slab caches", "%s, n %lu: %s", c->who, n, m->caches);
		return;
	}
	put_sample(section, "shared bytes per table timer (mmap_size)", n, c->who, "B",
		   m->sbytes);
	put_sample(section, "kernel bytes per table timer (slab objects)", n, c->who, "B",
		   m->kbytes);
	put_meta("table memory",
		 "n %lu: VmallocUsed grew %.2f B per slot, mmap_size is %.2f B; slab caches: %s",
		 n, m->vbytes, m->sbytes, m->caches[0] ? m->caches : "none grew");
}

void bench_mem_table(unsigned long n)
{
	static const char section[] =
		"memory per table timer: N slots armed an hour away";
	struct mem m[4] = {
		{ .kind = M_TABLE }, { .kind = M_WHEEL }, { .kind = M_UV }, { .kind = M_EV },
	};
	struct contender c[4] = {
		{ .who = "htwheel" },
		{ .who = "htwheel handle timer (slab objects + the 8-byte handle kept)" },
		{ .who = "libuv uv_timer_t (user space, its heap node inside)" },
		{ .who = "libev ev_timer (user space, its sizeof; its heap slot not counted)" },
	};
	unsigned int i;

	put_meta("table memory counted",
		 "per slot: mmap_size / entries (the shared pages, vmalloc'ed: header, slots, both rings at their power-of-two sizes) + the slab objects' growth across HTW_IOC_TABLE_SETUP and the arming (mem's count: the caches that grew by an object per 1024 slots, i.e. the htw_timer chunks the table's timers come from; at small N the table's fixed parts, its wheel and struct htw_table, pass that bar too and are spread over the slots); VmallocUsed's growth is printed beside as a check on the shared pages");
	for (i = 0; i < 4; i++) {
		m[i].n = n;
		m[i].e = xcalloc(n, sizeof(*m[i].e));
		m[i].fds = xcalloc(n, sizeof(int));
		c[i].run = run_mem;
		c[i].ctx = &m[i];
		c[i].print = print_table_mem;
		c[i].own_rows = 1;
	}
	run_section(section, n, c, 4, 0, UB_REPS);
	for (i = 0; i < 4; i++) {
		free(m[i].e);
		free(m[i].fds);
	}
}
