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

.PHONY: check-qemu

check-qemu: userprogs selftests
	tools/qemu/check.sh --report
