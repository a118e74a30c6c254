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
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
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

#define MEMCG_CASE	"memcg bytes per timer (memory.current of a fresh cgroup)"

enum mem_kind { M_WHEEL, M_TIMERFD, M_UV, M_EV, M_TABLE };

/*
 * Memory as charged: the memcg charge of a fresh cgroup v2 the program
 * moves into for the count, whatever the kernel allocated for it (slab
 * objects, the wheel's buckets, the table's pages, page tables, the
 * user pages a library's timers were put in).  The charge is taken from
 * the page counter in batches that each CPU keeps in stock (and kernel
 * objects from a per-CPU byte stock): the program stays on one CPU and,
 * before memory.current is read, charges a page and a slab object to a
 * second fresh cgroup on it, which makes that CPU's stocks change hands,
 * so the measured cgroup's go back to its counter.  (The root cgroup
 * would not do: its charges bypass the stocks.)
 */
#define CGROOT	"/sys/fs/cgroup"

struct memcg {
	char dir[128];
	long long before;
	cpu_set_t cpus;
};

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok ? 0 : -1;
}

static long long memcg_current(const struct memcg *g)
{
	char path[192];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.current", g->dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* 0: in a fresh cgroup with the memory controller; -1: none to be had. */
static int memcg_enter(struct memcg *g)
{
	static unsigned int seq;
	char path[192];
	cpu_set_t one;

	if (access(CGROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CGROOT, "cgroup2", 0, NULL))
		return -1;
	write_str(CGROOT "/cgroup.subtree_control", "+memory");
	snprintf(g->dir, sizeof(g->dir), CGROOT "/htw-bench-%d-%u", (int)getpid(), seq++);
	if (mkdir(g->dir, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", g->dir);
	sched_getaffinity(0, sizeof(g->cpus), &g->cpus);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	/*
	 * Read before moving in: a read from inside would charge its own
	 * file, and the page batch that charge takes into the CPU's stock.
	 */
	g->before = memcg_current(g);
	if (g->before < 0 || write_str(path, "0")) {
		sched_setaffinity(0, sizeof(g->cpus), &g->cpus);
		rmdir(g->dir);
		return -1;
	}
	return 0;
}

/*
 * A slab object and a page charged, on this CPU, to a second fresh
 * cgroup: the CPU's page and object stocks are drained from the measured
 * cgroup to it.
 */
static void memcg_drain_stock(const struct memcg *g)
{
	char dir[160], path[192];
	void *p;
	int fd;

	snprintf(dir, sizeof(dir), "%s-drain", g->dir);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (mkdir(dir, 0755) || write_str(path, "0"))
		die("a cgroup to drain the charge stock into");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	if (write_str(CGROOT "/cgroup.procs", "0"))
		die("moving back to the root cgroup");
	rmdir(dir);
}

/* Back in the root cgroup: the bytes charged to the fresh one meanwhile. */
static double memcg_leave(struct memcg *g)
{
	long long after;

	memcg_drain_stock(g);
	after = memcg_current(g);
	sched_setaffinity(0, sizeof(g->cpus), &g->cpus);
	return after >= g->before ? (double)(after - g->before) : 0;
}

/* Once what was counted is freed (a cgroup with no task goes, charged or not). */
static void memcg_remove(struct memcg *g)
{
	rmdir(g->dir);
}

struct mem {
	enum mem_kind kind;
	unsigned long n;
	double kbytes, ubytes;
	double cbytes;			/* memcg charge; < 0: not measured */
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
 * The slab objects that come with HTW_IOC_TABLE2_CREATE (its kernel timers,
 * taken all at once) and the mapping; arming the slots allocates nothing,
 * but they are armed an hour away before the count, as the other
 * contenders' timers are.
 */
static void mem_table(struct mem *m)
{
	struct memcg g;
	int in_cg = !memcg_enter(&g), err;
	struct ub_table t;
	unsigned long i;
	uint64_t base;
	double vm;

	slabs_read(&m->before);
	vm = vmalloc_used();
	err = table_open(&t, m->n);
	if (err) {
		errno = -err;
		die("htw_table2_create");
	}
	base = mono() + 3600 * NSEC_PER_SEC;
	for (i = 0; i < m->n; i++)
		table_arm(&t, i, base + i);
	table_enter(&t);
	m->cbytes = in_cg ? memcg_leave(&g) / m->n : -1;
	slabs_read(&m->after);
	m->vbytes = (vmalloc_used() - vm) / m->n;
	m->kbytes = slabs_delta(m) / m->n;
	m->sbytes = (double)t.mmap_size / m->n;
	m->ubytes = 0;
	table_close(&t);
	if (in_cg)
		memcg_remove(&g);
}

/* Never called: the timers are an hour away and the loops never run. */
static void mem_ev_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

static void mem_uv_cb(uv_timer_t *t)
{
	(void)t;
}

/*
 * A library's loop and N timers an hour away, as charged: made in a fresh
 * cgroup with every allocation of a page or more in pages of its own (the
 * timers' arrays, libev's heap), so that none reuses memory another row
 * faulted in; what stays under a page may, and is not counted.
 */
static void mem_peer(struct mem *m)
{
	struct ev_loop *ev = NULL;
	ev_timer *evt = NULL;
	uv_timer_t *uvt = NULL;
	uv_loop_t uv;
	struct memcg g;
	unsigned long i;

	m->cbytes = -1;
	if (memcg_enter(&g))
		return;
	mallopt(M_MMAP_THRESHOLD, 4096);
	if (m->kind == M_EV) {
		ev = ev_loop_new(EVBACKEND_EPOLL);
		evt = ev ? calloc(m->n, sizeof(*evt)) : NULL;
		if (!evt)
			die("libev");
		for (i = 0; i < m->n; i++) {
			ev_timer_init(&evt[i], mem_ev_cb, 3600.0 + i * 1e-6, 0);
			ev_timer_start(ev, &evt[i]);
		}
	} else {
		uvt = calloc(m->n, sizeof(*uvt));
		if (!uvt || uv_loop_init(&uv))
			die("libuv");
		for (i = 0; i < m->n; i++) {
			if (uv_timer_init(&uv, &uvt[i]) ||
			    uv_timer_start(&uvt[i], mem_uv_cb, 3600 * 1000 + i, 0))
				die("uv_timer_start");
		}
	}
	m->cbytes = memcg_leave(&g) / m->n;
	if (ev) {
		for (i = 0; i < m->n; i++)
			ev_timer_stop(ev, &evt[i]);
		ev_loop_destroy(ev);
		free(evt);
	} else {
		for (i = 0; i < m->n; i++)
			uv_close((uv_handle_t *)&uvt[i], NULL);
		uv_run(&uv, UV_RUN_DEFAULT);
		if (uv_loop_close(&uv))
			die("uv_loop_close");
		free(uvt);
	}
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	memcg_remove(&g);
}

static void run_mem(struct contender *c)
{
	struct mem *m = c->ctx;
	struct itimerspec its = { .it_value = ts_of(3600 * NSEC_PER_SEC) };
	struct memcg g;
	unsigned long i;
	int fd, ep, in_cg;

	c->ops = m->n;
	m->cbytes = -1;
	switch (m->kind) {
	case M_WHEEL:
		for (i = 0; i < m->n; i++)
			m->e[i] = (struct htw_timer_entry){ .cookie = i,
				.expires = 3600 * NSEC_PER_SEC + i };
		/* The charge holds the file and its wheel, as the table's does. */
		in_cg = !memcg_enter(&g);
		fd = open_wheel(0);
		slabs_read(&m->before);
		schedule_batches(fd, m->e, m->n, 1024);
		slabs_read(&m->after);
		if (in_cg)
			m->cbytes = memcg_leave(&g) / m->n;
		m->kbytes = slabs_delta(m) / m->n;
		close(fd);
		if (in_cg)
			memcg_remove(&g);
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
	case M_EV:
		m->kbytes = 0;
		m->ubytes = m->kind == M_UV ? sizeof(uv_timer_t) : sizeof(ev_timer);
		mem_peer(m);
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
	if (m->cbytes >= 0)
		put_sample(section, MEMCG_CASE, n, c->who, "B", m->cbytes);
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
	put_meta("memcg",
		 "memory as charged: memory.current of a fresh cgroup v2 (memory controller) the program moves into, before and after opening the file and arming the N timers (handle timers), setting the table up and arming its N slots, or making libev's or libuv's loop and starting N timers in it (every allocation of a page or more in pages of its own: M_MMAP_THRESHOLD 4096): slab objects, the wheel's buckets, the table's pages, page tables, the libraries' user pages, whatever is charged; on one CPU, whose page and object stocks are drained into a second fresh cgroup before the read; no sample where cgroup v2's memory controller is not to be had");
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
#define TABLE_MEMCG_CASE	"memcg bytes per table timer (memory.current of a fresh cgroup)"

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
	if (m->kind == M_WHEEL && m->cbytes >= 0)
		put_sample(section, TABLE_MEMCG_CASE, n, c->who, "B", m->cbytes + m->ubytes);
	if ((m->kind == M_UV || m->kind == M_EV) && m->cbytes >= 0)
		put_sample(section, TABLE_MEMCG_CASE, n, c->who, "B", m->cbytes);
	if (m->kind != M_TABLE) {
		if (m->caches[0])
			put_meta("slab caches", "%s, n %lu: %s", c->who, n, m->caches);
		return;
	}
	put_sample(section, "shared bytes per table timer (mmap_size)", n, c->who, "B",
		   m->sbytes);
	put_sample(section, "kernel bytes per table timer (slab objects)", n, c->who, "B",
		   m->kbytes);
	if (m->cbytes >= 0)
		put_sample(section, TABLE_MEMCG_CASE, n, c->who, "B", m->cbytes);
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
		{ .who = "libev ev_timer (user space, plus its heap slot)" },
	};
	unsigned int i;

	put_meta("table memory counted",
		 "per slot: mmap_size / entries (the shared pages, vmalloc'ed: header, slots, the submission ring at its power-of-two size, the completion ring an eighth of it, 256 at least) + the slab objects' growth across HTW_IOC_TABLE2_CREATE and the arming (mem's count: the caches that grew by an object per 1024 slots, i.e. the htw_timer chunks the table's timers come from; at small N the table's fixed parts, its wheel and struct htw_table, pass that bar too and are spread over the slots); VmallocUsed's growth is printed beside as a check on the shared pages");
	put_meta("memcg",
		 "memory as charged: memory.current of a fresh cgroup v2 (memory controller) the program moves into, before and after opening the file and arming the N timers (handle timers), setting the table up and arming its N slots, or making libev's or libuv's loop and starting N timers in it (every allocation of a page or more in pages of its own: M_MMAP_THRESHOLD 4096): slab objects, the wheel's buckets, the table's pages, page tables, the libraries' user pages, whatever is charged; on one CPU, whose page and object stocks are drained into a second fresh cgroup before the read; no sample where cgroup v2's memory controller is not to be had");
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
