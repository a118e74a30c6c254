# SPDX-License-Identifier: GPL-2.0
#
# libhtwheel, the htwheel CLI, the examples and their tests.  Included by
# the top-level Makefile; everything is built under $(BUILD).
#
#   make userprogs                    library (.a, .so), CLI, echo server
#   make selftests                    and their tests (build/tests/*_test)
#   make install PREFIX=/usr DESTDIR= header, libraries, libhtwheel.pc,
#                                     man pages and the CLI

# The project's version (libhtwheel.so.VERSION, libhtwheel.pc, the DKMS
# package): the upstream part of the newest entry of debian/changelog, the
# one place it is written (tools/deb/deb.mk puts it into dkms.conf).
HTW_LIB_VERSION := $(shell sed -n '1s/^[^ ]* (\(.*\)-[^-]*).*/\1/p' $(CURDIR)/debian/changelog)
$(if $(HTW_LIB_VERSION),,$(error debian/changelog names no version))
HTW_LIB_SONAME := libhtwheel.so.1

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

HTW_LIBDIR := $(BUILD)/lib
HTW_LIB_SRCS := tools/lib/htwheel.c tools/lib/duration.c
HTW_LIB_HDRS := tools/lib/include/htwheel.h include/uapi/linux/htwheel.h
HTW_LIB_CFLAGS := $(USER_CFLAGS) -I$(CURDIR)/tools/lib/include \
	-DHTW_VERSION='"$(HTW_LIB_VERSION)"'
HTW_LIB_A := $(HTW_LIBDIR)/libhtwheel.a
HTW_LIB_SO := $(HTW_LIBDIR)/libhtwheel.so.$(HTW_LIB_VERSION)
HTW_LIB_OBJS := $(patsubst tools/lib/%.c,$(HTW_LIBDIR)/%.o,$(HTW_LIB_SRCS))
HTW_LIB_PICS := $(HTW_LIB_OBJS:.o=.pic.o)

HTW_CLI := $(BUILD)/htwheel
HTW_CLI_SRCS := tools/cli/commands.c tools/cli/session.c tools/cli/output.c \
	tools/cli/parse.c
