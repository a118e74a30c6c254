# SPDX-License-Identifier: GPL-2.0
#
# htwheel: a hashed timing wheel for user space, as a kernel module.
# `make help` lists every target and every setting read from the
# environment; tests/harness/make_help_test.py keeps that list complete.

KDIR ?= /lib/modules/$(shell uname -r)/build
BUILD := $(CURDIR)/build

# The cache and the Linux source tree in it, as every harness script has
# them (tools/harness.sh holds the one rule).
HTW_PATHS := $(shell HTWHEEL_CACHE='$(HTWHEEL_CACHE)' $(CURDIR)/tools/harness.sh paths)
HTWHEEL_CACHE := $(word 1,$(HTW_PATHS))
HTW_KSRC := $(word 2,$(HTW_PATHS))
export HTWHEEL_CACHE

USER_CFLAGS := -O2 -g -Wall -Wextra -Werror=implicit-function-declaration \
	-I$(CURDIR)/include/uapi $(CFLAGS)
# The test programs use the kernel's kselftest harness, from the source
# tree tools/uml/kernel.sh unpacks, and the helpers of tests/include.
KSELFTEST_HARNESS := $(HTW_KSRC)/tools/testing/selftests/kselftest_harness.h
HARNESS_CFLAGS := -I$(dir $(KSELFTEST_HARNESS)) -I$(CURDIR)/tests/include \
	-Wno-unused-parameter -Wno-sign-compare -Wno-clobbered
