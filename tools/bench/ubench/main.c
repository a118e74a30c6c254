// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel_ubench: the user-space half of `make bench`, run inside UML and
 * under qemu.
 *
 *   htwheel_ubench sched   N [OUTDIR]  schedule + cancel, every API
 *   htwheel_ubench rearm   N [OUTDIR]  re-arm of pending timers
 *   htwheel_ubench conn    N,N,.. [OUTDIR]  connection idle timeouts
 *   htwheel_ubench deliver N [OUTDIR]  expiries read by the program
 *   htwheel_ubench mem     N [OUTDIR]  kernel memory per pending timer
 *   htwheel_ubench table   N,N,.. [OUTDIR]  the shared timer table beside
 *                                      the peers of sched, rearm, deliver
 *                                      and mem (conn has its own variant)
 *   htwheel_ubench churn   N,N,..      steady churn: random cancel + arm at now+T
 *   htwheel_ubench idle-rearm N,N,..   idle re-arm: a random timer moved to now+T
 *   htwheel_ubench awake   N,N,..      expiries consumed by a loop awake anyway
 *   htwheel_ubench idle    SECONDS     wake-ups with one timer an hour away
 *
 * Output: the lines of the bench format (sample, meta, hist) for
 * tools/bench/report.py.  It measures and prints; it never judges.
 * HTW_BENCH_SEED sets the generator's seed (printed as meta).
 */
#include "ubench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : NULL;
	const char *seed = getenv("HTW_BENCH_SEED");
	unsigned long n = arg ? strtoul(arg, NULL, 0) : 100000;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rng_seed(seed ? strtoull(seed, NULL, 0) : 0x9e3779b97f4a7c15ULL);
	if (!strcmp(what, "sched"))
		return bench_sched(n);
	if (!strcmp(what, "rearm"))
		return bench_rearm(n);
	if (!strcmp(what, "conn"))
		return bench_conn(arg ? arg : "1000,100000,1000000");
	if (!strcmp(what, "deliver"))
		return bench_deliver(n);
	if (!strcmp(what, "mem"))
		return bench_mem(n);
	if (!strcmp(what, "table"))
		return bench_table(arg ? arg : "100000");
	if (!strcmp(what, "churn"))
		return bench_churn(arg ? arg : "1000,100000,1000000");
	if (!strcmp(what, "idle-rearm"))
		return bench_idle_rearm(arg ? arg : "1000,100000,1000000");
	if (!strcmp(what, "awake"))
		return bench_awake(arg ? arg : "1000,100000,1000000");
	if (!strcmp(what, "idle"))
		return bench_idle(arg ? atof(arg) : 5);
	fprintf(stderr,
		"usage: %s sched|rearm|deliver|mem N [OUTDIR] | conn|table|churn|idle-rearm|awake N[,N...] [OUTDIR] | idle SECONDS\n",
		argv[0]);
	return 2;
}
