// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/htwheel API handshake, from user space.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

#include "kselftest_harness.h"

static void api_request(struct htw_api *api)
{
	memset(api, 0, sizeof(*api));
	api->api = HTW_API_VERSION;
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/htwheel: %s", strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, handshake_reports_version_and_ioctls)
{
	struct htw_api api;

	api_request(&api);
	memset(api.reserved, 0, sizeof(api.reserved));
	api.features = 0;
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(HTW_API_VERSION, api.api);
	EXPECT_EQ(0, api.flags);
	EXPECT_EQ(0, api.features & ~HTW_FEATURES_ALL);
	EXPECT_NE(0, api.ioctls & (1ULL << _IOC_NR(HTW_IOC_API)));
	for (size_t i = 0; i < sizeof(api.reserved) / sizeof(api.reserved[0]); i++)
		EXPECT_EQ(0, api.reserved[i]);
}

TEST_F(dev, handshake_only_once)
{
	struct htw_api api;

	api_request(&api);
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_API, &api));
	api_request(&api);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(dev, handshake_rejects_wrong_version)
{
	struct htw_api api;

	api_request(&api);
	api.api = HTW_API_VERSION + 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(EINVAL, errno);
	/* A refused handshake leaves the file unconfigured: retry works. */
	api_request(&api);
	EXPECT_EQ(0, ioctl(self->fd, HTW_IOC_API, &api));
}

TEST_F(dev, handshake_rejects_reserved_and_flags)
{
	struct htw_api api;

	api_request(&api);
	api.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(EINVAL, errno);

	api_request(&api);
	api.reserved[4] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(EINVAL, errno);

	api_request(&api);
	api.features = ~(__u64)HTW_FEATURES_ALL;
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, handshake_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, HTW_IOC_API, (void *)1));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	struct htw_api api;
	char buf[64] = { 0 };

	EXPECT_EQ(-1, ioctl(self->fd, _IOW('x', 1, int), buf));
	EXPECT_EQ(ENOTTY, errno);
	api_request(&api);
	ASSERT_EQ(0, ioctl(self->fd, HTW_IOC_API, &api));
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(HTW_IOC_MAGIC, 0x7f, struct htw_api), buf));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, two_fds_handshake_independently)
{
	struct htw_api api;
	int fd2;

	fd2 = open("/dev/htwheel", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	api_request(&api);
	EXPECT_EQ(0, ioctl(self->fd, HTW_IOC_API, &api));
	api_request(&api);
	EXPECT_EQ(0, ioctl(fd2, HTW_IOC_API, &api));
	close(fd2);
}

TEST_HARNESS_MAIN
