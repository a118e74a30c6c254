# SPDX-License-Identifier: GPL-2.0
#
# htwheel as Debian packages, and the tests built from them.  Included by
# the top-level Makefile.
#
#   make deb            htwheel-dkms, libhtwheel1, libhtwheel-dev and htwheel
#                       into build/deb/ (tools/deb/build.sh: dpkg-buildpackage
#                       in a copy of the tree, then lintian)
#   make dkms-source    the module's DKMS source tree, as htwheel-dkms holds
#                       it, into DESTDIR/usr/src/htwheel-VERSION
#   make selftests      also builds the pkg-config consumer from nothing but
#                       the unpacked libhtwheel-dev and libhtwheel1
#
# debian/rules builds with htw-deb-progs and installs with htw-deb-install.
# tools/qemu/check.sh has DKMS build the module from the unpacked
# htwheel-dkms (tools/deb/dkms.sh) and boots that module.

.PHONY: deb dkms-source htw-deb-progs htw-deb-install

HTW_DEB := $(BUILD)/deb
# What the packages are made of: when one of these changes, `make deb`
# builds them again.
HTW_DEB_INPUTS := Makefile Kbuild dkms.conf tools/harness.sh \
	$(shell find debian src include tests/kunit tools/lib tools/cli tools/man \
		tools/udev tools/deb -type f 2>/dev/null)

deb: $(HTW_DEB)/.built

$(HTW_DEB)/.built: $(HTW_DEB_INPUTS)
	tools/deb/build.sh $(HTW_DEB)
	touch $@

# `make check` tests the packages: the consumers below are built from them,
# and the qemu boots load the module DKMS built from htwheel-dkms
# (tools/uml/check.sh makes deb unless its selection needs neither).
check-qemu: deb

# ---- what debian/rules runs ----

# The packaged CLI links the shared library (a distribution ships no static
# programs); build/htwheel stays static for the test boots.
HTW_DEB_CLI := $(BUILD)/deb-cli/htwheel

htw-deb-progs: htw-lib $(HTW_DEB_CLI)

$(HTW_DEB_CLI): $(HTW_CLI_SRCS) tools/cli/cli.h $(HTW_LIBDIR)/libhtwheel.so $(HTW_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HTW_LIB_CFLAGS) $(LDFLAGS) -o $@ $(HTW_CLI_SRCS) -L$(HTW_LIBDIR) -lhtwheel

# `make install`, with the shared CLI in place of the static one, and the
# DKMS source tree.
htw-deb-install: htw-install dkms-source $(HTW_DEB_CLI)
	install -m 755 $(HTW_DEB_CLI) $(DESTDIR)$(BINDIR)/htwheel

# What Kbuild compiles: the module, and the KUnit suites it builds for
# HTW_KUNIT=1 (never for DKMS).  dkms.conf gets the version of debian/changelog.
HTW_DKMS_DIR = $(DESTDIR)/usr/src/htwheel-$(HTW_LIB_VERSION)

dkms-source:
	install -d $(HTW_DKMS_DIR)/src $(HTW_DKMS_DIR)/include/uapi/linux \
		$(HTW_DKMS_DIR)/tests/kunit
	install -m 644 Kbuild $(HTW_DKMS_DIR)/
	install -m 644 src/*.[ch] $(HTW_DKMS_DIR)/src/
	install -m 644 include/uapi/linux/*.h $(HTW_DKMS_DIR)/include/uapi/linux/
	install -m 644 tests/kunit/*.[ch] $(HTW_DKMS_DIR)/tests/kunit/
	sed 's/#MODULE_VERSION#/$(HTW_LIB_VERSION)/' dkms.conf >$(HTW_DKMS_DIR)/dkms.conf

# ---- a consumer that sees only what the packages install ----

# libhtwheel-dev and libhtwheel1 unpacked (dpkg-deb -x) as apt would
# install them, under build/deb/root.
HTW_DEB_ROOT := $(HTW_DEB)/root
HTW_DEB_LIBDIR = $(HTW_DEB_ROOT)/usr/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH)
# The unpacked tree is pkg-config's sysroot: the .pc file's /usr paths
# become paths in it.
HTW_DEB_PKG_CONFIG = PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$(HTW_DEB_LIBDIR)/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(HTW_DEB_ROOT) pkg-config
HTW_DEB_TESTS := $(BUILD)/tests/libhtwheel_deb_test $(BUILD)/tests/libhtwheel_deb_static_test

# HTW_NO_DEB=1 leaves them out, and so the packages' build: a partial
# `make check` that runs neither them nor a qemu boot.
selftests: $(if $(HTW_NO_DEB),,$(HTW_DEB_TESTS))

$(HTW_DEB_ROOT)/.unpacked: $(HTW_DEB)/.built
	rm -rf $(HTW_DEB_ROOT)
	for p in libhtwheel1 libhtwheel-dev; do \
		dpkg-deb -x $(HTW_DEB)/$${p}_*.deb $(HTW_DEB_ROOT) || exit 1; \
	done
	touch $@

# The same consumer as libhtwheel_pkgconfig_test (tools/lib/htwheel.mk).
# The rpath stands in for the ldconfig of a real install; the shared one
# runs in UML only (the qemu initramfs holds static programs).
$(BUILD)/tests/libhtwheel_deb_test: tests/lib/libhtwheel_pkgconfig_consumer.c $(HTW_DEB_ROOT)/.unpacked
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< $$($(HTW_DEB_PKG_CONFIG) --cflags --libs libhtwheel) \
		-Wl,-rpath,$(HTW_DEB_LIBDIR)

$(BUILD)/tests/libhtwheel_deb_static_test: tests/lib/libhtwheel_pkgconfig_consumer.c $(HTW_DEB_ROOT)/.unpacked
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -static -o $@ $< \
		$$($(HTW_DEB_PKG_CONFIG) --static --cflags --libs libhtwheel)
