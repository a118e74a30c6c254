# SPDX-License-Identifier: GPL-2.0
#
# Debian's real kernels under qemu.  Included by the top-level
# Makefile; scripts live in tools/qemu/.
#
#   make check-qemu   build the module against Debian's 6.1 generic and
#                     PREEMPT_RT headers, boot both kernels with 2 CPUs,
#                     run the device, library and stress tests, report
#
# `make check` (tools/uml/check.sh) calls tools/qemu/check.sh itself.

HTW_STRESS := $(BUILD)/tests/htwheel_stress_test

.PHONY: check-qemu

# The SMP stress runs everywhere the device tests run: UML and qemu.
selftests: $(HTW_STRESS)

$(HTW_STRESS): tests/stress/htwheel_stress_test.c tests/selftests/htwheel_util.h include/uapi/linux/htwheel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $<

check-qemu:
	tools/qemu/check.sh --report
