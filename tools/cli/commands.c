// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: command-line front end to /dev/htwheel, built on libhtwheel.
 *
 * The commands: each reads its options into a session (session.c) and
 * runs it, or opens an instance only to describe it (stats, info).  Timers
 * belong to the open file that scheduled them, so a command that
 * schedules also waits for and prints the expirations in the same process
 * (run, schedule, watch), whether its timers are handle timers or, with
 * --table, slots of the shared timer table; see htwheel(1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The package's version, from debian/changelog (tools/lib/htwheel.mk). */
#define HTW_CLI_VERSION	HTW_VERSION

static int print_usage(FILE *out)
{
	fprintf(out,
		"usage: htwheel COMMAND [OPTIONS]\n"
		"\n"
		"  run [--at DUR[:NAME]]... [--every DUR[:NAME]]... [--cancel DUR:NAME]...\n"
		"      [--table] [--for DUR] [--stats [--json]] [GEOMETRY]\n"
		"          schedule timers, print each expiry as it arrives, then drain\n"
		"          and report the timers that never ran\n"
		"  schedule DUR... [--every PERIOD] [--cookie N] [--table]\n"
		"      [--for DUR] [--stats]\n"
		"          one timer per DUR (periodic with --every), cookies N, N+1, ...\n"
		"  watch [run options]\n"
		"          like run, also reading commands from stdin:\n"
		"          'at DUR [NAME]', 'every DUR [NAME]', 'table DUR [NAME]',\n"
		"          'cancel NAME', 'rearm NAME DUR' (due DUR from now, same\n"
		"          handle or slot), 'stats'\n"
		"  stats [--json] [GEOMETRY]\n"
		"          statistics of a fresh instance and the module parameters\n"
		"  info    the API and library versions, a new instance's geometry\n"
		"\n"
		"--table: the one-shot timers as slots of the shared timer table\n"
		"GEOMETRY: --tick DUR --slots N --max-pending N --boottime --slack DUR\n"
		"DUR: a number and a unit (ns, us, ms, s, m, h), e.g. 250ms, 1.5s, 1m30s\n"
		"Exit: 0 ok, 1 request refused, 2 bad usage, 3 device unavailable\n"
		"Environment: HTWHEEL_DEVICE (default " HTW_DEVICE_PATH ")\n");
	return out == stdout ? EXIT_OK : EXIT_USAGE;
}

/* ---- options ---- */

/* getopt_long() values: distinct, above any short option's character. */
enum {
	OPT_AT = 256, OPT_EVERY, OPT_CANCEL, OPT_FOR, OPT_STATS, OPT_JSON,
	OPT_TICK, OPT_SLOTS, OPT_MAX_PENDING, OPT_BOOTTIME, OPT_SLACK,
	OPT_COOKIE, OPT_TABLE, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "at", required_argument, NULL, OPT_AT },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "cancel", required_argument, NULL, OPT_CANCEL },
	{ "for", required_argument, NULL, OPT_FOR },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tick", required_argument, NULL, OPT_TICK },
	{ "slots", required_argument, NULL, OPT_SLOTS },
	{ "max-pending", required_argument, NULL, OPT_MAX_PENDING },
	{ "boottime", no_argument, NULL, OPT_BOOTTIME },
	{ "slack", required_argument, NULL, OPT_SLACK },
	{ "cookie", required_argument, NULL, OPT_COOKIE },
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The long name of @opt, looked up so that the table's order is free. */
static const char *option_name(int opt)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/*
 * What a command's options set: the session, and what only schedule
 * takes, which applies to timers given after the options are read.
 */
struct cmdline {
	struct session *s;
	uint64_t period_ns;	/* schedule --every; 0: one-shot timers */
	uint64_t cookie;	/* schedule --cookie: the first timer's */
};

/* Options common to every command that opens an instance. */
static int geometry_opt(struct session *s, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case OPT_TICK:
		return parse_dur("--tick", arg, &s->params.tick_ns);
	case OPT_SLOTS:
		if (parse_u64("--slots", arg, &v))
			return -EINVAL;
		if (v > UINT32_MAX) {
			err("--slots '%s': too large", arg);
			return -EINVAL;
		}
		s->params.slots = v;
		return 0;
	case OPT_MAX_PENDING:
		return parse_u64("--max-pending", arg, &s->params.max_pending);
	case OPT_BOOTTIME:
		s->params.clockid = CLOCK_BOOTTIME;
		return 0;
	case OPT_SLACK:
		return parse_dur("--slack", arg, &s->slack_ns);
	case OPT_FOR:
		if (parse_dur("--for", arg, &s->for_ns))
			return -EINVAL;
		if (!s->for_ns) {
			err("--for '%s': must be more than 0", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_STATS:
		s->show_stats = true;
		return 0;
	case OPT_JSON:
		s->json = true;
		return 0;
	}
	err("%s: option not valid here", option_name(opt));
	return -EINVAL;
}

/* The argument getopt_long() refused. */
static const char *bad_arg(char **argv)
{
	const char *a = argv[optind - 1];

	return a ? a : "?";
}

/*
 * getopt_long() over a command's arguments; @fn handles each option.
 * Prints one line and returns -EINVAL on the first bad one.
 */
static int parse_opts(struct cmdline *cl, int argc, char **argv,
		      int (*fn)(struct cmdline *cl, int opt, const char *arg))
{
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (opt == 'h' || opt == OPT_HELP) {
			print_usage(stdout);
			exit(EXIT_OK);
		}
		if (opt == '?' || opt == ':') {
			err("%s: unknown option or missing argument (see htwheel --help)",
			    bad_arg(argv));
			return -EINVAL;
		}
		if (fn(cl, opt, optarg))
			return -EINVAL;
	}
	return 0;
}

