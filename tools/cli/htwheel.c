// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: command-line front end to /dev/htwheel.
 *
 *   htwheel info      open the device, do the API handshake, print it
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/htwheel.h>

#define HTW_DEVICE	"/dev/htwheel"
#define HTW_CLI_VERSION	"0.1"

enum { EXIT_USAGE = 2, EXIT_DEVICE = 3 };

static int usage(FILE *out)
{
	fprintf(out,
		"usage: htwheel info\n"
		"       htwheel --help | --version\n"
		"\n"
		"  info   open " HTW_DEVICE ", do the API handshake and print what\n"
		"         the kernel module supports\n");
	return out == stdout ? 0 : EXIT_USAGE;
}

static int open_device(void)
{
	int fd = open(HTW_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "htwheel: %s: %s%s\n", HTW_DEVICE, strerror(errno),
			errno == ENOENT ? " (is the module loaded? try: insmod htwheel.ko)" : "");
	}
	return fd;
}

static int cmd_info(void)
{
	struct htw_api api;
	int fd = open_device();

	if (fd < 0)
		return EXIT_DEVICE;
	memset(&api, 0, sizeof(api));
	api.api = HTW_API_VERSION;
	if (ioctl(fd, HTW_IOC_API, &api)) {
		fprintf(stderr, "htwheel: API handshake: %s\n", strerror(errno));
		close(fd);
		return EXIT_DEVICE;
	}
	printf("device:    %s\n", HTW_DEVICE);
	printf("api:       %u\n", api.api);
	printf("features:  0x%llx\n", (unsigned long long)api.features);
	printf("ioctls:    0x%llx\n", (unsigned long long)api.ioctls);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("htwheel %s (API %d)\n", HTW_CLI_VERSION, HTW_API_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "info") && argc == 2)
		return cmd_info();
	fprintf(stderr, "htwheel: unknown command '%s' (see htwheel --help)\n", argv[1]);
	return EXIT_USAGE;
}
