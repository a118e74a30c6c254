// SPDX-License-Identifier: GPL-2.0
/*
 * Callbacks of the libuv and libev timers the benchmark arms as peers:
 * those timers are cancelled or moved before they are due, so a call
 * means nothing and does nothing.
 */
#include "peers.h"

void uv_never(uv_timer_t *t)
{
	(void)t;
}

void ev_never(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}
