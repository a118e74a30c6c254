#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# HtwheelTimer's JUnit 4 tests as TAP, run by the test boots like the
# selftests: the jars and the JNI library are beside it in build/java.
java_dir=$(cd "$(dirname "$0")/../java" && pwd)
cp=$java_dir/htwheel-tests.jar:$java_dir/htwheel.jar
cp=$cp:/usr/share/java/netty-common.jar:/usr/share/java/junit4.jar
cp=$cp:/usr/share/java/hamcrest-core.jar
if ! command -v java >/dev/null 2>&1; then
	echo "TAP version 13"
	echo "1..0 # SKIP no Java runtime in this root"
	exit 0
fi
# One CPU under UML: no JIT compiler threads racing the tests for it.
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m \
	-Dio.htwheel.jni="$java_dir/libhtwheel-jni.so" -cp "$cp" \
	io.htwheel.TapRunner io.htwheel.HtwheelTimerTest
