/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The clients of the event-loop examples (io_uring, libuv, libevent):
 * a child process that holds the other ends of EX_CONNS socketpairs and
 * plays one of three parts on each, so that every example serves the same
 * connections and prints comparable lines.  Not part of libhtwheel: copy
 * an example without this file and give it real connections instead.
 *
 * Connection i plays ex_part(i):
 *
 *   busy   a message every EX_PING_MS for EX_BUSY_MS, then it hangs up:
 *          its idle timer is pushed back on every message and must never
 *          fire; the hang-up cancels it
 *   idle   one message, then silence: closed by its idle timer
 *          EX_IDLE_MS after that message
 *   quiet  a message every EX_PING_MS for EX_QUIET_MS, then silence:
 *          outlives several idle timeouts, then is closed EX_IDLE_MS
 *          after its last message
 *
 * The child prints a "peer:" line for its plan of each connection and one
 * when the connection ends (its hang-up, or the server's close with the
 * time since its last message), measured on its side of the socket.
 */
#ifndef EXAMPLE_PEERS_H
#define EXAMPLE_PEERS_H

#include <stdint.h>
#include <sys/types.h>

#define EX_CONNS	6
#define EX_IDLE_MS	300
#define EX_PING_MS	50
#define EX_QUIET_MS	500
#define EX_BUSY_MS	1200
/* A connection the server never closes is given up on after this. */
#define EX_GIVE_UP_MS	5000

enum ex_part { EX_BUSY, EX_IDLE, EX_QUIET };

static inline enum ex_part ex_part(unsigned int conn)
{
	return (enum ex_part)(conn % 3);
}

/*
 * Make the socketpairs, start the child and return the server's ends in
 * @fds (blocking, close-on-exec) and the child in @pid; 0 or -errno.
 * The child closes every other descriptor it inherits.  Both processes
 * print to stdout: make it line-buffered first, so that their lines do
 * not mix.
 */
int ex_peers_start(int fds[EX_CONNS], pid_t *pid);

/*
 * Wait for the child to end: 0 if every connection ended (the server
 * closed it, or it hung up as planned), else -1.
 */
int ex_peers_wait(pid_t pid);

/* End the child at once, if @pid is one: after a failed setup. */
void ex_peers_stop(pid_t pid);

/* Milliseconds, for printing nanosecond differences that may be < 0. */
static inline double ex_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

#endif /* EXAMPLE_PEERS_H */