HTW_ECHO := $(BUILD)/htwheel-echo-server
HTW_MANPAGES := $(wildcard tools/man/man*/*.[0-9])

# Test programs link the static library: they run inside UML as they are.
# All are named libhtwheel_*: they run after the device's own tests.
HTW_LIB_TESTS := $(BUILD)/tests/libhtwheel_test $(BUILD)/tests/libhtwheel_cli_test \
	$(BUILD)/tests/libhtwheel_echo_test
HTW_PKG_TESTS := $(BUILD)/tests/libhtwheel_pkgconfig_test $(BUILD)/tests/libhtwheel_pkgconfig_static_test
HTW_DESTDIR := $(BUILD)/destdir
HTW_PKG_PREFIX := /usr/local
HTW_PKG_CONFIG := PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$(HTW_DESTDIR)$(HTW_PKG_PREFIX)/lib/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(HTW_DESTDIR) pkg-config

.PHONY: install htw-install htw-lib

userprogs: htw-lib $(HTW_CLI) $(HTW_ECHO)
selftests: $(HTW_LIB_TESTS) $(HTW_PKG_TESTS) $(BUILD)/tests/libhtwheel_manpages_test
install: htw-install

htw-lib: $(HTW_LIB_A) $(HTW_LIBDIR)/libhtwheel.so

$(HTW_LIBDIR)/%.o: tools/lib/%.c $(HTW_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) -c -o $@ $<

$(HTW_LIBDIR)/%.pic.o: tools/lib/%.c $(HTW_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) -fPIC -c -o $@ $<

$(HTW_LIB_A): $(HTW_LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(HTW_LIB_SO): $(HTW_LIB_PICS) tools/lib/libhtwheel.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(HTW_LIB_SONAME) \
		-Wl,--version-script=tools/lib/libhtwheel.map -o $@ $(HTW_LIB_PICS)

$(HTW_LIBDIR)/libhtwheel.so: $(HTW_LIB_SO)
	ln -sf $(notdir $<) $(HTW_LIBDIR)/$(HTW_LIB_SONAME)
	ln -sf $(HTW_LIB_SONAME) $@

$(HTW_CLI): $(HTW_CLI_SRCS) tools/cli/cli.h $(HTW_LIB_A) $(HTW_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) -static -o $@ $(HTW_CLI_SRCS) $(HTW_LIB_A)

$(HTW_ECHO): tools/examples/echo_server.c $(HTW_LIB_A) $(HTW_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) -static -o $@ $< $(HTW_LIB_A)

$(HTW_LIB_TESTS): $(BUILD)/tests/%: tests/lib/%.c $(HTW_LIB_A) $(HTW_LIB_HDRS) $(HARNESS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) $(HARNESS_CFLAGS) -static -pthread -o $@ $< $(HTW_LIB_A)

# The tests find the CLI and the server next to them, at build/.
$(BUILD)/tests/libhtwheel_cli_test: $(HTW_CLI)
$(BUILD)/tests/libhtwheel_echo_test: $(HTW_ECHO)

# The man pages, checked inside UML with man -l.
$(BUILD)/tests/libhtwheel_manpages_test: tests/lib/libhtwheel_manpages_test.sh $(HTW_MANPAGES)
	@mkdir -p $(dir $@)
	sed 's|@MANDIR@|$(CURDIR)/tools/man|' $< >$@
	chmod +x $@

# ---- install, and a consumer that sees only the installed files ----

htw-install: htw-lib $(HTW_CLI)
	install -d $(DESTDIR)$(INCLUDEDIR)/htwheel/linux $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man4
	install -m 644 tools/lib/include/htwheel.h $(DESTDIR)$(INCLUDEDIR)/htwheel.h
	install -m 644 include/uapi/linux/htwheel.h $(DESTDIR)$(INCLUDEDIR)/htwheel/linux/htwheel.h
	install -m 644 $(HTW_LIB_A) $(DESTDIR)$(LIBDIR)/libhtwheel.a
	install -m 755 $(HTW_LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libhtwheel.so.$(HTW_LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(HTW_LIB_SONAME)
	ln -sf $(HTW_LIB_SONAME) $(DESTDIR)$(LIBDIR)/libhtwheel.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(HTW_LIB_VERSION)|' \
		tools/lib/libhtwheel.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libhtwheel.pc
	install -m 755 $(HTW_CLI) $(DESTDIR)$(BINDIR)/htwheel
	for p in $(HTW_MANPAGES); do \
		s=$${p##*.}; d=$(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
		sed '1,3s/^\(\.TH .*"\(lib\)\{0,1\}htwheel\) [0-9.]*"/\1 $(HTW_LIB_VERSION)"/' $$p >$$d; \
		chmod 644 $$d; \
	done

$(HTW_DESTDIR)/.installed: $(HTW_LIB_A) $(HTW_LIB_SO) $(HTW_CLI) $(HTW_LIB_HDRS) \
		tools/lib/libhtwheel.pc.in $(HTW_MANPAGES)
	rm -rf $(HTW_DESTDIR)
	$(MAKE) -s --no-print-directory -C $(CURDIR) htw-install \
		DESTDIR=$(HTW_DESTDIR) PREFIX=$(HTW_PKG_PREFIX)
	touch $@

# Built with nothing but what pkg-config says.  The rpath only stands in
# for the ldconfig that a real install into $(HTW_PKG_PREFIX) would run.
$(BUILD)/tests/libhtwheel_pkgconfig_test: tests/lib/libhtwheel_pkgconfig_consumer.c $(HTW_DESTDIR)/.installed
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< $$($(HTW_PKG_CONFIG) --cflags --libs libhtwheel) \
		-Wl,-rpath,$(HTW_DESTDIR)$(HTW_PKG_PREFIX)/lib

$(BUILD)/tests/libhtwheel_pkgconfig_static_test: tests/lib/libhtwheel_pkgconfig_consumer.c $(HTW_DESTDIR)/.installed
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -static -o $@ $< \
		$$($(HTW_PKG_CONFIG) --static --cflags --libs libhtwheel)
