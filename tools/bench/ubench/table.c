// SPDX-License-Identifier: GPL-2.0
/*
 * The timer table (version 2) beside the peers of each workload: arm+cancel
 * (sched.c), re-arm later (rearm.c), expiry through the completion ring
 * (deliver.c) and memory per timer (mem.c), each section measured as the
 * others of its workload; the idle-timeout variant is one of conn.c's.
 * Here: the protocol's slow paths (table.h has the fast ones) and the
 * `table` command.
 */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

void table_fail(const char *what)
{
	fprintf(stderr, "htwheel_ubench: table: %s\n", what);
	exit(1);
}

static void table_map(struct ub_table *t)
{
	char *mem = mmap(NULL, t->ts.mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, t->fd, 0);

	if (mem == MAP_FAILED)
		die("mmap htwheel table");
	t->mem = mem;
	t->hdr = (struct htw_table2_header *)mem;
	t->slot = (struct htw_table2_slot *)(mem + t->ts.slots_off);
	t->sq = (uint32_t *)(mem + t->ts.sq_off);
	t->cq = (const struct htw_table2_cqe *)(mem + t->ts.cq_off);
	t->sq_mask = t->ts.sq_entries - 1;
	t->cq_mask = t->ts.cq_entries - 1;
	if (t->hdr->sq_mask != t->sq_mask || t->hdr->cq_mask != t->cq_mask ||
	    t->hdr->entries != t->ts.entries)
		table_fail("the header's geometry is not HTW_IOC_TABLE2_CREATE's");
	t->sq_tail = t->hdr->sq_tail;
	t->cq_head = t->hdr->cq_head;
}

int table_setup(struct ub_table *t, int fd, uint32_t entries)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->dev = fd;
	t->ts.entries = entries;
	t->fd = ioctl(fd, HTW_IOC_TABLE2_CREATE, &t->ts);
	if (t->fd < 0) {
		err = errno;
		close(fd);
		t->dev = -1;
		return -err;
	}
	table_map(t);
	return 0;
}

int table_open(struct ub_table *t, uint32_t entries, int flags)
{
	return table_setup(t, open_wheel(flags), entries);
}

void table_close(struct ub_table *t)
{
	if (t->fd < 0)
		return;
	munmap(t->mem, t->ts.mmap_size);
	close(t->fd);
	close(t->dev);
	t->fd = t->dev = -1;
}

/*
 * Counted, not timed: a clock read around each doorbell would be a
 * system call (in UML) that no peer makes in its loop.
 */
void table_enter(struct ub_table *t)
{
	if (ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0) < 0)
		die("HTW_IOC_TABLE2_ENTER");
	t->enters++;
}

/*
 * Between windows: every slot disarmed and every record gone.  A record
 * can only come from a claim made before our exchange; the enter waits
 * for any run that made one, so the ring holds them all when it returns.
 */
void table_disarm_all(struct ub_table *t)
{
	uint32_t s;

	for (s = 0; s < t->ts.entries; s++)
		table_cancel(t, s);
	table_enter(t);
	table_cq_release(t, table_cq_tail(t));
}

/* Whether this htwheel.ko has tables, and HTW_IOC_TABLE2_CREATE works here. */
static int table_probe(void)
{
	struct ub_table t;
	int err = table_open(&t, 1, 0);

	if (err)
		return err;
	table_close(&t);
	return 0;
}

static void table_size(unsigned long n)
{
	bench_sched_table(n);
	bench_rearm_table(n);
	bench_deliver_table(n);
	bench_mem_table(n);
}

int bench_table(const char *sizes)
{
	char *list = strdup(sizes), *tok, *save = NULL;
	int err;

	if (!list)
		die("strdup");
	meta_run("table");
	err = table_probe();
	if (err) {
		put_meta("not run", "timer table: HTW_IOC_TABLE2_CREATE: %s",
			 strerror(-err));
		free(list);
		return 0;
	}
	put_meta("table",
		 "the version 2 protocol of the uapi header, written out in the bench (not libhtwheel's calls): arm or move = the deadline in the next generation's half, then one exchange of the slot's seq to that generation armed; if the slot was not armed or the deadline is earlier, its number on the submission ring once until taken in (release store of sq_tail), and HTW_IOC_TABLE2_ENTER only if the deadline is before next_wakeup_ns; cancel = exchange of seq to the next generation disarmed; 16-byte completions read with an acquire of cq_tail, released with a release store of cq_head");
	put_meta("table system calls",
		 "the HTW_IOC_TABLE2_ENTER calls made, and the waits (poll) where a consumer sleeps");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		table_size(strtoul(tok, NULL, 0));
	free(list);
	return 0;
}
