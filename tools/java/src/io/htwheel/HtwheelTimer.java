// SPDX-License-Identifier: (GPL-2.0 OR MIT)
package io.htwheel;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Timer} whose wheel is the kernel's: each instance is one open
 * file of {@code /dev/htwheel}, and a single worker thread sleeps in
 * {@code poll()} on it until a timeout is due, so an idle timer costs no
 * wake-ups and a tick never drifts.  A drop-in for Netty's
 * {@code HashedWheelTimer}: a server switches by writing
 * {@code new HtwheelTimer()} where it had {@code new HashedWheelTimer()}.
 *
 * <p>The constructors take the same arguments as HashedWheelTimer's and
 * throw the same exceptions; {@code tickDuration} becomes the device's tick
 * and {@code ticksPerWheel} its buckets per level (HTW_IOC_SETUP), which the
 * kernel may round; {@code maxPendingTimeouts} is checked here, as
 * HashedWheelTimer checks it, and given to the kernel as its limit.  The
 * no-argument constructor takes the module's defaults (see htwheel(4)).
 *
 * <p>Timers are armed and cancelled through libhtwheel's handle API
 * (HTW_IOC_SCHEDULE, HTW_IOC_CANCEL), one system call per newTimeout() and
 * per cancel().  A timeout whose cancel() returned true never runs.
 */
public class HtwheelTimer implements Timer {
    private static final InternalLogger logger =
        InternalLoggerFactory.getInstance(HtwheelTimer.class);
    private static final AtomicInteger INSTANCE_COUNTER = new AtomicInteger();
    private static final AtomicBoolean WARNED_TOO_MANY_INSTANCES = new AtomicBoolean();
    private static final int INSTANCE_COUNT_LIMIT = 64;
    /** The cookie of the record stop() schedules to wake the worker. */
    private static final long WAKE_COOKIE = 0;
    private static final int BATCH = 256;

    private final long handle;
    private final long tickNs;
    private final int slots;
    private final int levels;
    private final long maxPendingTimeouts;
    private final Thread workerThread;
    private final AtomicLong pendingTimeouts = new AtomicLong();
    private final AtomicLong nextCookie = new AtomicLong(1);
    private final ConcurrentHashMap<Long, HtwTimeout> timeouts = new ConcurrentHashMap<>();
    private final Object lifecycle = new Object();
    private volatile boolean stopped;
    private boolean closed;

    public HtwheelTimer() {
        this(Executors.defaultThreadFactory());
    }

    public HtwheelTimer(long tickDuration, TimeUnit unit) {
        this(Executors.defaultThreadFactory(), tickDuration, unit);
    }

    public HtwheelTimer(long tickDuration, TimeUnit unit, int ticksPerWheel) {
        this(Executors.defaultThreadFactory(), tickDuration, unit, ticksPerWheel);
    }

    public HtwheelTimer(ThreadFactory threadFactory) {
        this(threadFactory, 0, TimeUnit.NANOSECONDS, 0, true, -1, false);
    }

