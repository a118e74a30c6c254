// SPDX-License-Identifier: GPL-2.0
/*
 * The timer table (version 2) beside the peers of each workload: arm+cancel
 * (sched.c), re-arm later (rearm.c), expiry through the completion ring
 * (deliver.c) and memory per timer (mem.c), each section measured as the
 * others of its workload; the idle-timeout variant is one of conn.c's.
 * Here: the slow paths of table.h's wrapper of libhtwheel's calls, the
 * count of the doorbells, and the `table` command.
 */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long table_enters;
int __real_htw_table2_enter(struct htw_table2 *t);
int __wrap_htw_table2_enter(struct htw_table2 *t);

int __wrap_htw_table2_enter(struct htw_table2 *t)
{
	table_enters++;
	return __real_htw_table2_enter(t);
}

void table_fail(const char *what)
{
	fprintf(stderr, "htwheel_ubench: table: %s\n", what);
	exit(1);
}

int table_open(struct ub_table *t, uint32_t entries)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = htw_open(&t->h, NULL);
	if (err)
		return err;
	err = htw_table2_create(t->h, entries, 0, &t->t);
	if (err) {
		htw_close(t->h);
		t->h = NULL;
		return err;
	}
	t->mmap_size = t->t->map_size;
	return 0;
}

void table_close(struct ub_table *t)
{
	if (!t->t)
		return;
	htw_table2_close(t->t);
	htw_close(t->h);
	t->t = NULL;
	t->h = NULL;
}

/*
 * Counted, not timed (table_enters): a clock read around each doorbell
 * would be a system call (in UML) that no peer makes in its loop.
 */
void table_enter(struct ub_table *t)
{
	int r;

	do
		r = htw_table2_enter(t->t);
	while (r == -EINTR);
	if (r < 0) {
		errno = -r;
		die("htw_table2_enter");
	}
}

/*
 * Between windows: every slot disarmed and every record gone.  A record
 * can only come from a claim made before our exchange; the enter waits
 * for any run that made one, so the ring holds them all when it returns.
 */
void table_disarm_all(struct ub_table *t)
{
	struct htw_table2_cqe *e;
	uint32_t s;
	int k;

	for (s = 0; s < t->t->entries; s++)
		table_cancel(t, s);
	table_enter(t);
	while ((k = table_peek(t, &e)) > 0)
		table_advance(t, k);
}

/* Whether this htwheel.ko has tables, and HTW_IOC_TABLE2_CREATE works here. */
static int table_probe(void)
{
	struct ub_table t;
	int err = table_open(&t, 1);

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
		 "driven through libhtwheel's public calls, as a program drives it: htw_table2_arm (the deadline in the next generation's half, one exchange of the slot's seq; the slot on the submission ring once until taken in if it was not armed or moves earlier; htw_table2_enter only if the deadline is before next_wakeup_ns), htw_table2_cancel (one exchange), htw_table2_cancel_quiet (one store), htw_table2_peek/htw_table2_advance (16-byte records)");
	put_meta("table system calls",
		 "the HTW_IOC_TABLE2_ENTER calls made, and the waits (poll) where a consumer sleeps");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		table_size(strtoul(tok, NULL, 0));
	free(list);
	return 0;
}
