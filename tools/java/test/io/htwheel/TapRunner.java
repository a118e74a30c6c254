// SPDX-License-Identifier: (GPL-2.0 OR MIT)
package io.htwheel;

import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/** Runs a JUnit 4 class and prints its results as TAP, as the selftests do. */
public final class TapRunner extends RunListener {
    private int n;
    private boolean failed;

    @Override
    public void testStarted(Description d) {
        failed = false;
        System.out.println("#  RUN           " + d.getMethodName());
    }

    @Override
    public void testFailure(Failure f) {
        failed = true;
        for (String line : f.getTrace().split("\n"))
            System.out.println("# " + line);
    }

    @Override
    public void testFinished(Description d) {
        n++;
        System.out.println((failed ? "not ok " : "ok ") + n + " " + d.getMethodName());
    }

    public static void main(String[] args) throws Exception {
        Class<?> cls = Class.forName(args[0]);
        Request req = Request.aClass(cls);
        int count = req.getRunner().testCount();
        System.out.println("TAP version 13");
        System.out.println("1.." + count);
        JUnitCore core = new JUnitCore();
        core.addListener(new TapRunner());
        Result r = core.run(req);
        System.out.println("# Totals: pass:" + (r.getRunCount() - r.getFailureCount())
                           + " fail:" + r.getFailureCount() + " xfail:0 xpass:0 skip:0 error:0");
        System.exit(r.wasSuccessful() ? 0 : 1);
    }
}
