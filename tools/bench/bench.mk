# SPDX-License-Identifier: GPL-2.0
# `make bench`: htwheel against timerfd, POSIX timers, hrtimers
# and the kernel timer wheel, measured side by side in one UML boot of the
# lean um-bench kernel.  Included by the top-level Makefile.
#
#   make bench              build everything needed, boot, print the table
#   make bench-progs        only the user-space bench program
#
# Results: build/bench/results.json, build/bench/table.txt,
# build/bench/lateness.svg (see Documentation/benchmark.rst).

BENCH_PROGS := $(BUILD)/bench/htwheel_ubench

.PHONY: bench bench-progs

bench-progs: $(BENCH_PROGS)
	$(htw_list_programs)

userprogs: $(BENCH_PROGS)

$(BUILD)/bench/htwheel_ubench: tools/bench/htwheel_ubench.c include/uapi/linux/htwheel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -static -o $@ $< -lrt

bench: bench-progs
	tools/bench/bench.sh
