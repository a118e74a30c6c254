// SPDX-License-Identifier: GPL-2.0
/*
 * A program written only against the installed <htwheel.h> and built with
 * nothing but `pkg-config --cflags --libs libhtwheel` (see htwheel.mk).
 * Plain TAP: it must not depend on anything from the source tree.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <htwheel.h>

static int failed;

static void ok(int cond, const char *what, int n)
{
	printf("%sok %d %s\n", cond ? "" : "not ", n, what);
	failed |= !cond;
}

int main(void)
{
	struct htw_params p = { 0 };
	struct htw_expiry r;
	struct htw *h;
	uint64_t ns = 0, handle = 0, t0;
	int ret;

	printf("TAP version 13\n1..6\n");
	ok(!htw_parse_duration("1m30s", &ns) && ns == htw_sec(90), "parse_duration", 1);
	ret = htw_open(&h, &p);
	ok(ret == 0 && p.tick_ns > 0, "open", 2);
	if (ret) {
		printf("# htw_open: %s\n", strerror(-ret));
		return 1;
	}
	t0 = htw_now(h);
	ok(!htw_schedule(h, 0xabc, htw_ms(20), 0, &handle) && handle, "schedule", 3);
	ok(htw_wait(h, (int64_t)htw_sec(10)) == 1, "wait", 4);
	ok(htw_read(h, &r, 1) == 1 && r.cookie == 0xabc && r.handle == handle &&
	   r.expired_ns >= t0 + htw_ms(20), "read, never early", 5);
	ok(htw_close(h) == 0, "close", 6);
	return failed;
}
