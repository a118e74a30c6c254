/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the device tests: open with the handshake, the clock,
 * the timer slab's object count and the module's parameters.
 */
#ifndef _HTWHEEL_TEST_UTIL_H
#define _HTWHEEL_TEST_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

/* Open /dev/htwheel and do the handshake; -1 with errno on failure. */
static inline int htw_test_open(int flags)
{
	struct htw_api api = { .api = HTW_API_VERSION };
	int fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC | flags);

	if (fd >= 0 && ioctl(fd, HTW_IOC_API, &api)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline uint64_t htw_test_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Live htw_timer objects (boot with slab_nomerge), -1 if unknown. */
static inline long htw_test_slab_objects(void)
{
	FILE *f = fopen("/sys/kernel/slab/htw_timer/shrink", "w");
	long n = -1;

	/* Flush per-CPU slabs first so that the count settles. */
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/sys/kernel/slab/htw_timer/objects", "r");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Set a module parameter, returning its old value in *old if asked. */
static inline int htw_test_set_param(const char *name, unsigned long v,
				     unsigned long *old)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/htwheel/parameters/%s", name);
	if (old) {
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%lu", old) != 1) {
			fclose(f);
			return -1;
		}
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lu\n", v);
	return fclose(f);
}

#endif /* _HTWHEEL_TEST_UTIL_H */
