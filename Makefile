# SPDX-License-Identifier: GPL-2.0
#
# htwheel: a hashed timing wheel for user space, as a kernel module.
#
#   make check      build the UML test kernel, the module and every test; run them
#   make demo       boot UML, load the module and talk to /dev/htwheel
#   make fuzz       run the ioctl fuzzer for over a million operations
#   make            build htwheel.ko against KDIR (default: the running kernel)
#                   and the user-space programs
#   make modules KDIR=/lib/modules/$(uname -r)/build
#
# Test kernels, their sources and module objects are cached under
# HTWHEEL_CACHE (default ~/.cache/htwheel).

KDIR ?= /lib/modules/$(shell uname -r)/build
HTWHEEL_CACHE ?= $(HOME)/.cache/htwheel
KSRC ?= $(HTWHEEL_CACHE)/linux-6.12
BUILD := $(CURDIR)/build

export HTWHEEL_CACHE

CC ?= cc
USER_CFLAGS := -O2 -g -Wall -Wextra -Werror=implicit-function-declaration \
	-I$(CURDIR)/include/uapi $(CFLAGS)
# The test programs use the kernel's kselftest harness and the helpers of
# tests/include.
HARNESS_CFLAGS := -I$(KSRC)/tools/testing/selftests -I$(CURDIR)/tests/include \
	-Wno-unused-parameter -Wno-sign-compare -Wno-clobbered
HARNESS_DEPS := $(wildcard tests/include/*.h) include/uapi/linux/htwheel.h

SELFTESTS := $(patsubst tests/selftests/%.c,$(BUILD)/tests/%,$(wildcard tests/selftests/*_test.c))
# The SMP stress runs everywhere the device tests run: UML and qemu.
STRESS_TESTS := $(patsubst tests/stress/%.c,$(BUILD)/tests/%,$(wildcard tests/stress/*_test.c))

.PHONY: all modules modules_install userprogs selftests kernel check fuzz demo clean help

all: modules userprogs

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

userprogs: $(PROGS)

# Test programs are static so that every test kernel can run them as they are.
selftests: $(SELFTESTS) $(STRESS_TESTS)

$(BUILD)/tests/%: tests/selftests/%.c $(HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $<

$(BUILD)/tests/%: tests/stress/%.c $(HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $<

# The 32-bit side of htwheel_abi_test's compat_ioctl test: the same source
# built with -m32, which needs gcc-multilib (installed with apt here, as
# tools/uml/kernel.sh installs what it needs).  It is not a *_test: the
# 64-bit test runs it where the kernel runs 32-bit programs.
COMPAT32 := $(BUILD)/tests/htwheel_compat32
selftests: $(COMPAT32)

$(COMPAT32): tests/selftests/htwheel_abi_test.c include/uapi/linux/htwheel.h
	@mkdir -p $(dir $@)
	@dpkg-query -W -f='$${Status}\n' gcc-multilib 2>/dev/null | grep -q '^install ok installed$$' || { \
		echo "[htwheel] installing with apt: gcc-multilib" >&2; \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends \
			gcc-multilib >/dev/null; }
	$(CC) -m32 -DHTW_COMPAT32_HELPER $(USER_CFLAGS) -static -o $@ $<

kernel:
	tools/uml/kernel.sh build debug

# Each part of the tree keeps its own rules: the library, CLI and examples
# (tools/lib/htwheel.mk), the benchmark (tools/bench/bench.mk), Debian's
# kernels under qemu (tools/qemu/qemu.mk).  They add
# their programs to `userprogs` and their tests to `selftests`.
-include tools/lib/htwheel.mk
-include tools/bench/bench.mk
-include tools/qemu/qemu.mk

check:
	tools/uml/check.sh

# A long fuzzer run (>= 10^6 operations); `make check` runs a short one.
fuzz:
	tools/uml/fuzz.sh

demo:
	tools/uml/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD)

help:
	@sed -n '3,14p' Makefile
