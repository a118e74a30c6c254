/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parts of the htwheel CLI, private to it: the commands (commands.c)
 * fill a session from the command line and run it; the session
 * (session.c) holds the instance, its timers and the event loop; output.c
 * prints what happens and parse.c reads durations and numbers.
 */
#ifndef HTWHEEL_CLI_H
#define HTWHEEL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htwheel.h"

#define MAX_TIMERS	1024
#define NAME_LEN	32
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit codes, documented in htwheel(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* the device refused a request */
	EXIT_USAGE = 2,		/* bad command line or input */
	EXIT_DEVICE = 3,	/* device missing, module not loaded, no access */
};

/*
 * A timer of the session, named on the command line or stdin: a handle
 * timer of the wheel, or (@in_table) slot i of the timer table for
 * s->timers[i], so that a record of the table names its timer by slot.
 */
struct timer {
	char name[NAME_LEN];
	uint64_t cookie;
	uint64_t delay_ns;
	uint64_t period_ns;
	uint64_t handle;
	bool done;		/* fired (one-shot), cancelled or drained */
	bool fired;		/* a record of it was read */
	bool in_table;
	bool cancelled;		/* table: its last arming ended in a cancel */
	/*
	 * Table: the generation armed last and its deadline, and the one
	 * before.  A slot armed again after it fired has the record of the
	 * old generation still to come; only a record of this one ends the
	 * timer.
	 */
	uint64_t gen, deadline_ns;
	uint64_t prev_gen, prev_deadline_ns;
};

/* A timer the drain found still pending, as the report lists it. */
struct never_ran {
	const struct timer *t;	/* NULL: a handle the session does not know */
	uint64_t cookie;
	uint64_t remaining_ns;
};

/* A --cancel DUR:NAME: cancel timer NAME DUR after the session's start. */
struct cancel_at {
	uint64_t at_ns;
	char name[NAME_LEN];
	bool done;
};

/*
 * One instance of the device, its geometry and timers as the command line
 * and stdin asked for them, and how the session went (@status: EXIT_*).
 */
struct session {
	struct htw_params params;
	uint64_t slack_ns;
	uint64_t for_ns;		/* 0: no time limit */
	bool show_stats, json, read_stdin;
	bool use_table;			/* --table: the command line's timers */
	struct timer timers[MAX_TIMERS];
	unsigned int ntimers;
	struct cancel_at cancels[MAX_TIMERS];
	unsigned int ncancels;
	struct htw *h;
	struct htw_table2 *tab;		/* NULL until a timer needs it */
	uint64_t start_ns;
	int status;
	char line[512];
	size_t line_len;
};

/* session.c */
int session_open(struct session *s);
struct timer *timer_by_handle(struct session *s, uint64_t handle);
int add_timer(struct session *s, const char *arg, bool periodic,
	      uint64_t cookie);
int add_cancel(struct session *s, const char *arg);
int use_table(struct session *s);
int session_run(struct session *s);

/* output.c */
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *fmt_dur(char *buf, size_t len, uint64_t ns);
const char *clock_name(uint32_t clk);
void print_expiry(const struct session *s, const struct timer *t,
		  const struct htw_expiry *r);
void print_table_expiry(const struct session *s, const struct timer *t,
			const struct htw_table2_cqe *c);
void print_cancel(uint64_t at_ns, const char *name, int ret);
void print_rearm(uint64_t at_ns, const struct timer *t, uint64_t delay_ns,
		 int ret);
void print_never_ran(const struct never_ran *nr, int n, unsigned int listed);
int print_stats(struct htw *h, struct htw_table2 *tab, bool json);
void print_module_params(bool json);

/* parse.c */
void explain_duration(const char *what, const char *s, int ret);
int parse_dur(const char *what, const char *s, uint64_t *ns);
int parse_u64(const char *what, const char *s, uint64_t *v);

#endif /* HTWHEEL_CLI_H */