static int run_opt(struct cmdline *cl, int opt, const char *arg)
{
	struct session *s = cl->s;

	switch (opt) {
	case OPT_AT:
		return add_timer(s, arg, false, s->ntimers);
	case OPT_EVERY:
		return add_timer(s, arg, true, s->ntimers);
	case OPT_CANCEL:
		return add_cancel(s, arg);
	case OPT_TABLE:
		s->use_table = true;
		return 0;
	}
	return geometry_opt(s, opt, arg);
}

static int cmd_run(struct session *s, int argc, char **argv, bool watch)
{
	struct cmdline cl = { .s = s };

	if (parse_opts(&cl, argc, argv, run_opt))
		return EXIT_USAGE;
	if (optind < argc) {
		err("run: unexpected argument '%s' (timers are --at/--every)",
		    argv[optind]);
		return EXIT_USAGE;
	}
	s->read_stdin = watch;
	if (!watch && !s->ntimers) {
		err("run: no timers (give --at DUR or --every DUR)");
		return EXIT_USAGE;
	}
	if (use_table(s))
		return EXIT_USAGE;
	return session_run(s);
}

static int schedule_opt(struct cmdline *cl, int opt, const char *arg)
{
	switch (opt) {
	case OPT_EVERY:
		if (parse_dur("--every", arg, &cl->period_ns))
			return -EINVAL;
		if (!cl->period_ns) {
			err("--every '%s': must be more than 0", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_COOKIE:
		return parse_u64("--cookie", arg, &cl->cookie);
	case OPT_TABLE:
		cl->s->use_table = true;
		return 0;
	}
	return geometry_opt(cl->s, opt, arg);
}

static int cmd_schedule(struct session *s, int argc, char **argv)
{
	struct cmdline cl = { .s = s };
	int i;

	/* Permute: "schedule 1s --every 100ms" as well as the other order. */
	if (parse_opts(&cl, argc, argv, schedule_opt))
		return EXIT_USAGE;
	if (optind >= argc) {
		err("schedule: no durations (e.g. htwheel schedule 250ms 1s)");
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		if (add_timer(s, argv[i], false, cl.cookie + i - optind))
			return EXIT_USAGE;
		s->timers[s->ntimers - 1].period_ns = cl.period_ns;
	}
	if (use_table(s))
		return EXIT_USAGE;
	return session_run(s);
}

static int stats_opt(struct cmdline *cl, int opt, const char *arg)
{
	if (opt == OPT_FOR || opt == OPT_SLACK || opt == OPT_STATS) {
		err("stats: --%s is not an option of stats", option_name(opt));
		return -EINVAL;
	}
	return geometry_opt(cl->s, opt, arg);
}

static int cmd_stats(struct session *s, int argc, char **argv)
{
	struct cmdline cl = { .s = s };
	int ret;

	if (parse_opts(&cl, argc, argv, stats_opt))
		return EXIT_USAGE;
	if (optind < argc) {
		err("stats: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	ret = session_open(s);
	if (ret)
		return ret;
	if (s->json) {
		printf("{\"module\": {");
		print_module_params(true);
		printf("},\n \"instance\": ");
	} else {
		printf("a fresh instance (timers live and die with the process that made them):\n");
	}
	ret = print_stats(s->h, NULL, s->json);
	if (s->json) {
		printf("}\n");
	} else {
		printf("module parameters:\n");
		print_module_params(false);
	}
	htw_close(s->h);
	return ret;
}

static int cmd_info(struct session *s)
{
	int ret = session_open(s);

	if (ret)
		return ret;
	printf("device:    %s\n", s->params.device ?: HTW_DEVICE_PATH);
	printf("api:       %u\n", HTW_API_VERSION);
	printf("library:   %d.%d\n", LIBHTWHEEL_VERSION_MAJOR,
	       LIBHTWHEEL_VERSION_MINOR);
	printf("clock:     %s\n", clock_name(s->params.clockid));
	printf("tick:      %llu ns\n", (unsigned long long)s->params.tick_ns);
	printf("slots:     %u x %u levels\n", s->params.slots, s->params.levels);
	printf("max pending: %llu\n", (unsigned long long)s->params.max_pending);
	htw_close(s->h);
	return EXIT_OK;
}

/* "-5ms" would be taken for an option; catch it as the bad duration it is. */
static int reject_negative(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-' &&
		    ((argv[i][1] >= '0' && argv[i][1] <= '9') || argv[i][1] == '.')) {
			explain_duration("duration", argv[i], -EINVAL);
			return -EINVAL;
		}
	}
	return 0;
}

static int dispatch(struct session *s, int argc, char **argv)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "run"))
		return cmd_run(s, argc, argv, false);
	if (!strcmp(cmd, "watch"))
		return cmd_run(s, argc, argv, true);
	if (!strcmp(cmd, "schedule"))
		return cmd_schedule(s, argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(s, argc, argv);
	if (!strcmp(cmd, "info") && argc == 1)
		return cmd_info(s);
	err("unknown command '%s' (see htwheel --help)", cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static struct session s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return print_usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return print_usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("htwheel %s (libhtwheel %d.%d, API %d)\n", HTW_CLI_VERSION,
		       LIBHTWHEEL_VERSION_MAJOR, LIBHTWHEEL_VERSION_MINOR,
		       HTW_API_VERSION);
		return EXIT_OK;
	}
	if (reject_negative(argc, argv))
		return EXIT_USAGE;
	return dispatch(&s, argc - 1, argv + 1);
}