    public HtwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit) {
        this(threadFactory, tickDuration, unit, 512);
    }

    public HtwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
                        int ticksPerWheel) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, true);
    }

    public HtwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
                        int ticksPerWheel, boolean leakDetection) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection, -1);
    }

    /**
     * @param maxPendingTimeouts newTimeout() throws RejectedExecutionException
     *        once this many timeouts are pending; 0 or less for no limit
     *        (but the kernel's, max_pending and max_user_timers)
     * @throws NullPointerException if threadFactory or unit is null
     * @throws IllegalArgumentException if tickDuration or ticksPerWheel is
     *         not positive, ticksPerWheel is above 2^30, or the device
     *         refuses the geometry
     * @throws IllegalStateException if the device cannot be opened, naming
     *         the limit (max_user_instances) when that is why
     */
    public HtwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
                        int ticksPerWheel, boolean leakDetection, long maxPendingTimeouts) {
        this(threadFactory, tickDuration, unit, ticksPerWheel, leakDetection,
             maxPendingTimeouts, true);
    }

    private HtwheelTimer(ThreadFactory threadFactory, long tickDuration, TimeUnit unit,
                         int ticksPerWheel, boolean leakDetection, long maxPendingTimeouts,
                         boolean checked) {
        if (threadFactory == null)
            throw new NullPointerException("threadFactory");
        if (unit == null)
            throw new NullPointerException("unit");
        if (checked) {
            if (tickDuration <= 0)
                throw new IllegalArgumentException(
                    "tickDuration must be greater than 0: " + tickDuration);
            if (ticksPerWheel <= 0)
                throw new IllegalArgumentException(
                    "ticksPerWheel must be greater than 0: " + ticksPerWheel);
            if (ticksPerWheel > 1073741824)
                throw new IllegalArgumentException(
                    "ticksPerWheel may not be greater than 2^30: " + ticksPerWheel);
        }
        this.maxPendingTimeouts = maxPendingTimeouts;
        long[] geometry = new long[3];
        // One more for the kernel: the record stop() arms to wake the worker.
        long h = Native.open(unit.toNanos(tickDuration), ticksPerWheel,
                             maxPendingTimeouts > 0 ? maxPendingTimeouts + 1 : 0, geometry);
        if (h < 0)
            throw openError((int) -h, tickDuration, unit, ticksPerWheel);
        handle = h;
        tickNs = geometry[0];
        slots = (int) geometry[1];
        levels = (int) geometry[2];
        workerThread = threadFactory.newThread(this::work);
        if (workerThread == null) {
            Native.close(h);
            throw new IllegalStateException("threadFactory returned no thread");
        }
        if (INSTANCE_COUNTER.incrementAndGet() > INSTANCE_COUNT_LIMIT &&
            WARNED_TOO_MANY_INSTANCES.compareAndSet(false, true))
            reportTooManyInstances();
        workerThread.start();
    }

    private static RuntimeException openError(int errno, long tickDuration, TimeUnit unit,
                                              int ticksPerWheel) {
        switch (errno) {
        case Native.EMFILE:
            return new IllegalStateException(
                "/dev/htwheel refused another instance: this user holds max_user_instances ("
                + readParameter("max_user_instances") + ") files of the device;"
                + " share an HtwheelTimer or raise"
                + " /sys/module/htwheel/parameters/max_user_instances");
        case Native.EINVAL:
            return new IllegalArgumentException(
                "/dev/htwheel refused the geometry: tickDuration " + tickDuration + " " + unit
                + ", ticksPerWheel " + ticksPerWheel);
        case Native.ENOENT:
            return new IllegalStateException(
                "/dev/htwheel does not exist: is the htwheel module loaded?");
        default:
            return new IllegalStateException(
                "cannot open /dev/htwheel: " + Native.strerror(errno) + " (errno " + errno + ")");
        }
    }

    private static String readParameter(String name) {
        try {
            return new String(Files.readAllBytes(
                Paths.get("/sys/module/htwheel/parameters", name))).trim();
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static void reportTooManyInstances() {
        if (logger.isErrorEnabled())
            logger.error("You are creating too many " + HtwheelTimer.class.getSimpleName()
                         + " instances. " + HtwheelTimer.class.getSimpleName()
                         + " is a shared resource that must be reused across the JVM,"
                         + " so that only a few instances are created.");
    }

    /** The device's tick in effect, in nanoseconds. */
    public long tickNanos() {
        return tickNs;
    }

    /** The device's buckets per wheel level in effect. */
    public int ticksPerWheel() {
        return slots;
    }

    /** The device's wheel levels. */
    public int levels() {
        return levels;
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        if (task == null)
            throw new NullPointerException("task");
        if (unit == null)
            throw new NullPointerException("unit");
        long pending = pendingTimeouts.incrementAndGet();
        if (maxPendingTimeouts > 0 && pending > maxPendingTimeouts) {
            pendingTimeouts.decrementAndGet();
            throw new RejectedExecutionException("Number of pending timeouts (" + pending
                + ") is greater than or equal to maximum allowed pending timeouts ("
                + maxPendingTimeouts + ")");
        }
        long delayNs = Math.max(unit.toNanos(delay), 0);
        HtwTimeout t = new HtwTimeout(task, nextCookie.getAndIncrement());
        timeouts.put(t.cookie, t);
        int ret;
        synchronized (lifecycle) {
            if (stopped) {
                ret = 0;
            } else {
                long[] c = { t.cookie }, d = { delayNs }, hd = new long[1];
                ret = Native.schedule(handle, c, d, hd, 1);
                t.handle = hd[0];
            }
        }
        if (ret == 1)
            return t;
        timeouts.remove(t.cookie);
        pendingTimeouts.decrementAndGet();
        if (ret == 0)
            throw new IllegalStateException("cannot be started once stopped");
        if (-ret == Native.EDQUOT || -ret == Native.ENOSPC)
            throw new RejectedExecutionException("/dev/htwheel refused another timeout: "
                + Native.strerror(-ret) + " (max_pending or max_user_timers)");
        throw new IllegalStateException("HTW_IOC_SCHEDULE: " + Native.strerror(-ret));
    }

    @Override
    public Set<Timeout> stop() {
        if (Thread.currentThread() == workerThread)
            throw new IllegalStateException(HtwheelTimer.class.getSimpleName()
                + ".stop() cannot be called from " + TimerTask.class.getSimpleName());
        synchronized (lifecycle) {
            if (closed)
                return Collections.emptySet();
            if (!stopped) {
                stopped = true;
                INSTANCE_COUNTER.decrementAndGet();
            }
            // A record due now wakes the worker, which sees stopped.
            Native.schedule(handle, new long[] { WAKE_COOKIE }, new long[] { 0 },
                            new long[1], 1);
        }
        boolean interrupted = false;
        while (workerThread.isAlive()) {
            try {
                workerThread.join(100);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted)
            Thread.currentThread().interrupt();
        Set<Timeout> unprocessed = new HashSet<>();
        synchronized (lifecycle) {
            if (closed)
                return Collections.emptySet();
            long[] c = new long[BATCH];
            while (Native.drain(handle, c, BATCH) > 0) {
                // Cancels the rest in the kernel; the map says which are left.
            }
            closed = true;
            Native.close(handle);
        }
        for (HtwTimeout t : timeouts.values())
            if (t.state.get() == HtwTimeout.ST_INIT)
                unprocessed.add(t);
        timeouts.clear();
        return Collections.unmodifiableSet(unprocessed);
    }

    /** Timeouts scheduled and neither run nor cancelled. */
    public long pendingTimeouts() {
        return pendingTimeouts.get();
    }

    private void work() {
        long[] cookies = new long[BATCH];
        long[] expired = new long[BATCH];
        while (!stopped) {
            int n = Native.waitRead(handle, cookies, expired, BATCH);
            if (n < 0) {
                logger.error("reading /dev/htwheel: " + Native.strerror(-n));
                return;
            }
            for (int i = 0; i < n && !stopped; i++) {
                HtwTimeout t = timeouts.remove(cookies[i]);
                if (t != null)
                    t.expire();
            }
        }
    }

    private final class HtwTimeout implements Timeout {
        static final int ST_INIT = 0;
        static final int ST_CANCELLED = 1;
        static final int ST_EXPIRED = 2;

        final TimerTask task;
        final long cookie;
        volatile long handle;
        final AtomicInteger state = new AtomicInteger(ST_INIT);

        HtwTimeout(TimerTask task, long cookie) {
            this.task = task;
            this.cookie = cookie;
        }

        @Override
        public Timer timer() {
            return HtwheelTimer.this;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return state.get() == ST_EXPIRED;
        }

        @Override
        public boolean isCancelled() {
            return state.get() == ST_CANCELLED;
        }

        /*
         * The state decides, not the kernel: once it is CANCELLED the worker
         * skips the record even if the timer fired before HTW_IOC_CANCEL.
         */
        @Override
        public boolean cancel() {
            if (!state.compareAndSet(ST_INIT, ST_CANCELLED))
                return false;
            pendingTimeouts.decrementAndGet();
            timeouts.remove(cookie);
            synchronized (lifecycle) {
                if (!closed)
                    Native.cancel(HtwheelTimer.this.handle, new long[] { handle },
                                  new int[1], 1);
            }
            return true;
        }

        void expire() {
            if (!state.compareAndSet(ST_INIT, ST_EXPIRED))
                return;
            pendingTimeouts.decrementAndGet();
            try {
                task.run(this);
            } catch (Throwable th) {
                if (logger.isWarnEnabled())
                    logger.warn("An exception was thrown by " + TimerTask.class.getSimpleName()
                                + '.', th);
            }
        }

        @Override
        public String toString() {
            return "HtwTimeout(cookie " + cookie + ", " +
                (isCancelled() ? "cancelled" : isExpired() ? "expired" : "pending") + ")";
        }
    }
}
