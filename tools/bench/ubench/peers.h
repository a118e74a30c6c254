/* SPDX-License-Identifier: GPL-2.0 */
/* The user-space timer libraries the benchmark compares with. */
#ifndef HTW_UBENCH_PEERS_H
#define HTW_UBENCH_PEERS_H

#include <uv.h>
#include <ev.h>

void uv_never(uv_timer_t *t);
void ev_never(struct ev_loop *loop, ev_timer *w, int revents);

#endif
