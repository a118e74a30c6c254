// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libhtwheel: human durations ("250ms", "1.5s", "1m30s") to nanoseconds.
 *
 * Kept in the library rather than the CLI so that every program accepts
 * the same spelling, and so that its corner cases have one test.
 */
#include <errno.h>
#include <string.h>

#include "htwheel.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	uint64_t ns;
} htw_units[] = {
	/* Longest first: "ms" must not be taken for "m" followed by "s". */
	{ "ns", 1 },
	{ "us", HTW_NSEC_PER_USEC },
	{ "ms", HTW_NSEC_PER_MSEC },
	{ "s", HTW_NSEC_PER_SEC },
	{ "m", 60 * HTW_NSEC_PER_SEC },
	{ "h", 3600 * HTW_NSEC_PER_SEC },
};

/* Match a unit at *s; its length or 0. */
static size_t htw_unit(const char *s, uint64_t *unit)
{
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(htw_units); i++) {
		len = strlen(htw_units[i].name);
		if (!strncmp(s, htw_units[i].name, len) &&
		    (s[len] == '\0' || (s[len] >= '0' && s[len] <= '9'))) {
			*unit = htw_units[i].ns;
			return len;
		}
	}
	return 0;
}

static int htw_add(uint64_t *acc, uint64_t v)
{
	if (*acc > UINT64_MAX - v)
		return -ERANGE;
	*acc += v;
	return 0;
}

/* Digits at *sp into *v, with overflow checking; how many were read. */
static int htw_digits(const char **sp, uint64_t *v, int *count)
{
	const char *s = *sp;

	*v = 0;
	*count = 0;
	for (; *s >= '0' && *s <= '9'; s++, (*count)++) {
		if (*v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		*v = *v * 10 + (*s - '0');
	}
	*sp = s;
	return 0;
}

/*
 * The @n fraction digits at @s, in units of @unit, truncated to 1 ns and
 * exact for any number of digits: 0.d1d2...dn times @unit by long
 * multiplication from the last digit, keeping only the carry into the
 * integer part.  The carry stays below @unit, so nothing overflows.
 */
static uint64_t htw_fraction(const char *s, uint64_t unit, int n)
{
	uint64_t carry = 0;

	while (n--)
		carry = ((uint64_t)(s[n] - '0') * unit + carry) / 10;
	return carry;
}

/* One NUMBER[.FRACTION]UNIT group at *sp, added to *ns. */
static int htw_parse_group(const char **sp, uint64_t *ns)
{
	const char *s = *sp, *frac = NULL;
	uint64_t whole, unit;
	int ret, digits, fdigits = 0;
	size_t len;

	ret = htw_digits(&s, &whole, &digits);
	if (ret)
		return ret;
	if (*s == '.') {
		frac = ++s;
		while (*s >= '0' && *s <= '9')
			s++, fdigits++;
	}
	if (!digits && !fdigits)
		return -EINVAL;
	len = htw_unit(s, &unit);
	if (!len)
		return -EINVAL;
	if (whole && unit > UINT64_MAX / whole)
		return -ERANGE;
	ret = htw_add(ns, whole * unit);
	if (!ret && frac)
		ret = htw_add(ns, htw_fraction(frac, unit, fdigits));
	*sp = s + len;
	return ret;
}

int htw_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t acc = 0;
	int ret;

	if (!s || !ns || !*s)
		return -EINVAL;
	/* A bare zero needs no unit: it is zero in all of them. */
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	while (*s) {
		ret = htw_parse_group(&s, &acc);
		if (ret)
			return ret;
	}
	*ns = acc;
	return 0;
}
