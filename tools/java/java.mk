# SPDX-License-Identifier: GPL-2.0
#
# io.htwheel.HtwheelTimer, Netty's io.netty.util.Timer over /dev/htwheel:
# the jar, its JNI library (libhtwheel's objects linked in, so it needs no
# other library) and the JUnit tests.  Included by the top-level Makefile.
#
#   make java        build/java/htwheel.jar, build/java/libhtwheel-jni.so
#   make java-tests  and build/java/htwheel-tests.jar

HTW_JAVA_DIR := $(BUILD)/java
HTW_JAVA_JAR := $(HTW_JAVA_DIR)/htwheel.jar
HTW_JAVA_TESTJAR := $(HTW_JAVA_DIR)/htwheel-tests.jar
HTW_JAVA_JNI := $(HTW_JAVA_DIR)/libhtwheel-jni.so
HTW_JAVA_SRCS := $(wildcard tools/java/src/io/htwheel/*.java)
HTW_JAVA_TESTS := $(wildcard tools/java/test/io/htwheel/*.java)
HTW_JAVA_HOME ?= /usr/lib/jvm/java-17-openjdk-amd64
HTW_NETTY_JAR := /usr/share/java/netty-common.jar
HTW_JUNIT_CP := /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
HTW_JAVA_PKGS := openjdk-17-jdk-headless libnetty-java junit4

.PHONY: java java-tests
java: $(HTW_JAVA_JAR) $(HTW_JAVA_JNI)
java-tests: java $(HTW_JAVA_TESTJAR)

$(HTW_JAVA_JAR): $(HTW_JAVA_SRCS)
	@tools/harness.sh apt-install $(HTW_JAVA_PKGS)
	@rm -rf $(HTW_JAVA_DIR)/classes && mkdir -p $(HTW_JAVA_DIR)/classes
	javac --release 11 -Xlint:all -Werror -cp $(HTW_NETTY_JAR) \
		-d $(HTW_JAVA_DIR)/classes $^
	jar --create --file $@ -C $(HTW_JAVA_DIR)/classes .

$(HTW_JAVA_TESTJAR): $(HTW_JAVA_TESTS) $(HTW_JAVA_JAR)
	@rm -rf $(HTW_JAVA_DIR)/test-classes && mkdir -p $(HTW_JAVA_DIR)/test-classes
	javac --release 11 -cp $(HTW_JAVA_JAR):$(HTW_NETTY_JAR):$(HTW_JUNIT_CP) \
		-d $(HTW_JAVA_DIR)/test-classes $(HTW_JAVA_TESTS)
	jar --create --file $@ -C $(HTW_JAVA_DIR)/test-classes .

$(HTW_JAVA_JNI): tools/java/jni/htwheel_jni.c $(HTW_LIB_SRCS) $(HTW_LIB_HDRS)
	@tools/harness.sh apt-install $(HTW_JAVA_PKGS)
	@mkdir -p $(HTW_JAVA_DIR)
	$(CC) $(HTW_LIB_CFLAGS) -Wno-unused-parameter -fPIC -shared -Wl,-z,defs -Wl,-z,relro -Wl,-z,now \
		-I$(HTW_JAVA_HOME)/include -I$(HTW_JAVA_HOME)/include/linux \
		-o $@ tools/java/jni/htwheel_jni.c $(HTW_LIB_SRCS)

# The tests run in UML like the selftests: a script whose TAP results.py
# reads.  The qemu boots' initramfs takes static programs only, so it is
# absent there (tests/manifest.txt says so).
HTW_JAVA_TEST := $(BUILD)/tests/htwheel_java_test
selftests: $(HTW_JAVA_TEST)

$(HTW_JAVA_TEST): tools/java/htwheel_java_test.sh $(HTW_JAVA_TESTJAR) $(HTW_JAVA_JNI)
	@mkdir -p $(dir $@)
	install -m 0755 $< $@
