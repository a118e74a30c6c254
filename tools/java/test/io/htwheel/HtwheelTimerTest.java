// SPDX-License-Identifier: (GPL-2.0 OR MIT)
package io.htwheel;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.netty.util.Timeout;
import io.netty.util.TimerTask;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.After;
import org.junit.Test;

/** io.netty.util.Timer's contract and HashedWheelTimer's, on the device. */
public class HtwheelTimerTest {
    private final List<HtwheelTimer> timers = new ArrayList<>();

    private HtwheelTimer timer(HtwheelTimer t) {
        timers.add(t);
        return t;
    }

    @After
    public void stopAll() {
        for (HtwheelTimer t : timers)
            t.stop();
    }

    @Test(timeout = 10000)
    public void runsTaskNeverEarly() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        int n = 20;
        CountDownLatch done = new CountDownLatch(n);
        AtomicInteger early = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            final long delay = 5 + i * 3;
            final long start = System.nanoTime();
            t.newTimeout(to -> {
                if (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(delay))
                    early.incrementAndGet();
                done.countDown();
            }, delay, TimeUnit.MILLISECONDS);
        }
        assertTrue(done.await(8, TimeUnit.SECONDS));
        assertEquals(0, early.get());
        assertEquals(0, t.pendingTimeouts());
    }

    @Test(timeout = 10000)
    public void expiredTimeoutStates() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Timeout> seen = new AtomicReference<>();
        TimerTask task = to -> {
            seen.set(to);
            done.countDown();
        };
        Timeout to = t.newTimeout(task, 1, TimeUnit.MILLISECONDS);
        assertSame(t, to.timer());
        assertSame(task, to.task());
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertSame(to, seen.get());
        assertTrue(to.isExpired());
        assertFalse(to.isCancelled());
        assertFalse(to.cancel());
    }

    @Test(timeout = 10000)
    public void negativeDelayRunsSoon() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        CountDownLatch done = new CountDownLatch(1);
        t.newTimeout(to -> done.countDown(), -5, TimeUnit.SECONDS);
        assertTrue(done.await(5, TimeUnit.SECONDS));
    }

    @Test(timeout = 10000)
    public void cancelTrueNeverFires() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        int n = 2000;
        AtomicIntegerArray ran = new AtomicIntegerArray(n);
        List<Timeout> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int k = i;
            // Spread over 400 ms: a slow kernel (UML's syscalls) still finds
            // some not yet due when it cancels them.
            list.add(t.newTimeout(to -> ran.incrementAndGet(k), i % 400, TimeUnit.MILLISECONDS));
        }
        boolean[] cancelled = new boolean[n];
        int ncancelled = 0;
        for (int i = 0; i < n; i++) {
            cancelled[i] = list.get(i).cancel();
            if (cancelled[i]) {
                ncancelled++;
                assertTrue(list.get(i).isCancelled());
            }
        }
        // Every timeout is due within 400 ms: wait for the rest to run.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (t.pendingTimeouts() > 0 && System.nanoTime() < deadline)
            Thread.sleep(10);
        Thread.sleep(50);
        assertEquals(0, t.pendingTimeouts());
        assertTrue("no cancel() returned true", ncancelled > 0);
        for (int i = 0; i < n; i++)
            assertEquals("timeout " + i, cancelled[i] ? 0 : 1, ran.get(i));
    }

    @Test(timeout = 10000)
    public void cancelledBeforeDueIsGone() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        AtomicInteger ran = new AtomicInteger();
        Timeout to = t.newTimeout(x -> ran.incrementAndGet(), 50, TimeUnit.MILLISECONDS);
        assertEquals(1, t.pendingTimeouts());
        assertTrue(to.cancel());
        assertFalse(to.cancel());
        assertTrue(to.isCancelled());
        assertFalse(to.isExpired());
        assertEquals(0, t.pendingTimeouts());
        Thread.sleep(150);
        assertEquals(0, ran.get());
    }

    @Test(timeout = 10000)
    public void stopReturnsUnexpired() {
        HtwheelTimer t = new HtwheelTimer(1, TimeUnit.MILLISECONDS);
        Timeout a = t.newTimeout(x -> { }, 1, TimeUnit.HOURS);
        Timeout b = t.newTimeout(x -> { }, 2, TimeUnit.HOURS);
        Timeout c = t.newTimeout(x -> { }, 3, TimeUnit.HOURS);
        assertTrue(c.cancel());
        Set<Timeout> left = t.stop();
        assertEquals(2, left.size());
        assertTrue(left.contains(a));
        assertTrue(left.contains(b));
        assertTrue(t.stop().isEmpty());
    }

    @Test(timeout = 10000)
    public void newTimeoutAfterStopThrows() {
        HtwheelTimer t = new HtwheelTimer();
        t.stop();
        try {
            t.newTimeout(x -> { }, 1, TimeUnit.SECONDS);
            fail("newTimeout after stop() returned");
        } catch (IllegalStateException expected) {
            assertEquals(0, t.pendingTimeouts());
        }
    }

    @Test(timeout = 10000)
    public void stopFromTaskThrows() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        AtomicReference<Throwable> got = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        t.newTimeout(to -> {
            try {
                to.timer().stop();
            } catch (Throwable e) {
                got.set(e);
            }
            done.countDown();
        }, 1, TimeUnit.MILLISECONDS);
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertTrue(got.get() instanceof IllegalStateException);
    }

    @Test(timeout = 10000)
    public void throwingTaskDoesNotKillWorker() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(1, TimeUnit.MILLISECONDS));
        CountDownLatch done = new CountDownLatch(1);
        t.newTimeout(to -> {
            throw new RuntimeException("thrown on purpose by the test");
        }, 1, TimeUnit.MILLISECONDS);
        t.newTimeout(to -> done.countDown(), 20, TimeUnit.MILLISECONDS);
        assertTrue(done.await(5, TimeUnit.SECONDS));
    }

    @Test(timeout = 10000)
    public void maxPendingTimeoutsRejects() throws Exception {
        HtwheelTimer t = timer(new HtwheelTimer(Executors.defaultThreadFactory(), 1,
                                                TimeUnit.MILLISECONDS, 512, true, 2));
        t.newTimeout(x -> { }, 1, TimeUnit.HOURS);
        Timeout b = t.newTimeout(x -> { }, 1, TimeUnit.HOURS);
        try {
            t.newTimeout(x -> { }, 1, TimeUnit.HOURS);
            fail("a third timeout was accepted");
        } catch (RejectedExecutionException expected) {
            assertEquals(2, t.pendingTimeouts());
        }
        assertTrue(b.cancel());
        assertNotNull(t.newTimeout(x -> { }, 1, TimeUnit.HOURS));
        assertEquals(2, t.pendingTimeouts());
    }

    @Test(timeout = 10000)
    public void badArguments() {
        expect(NullPointerException.class, () -> new HtwheelTimer(null));
        expect(NullPointerException.class, () -> new HtwheelTimer(1, null));
        expect(IllegalArgumentException.class, () -> new HtwheelTimer(0, TimeUnit.MILLISECONDS));
        expect(IllegalArgumentException.class, () -> new HtwheelTimer(-1, TimeUnit.MILLISECONDS));
        expect(IllegalArgumentException.class,
               () -> new HtwheelTimer(1, TimeUnit.MILLISECONDS, 0));
        expect(IllegalArgumentException.class,
               () -> new HtwheelTimer(1, TimeUnit.MILLISECONDS, (1 << 30) + 1));
        HtwheelTimer t = timer(new HtwheelTimer());
        expect(NullPointerException.class, () -> t.newTimeout(null, 1, TimeUnit.SECONDS));
        expect(NullPointerException.class, () -> t.newTimeout(x -> { }, 1, null));
        assertEquals(0, t.pendingTimeouts());
    }

    @Test(timeout = 20000)
    public void instanceLimitIsNamed() {
        List<HtwheelTimer> many = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        String msg = null;
        try {
            while (System.nanoTime() < deadline && many.size() < 100000) {
                try {
                    many.add(new HtwheelTimer());
                } catch (IllegalStateException e) {
                    msg = e.getMessage();
                    break;
                }
            }
        } finally {
            for (HtwheelTimer t : many)
                t.stop();
        }
        assertNotNull("the device took " + many.size() + " instances", msg);
        assertTrue(msg, msg.contains("max_user_instances"));
        assertFalse(msg, msg.contains("errno"));
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void expect(Class<? extends Throwable> type, Body body) {
        try {
            body.run();
        } catch (Throwable e) {
            if (type.isInstance(e))
                return;
            throw new AssertionError("expected " + type.getSimpleName() + ", got " + e, e);
        }
        throw new AssertionError("expected " + type.getSimpleName() + ", nothing thrown");
    }
}
