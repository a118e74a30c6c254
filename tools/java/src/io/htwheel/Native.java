// SPDX-License-Identifier: (GPL-2.0 OR MIT)
package io.htwheel;

/** The JNI calls over libhtwheel's handle API; each returns a count or -errno. */
final class Native {
    static {
        String path = System.getProperty("io.htwheel.jni");
        if (path != null)
            System.load(path);
        else
            System.loadLibrary("htwheel-jni");
    }

    private Native() {
    }

    static native long open(long tickNs, int slots, long maxPending, long[] geometry);

    static native void close(long h);

    static native int schedule(long h, long[] cookies, long[] delays, long[] handles, int n);

    static native int cancel(long h, long[] handles, int[] results, int n);

    static native int waitRead(long h, long[] cookies, long[] expired, int max);

    static native int drain(long h, long[] cookies, int max);

    static native long now(long h);

    static native String strerror(int errno);

    static final int EINTR = 4;
    static final int ENOENT = 2;
    static final int EMFILE = 24;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EDQUOT = 122;
    static final int HTW_CANCELLED = 0;
}
