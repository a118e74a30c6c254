// SPDX-License-Identifier: GPL-2.0
/*
 * The module's load-time parameter mode: loaded with mode=0660, the
 * device node is 0660 from the start (devtmpfs makes it as the module
 * registers, before any udev rule runs); a mode beyond the permission
 * bits refuses the load.  The test unloads the module the stage loaded
 * ($HTW_MODULE is its file) and always loads it back as it was, without
 * parameters; skipped without $HTW_MODULE, or without root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "htwheel_util.h"

#define NODE	"/dev/htwheel"

static int load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "htwheel", O_NONBLOCK) ? -errno : 0;
}

static int loaded(void)
{
	return access("/sys/module/htwheel", F_OK) == 0;
}

/* The node's permission bits, or -1 if there is no character device. */
static int node_mode(void)
{
	struct stat st;

	if (stat(NODE, &st) || !S_ISCHR(st.st_mode))
		return -1;
	return st.st_mode & 07777;
}

FIXTURE(load) {
	const char *path;
};

FIXTURE_SETUP(load)
{
	self->path = getenv("HTW_MODULE");
	if (!self->path)
		SKIP(return, "no $HTW_MODULE: the stage did not say where htwheel.ko is");
	if (getuid())
		SKIP(return, "loading modules needs root");
	/*
	 * UML's test kernel has KASAN without KASAN_VMALLOC: a module's second
	 * load there reads globals the first one's unload left poisoned, and
	 * KASAN reports it (load_module), whatever the module.
	 */
	if (htw_test_is_uml())
		SKIP(return, "User-Mode Linux: KASAN reports any module's second load");
	ASSERT_TRUE(loaded());
}

/* Whatever happened, the module is back as the stage loaded it. */
FIXTURE_TEARDOWN(load)
{
	if (!self->path || getuid())
		return;
	if (!loaded())
		EXPECT_EQ(0, load(self->path, ""));
	EXPECT_EQ(0666, node_mode());
}

TEST_F(load, mode_0660_from_the_start)
{
	char buf[16] = "";
	FILE *f;

	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(self->path, "mode=0660"));
	EXPECT_EQ(0660, node_mode());
	f = fopen("/sys/module/htwheel/parameters/mode", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_EQ(0660, strtol(buf, NULL, 10));
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(self->path, ""));
	EXPECT_EQ(0666, node_mode());
}

TEST_F(load, a_mode_beyond_permission_bits_refuses_the_load)
{
	ASSERT_EQ(0, unload());
	EXPECT_EQ(-EINVAL, load(self->path, "mode=04666"));
	EXPECT_FALSE(loaded());
	EXPECT_EQ(-EINVAL, load(self->path, "mode=01000"));
	EXPECT_FALSE(loaded());
}

TEST_HARNESS_MAIN
