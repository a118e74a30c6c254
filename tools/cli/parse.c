// SPDX-License-Identifier: GPL-2.0
/*
 * Durations and numbers as the htwheel CLI reads them, from the command
 * line and from stdin, with one line on what is wrong with a bad one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool is_unit(const char *u, size_t len)
{
	static const char *const units[] = { "ns", "us", "ms", "s", "m", "h" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i]) == len && !strncmp(u, units[i], len))
			return true;
	return false;
}

/* Say in one line what is wrong with a duration the library refused. */
void explain_duration(const char *what, const char *s, int ret)
{
	const char *p = s, *u;

	if (*s == '-')
		return err("%s '%s': negative durations are not allowed", what, s);
	if (ret == -ERANGE)
		return err("%s '%s': too large (the limit is about 584 years)", what, s);
	while (*p) {
		u = p + strspn(p, "0123456789.");
		if (u == p)
			return err("%s '%s': not a duration (e.g. 250ms, 1.5s, 1m30s)", what, s);
		if (!*u)
			return err("%s '%s': missing unit (use ns, us, ms, s, m, h)", what, s);
		p = u + strcspn(u, "0123456789.");
		if (!is_unit(u, p - u))
			return err("%s '%s': unknown unit '%.*s' (use ns, us, ms, s, m, h)",
				   what, s, (int)(p - u), u);
	}
	err("%s '%s': not a duration (e.g. 250ms, 1.5s, 1m30s)", what, s);
}

int parse_dur(const char *what, const char *s, uint64_t *ns)
{
	int ret = htw_parse_duration(s, ns);

	if (ret)
		explain_duration(what, s, ret);
	return ret;
}

int parse_u64(const char *what, const char *s, uint64_t *v)
{
	char *end;

	if (*s >= '0' && *s <= '9') {
		errno = 0;
		*v = strtoull(s, &end, 10);
		if (!errno && !*end)
			return 0;
	}
	err("%s '%s': not a non-negative integer", what, s);
	return -EINVAL;
}
