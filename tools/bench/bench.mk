# SPDX-License-Identifier: GPL-2.0
# `make bench`: htwheel against timerfd, POSIX timers, libuv, libev,
# hrtimers and the kernel timer wheel, measured side by side in one UML
# boot of the lean um-bench kernel.  Included by the top-level Makefile.
#
#   make bench              build everything needed, boot, print the table
#   make bench-progs        only the user-space bench program
#
# Results: build/bench/results.json, build/bench/table.txt,
# build/bench/lateness.svg (see Documentation/benchmark.rst).

BENCH_PROGS := $(BUILD)/bench/htwheel_ubench
UBENCH_SRCS := $(wildcard tools/bench/ubench/*.c)

.PHONY: bench bench-progs

bench-progs: $(BENCH_PROGS)
	$(htw_list_programs)

userprogs: $(BENCH_PROGS)

# libuv and libev are peers in the same boot; their static archives from
# Debian's libuv1-dev (libuv_a.a) and libev-dev (libev.a) are linked in,
# since the program runs in UML's and qemu's initramfs, where no shared
# library is.  libuv's getpwuid_r link warning concerns code never called.
# The churn rows drive the shared table through libhtwheel's public calls;
# its doorbell is wrapped at link time, to be counted (churn.c).
$(BUILD)/bench/htwheel_ubench: $(UBENCH_SRCS) $(wildcard tools/bench/ubench/*.h) \
		include/uapi/linux/htwheel.h $(HTW_LIB_A) tools/lib/include/htwheel.h
	@mkdir -p $(dir $@)
	@tools/harness.sh apt-install libuv1-dev libev-dev
	$(CC) $(USER_CFLAGS) -I$(CURDIR)/tools/lib/include -static -o $@ $(UBENCH_SRCS) \
		-Wl,--wrap=htw_table2_enter $(HTW_LIB_A) \
		-l:libuv_a.a -l:libev.a -lpthread -ldl -lm -lrt

bench: bench-progs
	ROWS='$(ROWS)' SIZES='$(SIZES)' tools/bench/bench.sh
