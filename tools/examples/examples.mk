# SPDX-License-Identifier: GPL-2.0
#
# The event-loop examples and their test.  Included by the top-level
# Makefile; tools/lib/htwheel.mk has the echo server.
#
#   make userprogs    also build/htwheel-{uring,libuv,libevent}-timeouts
#   make selftests    also build/tests/libhtwheel_examples_test
#
# Each links its loop's static library, from Debian's -dev package, which
# example-pkgs installs with apt when it is missing: static, like every
# program the qemu initramfs holds.  The linker's warnings that libuv's
# getpwuid_r() and libevent's getaddrinfo() need glibc's shared libraries
# at run time concern code the examples never call.

HTW_EXAMPLE_PKGS := liburing-dev libuv1-dev libevent-dev pkg-config
HTW_EXAMPLE_PEERS := tools/examples/example_peers.c tools/examples/example_peers.h
HTW_EXAMPLE_DEPS := $(HTW_EXAMPLE_PEERS) $(HTW_LIB_A) $(HTW_LIB_HDRS)
HTW_EXAMPLE_URING := $(BUILD)/htwheel-uring-timeouts
HTW_EXAMPLE_LIBUV := $(BUILD)/htwheel-libuv-timeouts
HTW_EXAMPLE_LIBEVENT := $(BUILD)/htwheel-libevent-timeouts
HTW_EXAMPLES := $(HTW_EXAMPLE_URING) $(HTW_EXAMPLE_LIBUV) $(HTW_EXAMPLE_LIBEVENT)

# The pkg-config module of each example's loop (libuv's static library
# is a module of its own).
HTW_EXAMPLE_PC_uring := liburing
HTW_EXAMPLE_PC_libuv := libuv-static
HTW_EXAMPLE_PC_libevent := libevent_core

.PHONY: example-pkgs

userprogs: $(HTW_EXAMPLES)
selftests: $(BUILD)/tests/libhtwheel_examples_test

# Once per make, before any example: apt-get must not run twice at once.
example-pkgs:
	@tools/harness.sh apt-install $(HTW_EXAMPLE_PKGS)

$(HTW_EXAMPLES): $(BUILD)/htwheel-%-timeouts: tools/examples/%_timeouts.c \
		$(HTW_EXAMPLE_DEPS) | example-pkgs
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) -I$(CURDIR)/tools/examples \
		$$(pkg-config --cflags $(HTW_EXAMPLE_PC_$*)) -static -o $@ \
		$< tools/examples/example_peers.c $(HTW_LIB_A) \
		$$(pkg-config --static --libs $(HTW_EXAMPLE_PC_$*))

# The test runs the examples it finds at build/, next to its directory.
$(BUILD)/tests/libhtwheel_examples_test: tests/lib/libhtwheel_examples_test.c \
		$(HARNESS_DEPS) $(HTW_EXAMPLES)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -o $@ $<