HARNESS_DEPS := $(KSELFTEST_HARNESS) $(wildcard tests/include/*.h) include/uapi/linux/htwheel.h

SELFTESTS := $(patsubst tests/selftests/%.c,$(BUILD)/tests/%,$(wildcard tests/selftests/*_test.c))
# The SMP stress runs everywhere the device tests run: UML and qemu.
STRESS_TESTS := $(patsubst tests/stress/%.c,$(BUILD)/tests/%,$(wildcard tests/stress/*_test.c))

.PHONY: all modules modules_install userprogs selftests kernel check fuzz demo clean help

all: modules userprogs

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install

# Each group of programs is listed, as this make built it, in
# build/GROUP.list: the test boots run and stage the programs a list names,
# never whatever else build/ holds, so a program whose source is gone, or
# one this make did not build, never runs.
define htw_list_programs
	@mkdir -p $(BUILD)
	@printf '%s\n' $(sort $(filter $(BUILD)/%,$^)) >$(BUILD)/$@.list
endef

# The rules of tools/lib/htwheel.mk and tools/bench/bench.mk add their
# programs here.
userprogs:
	$(htw_list_programs)

# Test programs are static so that every test kernel can run them as they
# are.  tools/lib/htwheel.mk adds the library's tests.
selftests: $(SELFTESTS) $(STRESS_TESTS)
	$(htw_list_programs)

$(BUILD)/tests/%: tests/selftests/%.c $(HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $<

$(BUILD)/tests/%: tests/stress/%.c $(HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $<

$(KSELFTEST_HARNESS):
	tools/uml/kernel.sh source

# The 32-bit side of htwheel_abi_test's compat_ioctl test: the same source
# built with -m32, which needs gcc-multilib.  It is not a *_test: the
# 64-bit test runs it where the kernel runs 32-bit programs.
COMPAT32 := $(BUILD)/tests/htwheel_compat32
selftests: $(COMPAT32)

$(COMPAT32): tests/selftests/htwheel_abi_test.c include/uapi/linux/htwheel.h
	@mkdir -p $(dir $@)
	@tools/harness.sh apt-install gcc-multilib
	$(CC) -m32 -DHTW_COMPAT32_HELPER $(USER_CFLAGS) -static -o $@ $<

kernel:
	tools/uml/kernel.sh build debug

# Each part of the tree keeps its own rules: the library, CLI and echo
# server (tools/lib/htwheel.mk), the event-loop examples
# (tools/examples/examples.mk), the benchmark (tools/bench/bench.mk),
# Debian's kernels under qemu (tools/qemu/qemu.mk), the Debian packages
# (tools/deb/deb.mk).
include tools/lib/htwheel.mk
include tools/examples/examples.mk
include tools/bench/bench.mk
include tools/qemu/qemu.mk
include tools/deb/deb.mk
include tools/java/java.mk

# tools/uml/check.sh builds the programs (and the Debian packages, whose
# DKMS module the qemu boots load) and runs the steps of the README's "How
# `make check` works"; T= and K= select tests and kernels.
check:
	T='$(T)' K='$(K)' tools/uml/check.sh

# A long fuzzer run (>= 10^6 operations); `make check` runs a short one.
fuzz: selftests
	tools/uml/fuzz.sh

demo: userprogs
	tools/uml/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD)

define HTW_HELP
Targets:
  all              modules and userprogs (the default)
  modules          htwheel.ko against KDIR
  modules_install  install it among KDIR's kernel's modules
  userprogs        libhtwheel, the htwheel CLI, the echo server, the
                   io_uring, libuv and libevent examples, the bench
                   program (build/; listed in build/userprogs.list)
  example-pkgs     apt-install what the examples build with (liburing-dev,
                   libuv1-dev, libevent-dev, pkg-config); userprogs does
  selftests        every test program (build/tests/; build/selftests.list)
  htw-lib          libhtwheel only (build/lib/)
  install          header, libraries, libhtwheel.pc, man pages and the CLI
                   into DESTDIR PREFIX
  htw-install      what install does; the pkg-config tests run it into
                   build/destdir
  deb              the Debian packages htwheel-dkms, libhtwheel1,
                   libhtwheel-dev and htwheel in build/deb/ (built in a copy
                   of the tree, build/deb/src; lintian must find no error or
                   warning); then `apt install ./build/deb/*.deb`
  dkms-source      the module's source and dkms.conf into
                   DESTDIR/usr/src/htwheel-VERSION, for `dkms install`
  htw-deb-progs    what debian/rules builds: libhtwheel, and the CLI linked
                   against the shared library
  htw-deb-install  what debian/rules installs into DESTDIR: install with the
                   shared CLI, and dkms-source
  kernel           the debug UML kernel, in HTWHEEL_CACHE
  check            every test: the harness's own, UML (KUnit and user space,
                   real time and time travel), Debian 6.1 generic and RT
                   under qemu, booting the module DKMS built from the
                   htwheel-dkms package (so it builds deb first); ends
                   "N passed, N failed"
  check-qemu       only the Debian kernels under qemu
  fuzz             a long ioctl fuzzer run in UML (over 10^6 operations)
  demo             boot UML, load htwheel.ko and use the CLI
  bench            the benchmark: UML, then Debian 6.1 under qemu; ROWS=
                   and SIZES= select rows and sizes
  bench-progs      only the user-space bench program (build/bench-progs.list)
  java             the Java binding: htwheel.jar and the JNI library
                   (build/java/)
  java-tests       its JUnit tests, as the test program htwheel_java_test
  clean            remove build/ and the objects in the tree
  help             this text

Settings (make variables or the environment):
  T=NAME[,NAME...]         `make check`: only these test programs, harness
                           tests and KUnit suites (suite.test_glob filters
                           as kunit.py does); `python3 tools/uml/selection.py
                           names` lists them
  K=KERNEL[,KERNEL...]     `make check`: only these kernels: host (the
                           harness's tests), uml, generic, rt.  With T or K
                           the run is partial: its last line starts
                           "partial:" and only the selection is judged
  KDIR=DIR                 kernel build tree of `make modules`
                           (default: the running kernel's)
  CC, CFLAGS               compiler and extra flags of the user programs
  LDFLAGS                  extra link flags of the packaged CLI (debian/rules
                           passes dpkg-buildflags')
  PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, MANDIR
                           where `make install` puts things
  HTWHEEL_CACHE=DIR        kernels, sources and module objects
                           (default ~/.cache/htwheel)
  HTW_MODULE_CACHE=DIR     where the modules are built (default
                           HTWHEEL_CACHE/module): one per work tree
  HTW_JAVA_HOME=DIR        the JDK of `make java` (default: Debian's openjdk-17)
  HTW_JOBS=N               jobs of a UML kernel build (default: all CPUs)
  HTW_T0=EPOCH             when the run began, for the times of its progress
                           lines ("check [3/6] ..., 01:23"); the first line
                           sets it
  HTW_SKIP_QEMU=1          `make check` without the qemu boots
  HTW_KUNIT=1              Kbuild: also build the KUnit modules, and give
                           htwheel.ko the test hooks and exports they use
                           (never without it, whatever CONFIG_KUNIT says)
  HTW_KUNIT_TIMEOUT=S      seconds tools/uml/kunit.sh gives kunit.py's run
                           (900)
  HTW_MODULE=PATH          set by the boots' stages for htwheel_load_test:
                           the htwheel.ko it unloads and loads again
  HTW_BOOT_TIMEOUT=S       seconds before a UML boot is killed (900; fuzz 1800; bench 2400)
  HTW_UML_MEM=SIZE         UML's memory (1G; bench 2G)
  HTW_STRESS_SECONDS=S     length of each stress test variant (2)
  HTW_QEMU_FLAVOURS        Debian kernels to boot ("amd64 rt-amd64")
  HTW_QEMU_ONLY=P,...      programs a qemu boot runs (T= sets it; all)
  HTW_NO_DEB=1             selftests without the Debian packages' tests
                           (and so without `make deb`; T= and K= set it)
  HTW_QEMU_CPUS, HTW_QEMU_MEM
                           guest CPUs (2) and MiB (1024)
  HTW_QEMU_TIMEOUT=S       seconds before a qemu boot is killed (240; bench 2400)
  HTW_QEMU_ACCEL           tcg (default) or kvm
  HTW_DEBIAN_ABI, HTW_DEBIAN_VERSION
                           pin the Debian kernel (e.g. 6.1.0-57, 6.1.192-3)
  HTW_FUZZ_SEED, HTW_FUZZ_OPS, HTW_FUZZ_THREADS, HTW_FUZZ_PROCS
                           the fuzzer's seed, operations per thread, threads
                           and processes
  ROWS=ROW[,ROW...]        `make bench`: only these rows, of kernel (the
                           in-kernel benchmark), storm (in-kernel: N due in
                           one tick), sched, rearm, deliver, mem, table,
                           churn, idle-rearm, awake, conn, idle (a 2 s idle
                           window) and idle-hour (UML time travel)
  SIZES=N[,N...]           `make bench`: every row at these sizes (timers,
                           pending counts, table slots, connections)
  HTW_BENCH_ROWS           the rows tools/qemu/bench.sh runs (bench.sh
                           sets it from ROWS)
  HTW_BENCH_STORM          the storm row's sizes in tools/qemu/bench.sh
                           (100000,1000000; bench.sh sets it)
  HTW_BENCH=1              Kbuild: also build htwheel_bench.ko (a test build:
                           htwheel.ko exports the wheel to it)
  HTW_BENCH_N, HTW_BENCH_SIZES
                           user-space timers (100000; UML's sched 10000)
                           and in-kernel pending counts (1000,10000,100000,
                           1000000) of `make bench`
  HTW_BENCH_SEED           the seed of the bench's delays (a fresh random one,
                           recorded in the results)
  HTW_BENCH_CONN           connection counts of the idle-timeout workload
                           (1000,100000,1000000)
  HTW_BENCH_TABLE          the sizes of the shared timer table, churn,
                           idle-rearm and awake (1000,100000,1000000)
  HTW_BENCH_KMOD           more htwheel_bench.ko parameters, comma-separated
                           (expiry=0,reps=3: a quick look, not the table)
  HTW_BENCH_SKIP_QEMU=1    `make bench` without the qemu boot
  HTW_QEMU_BENCH_FLAVOUR, HTW_QEMU_BENCH_N, HTW_QEMU_BENCH_SIZES
                           the same for the qemu bench boot (amd64,
                           HTW_BENCH_N, HTW_BENCH_SIZES)
  CI                       set by CI runners; nothing reads it: .ci/run is
                           `make check`, the same as anywhere
endef
export HTW_HELP

help:
	@printf '%s\n' "$$HTW_HELP"
