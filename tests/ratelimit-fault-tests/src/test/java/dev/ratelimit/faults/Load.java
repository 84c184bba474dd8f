package dev.ratelimit.faults;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Steady load on a limiter: blocking threads and asynchronous checks over many users, each with
 * one hour-long window whose limit the run exceeds. Nothing leaves the window during a run, so the
 * exact model of the traffic is simple: at most {@code limit} non-degraded admissions per user;
 * every admission past it is an over-admission.
 */
final class Load {

    /** One decision: when it started (nanos), how long it took, what it was. */
    record Sample(long startNanos, long latencyNanos, boolean allowed, boolean degraded, boolean failed) {}

    private final RateLimiter limiter;
    private final int users;
    private final long limit;
    private final String prefix;
    private final AtomicLongArray admitted;
    private final ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();

    Load(RateLimiter limiter, String prefix, int users, long limit) {
        this.limiter = limiter;
        this.prefix = prefix;
        this.users = users;
        this.limit = limit;
        this.admitted = new AtomicLongArray(users);
    }

    /** Starts {@code blocking} threads and one thread keeping {@code inFlight} async checks going. */
    void start(int blocking, int inFlight, long pauseMicros) {
        running.set(true);
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < blocking; t++) {
            Thread thread = new Thread(
                    () -> {
                        await(go);
                        while (running.get()) {
                            one(ThreadLocalRandom.current().nextInt(users));
                            pause(pauseMicros);
                        }
                    },
                    "load-" + t);
            thread.setDaemon(true);
            threads.add(thread);
        }
        if (inFlight > 0) {
            Thread async = new Thread(
                    () -> {
                        await(go);
                        java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(inFlight);
                        while (running.get()) {
                            try {
                                if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                                    continue;
                                }
                            } catch (InterruptedException e) {
                                return;
                            }
                            int user = ThreadLocalRandom.current().nextInt(users);
                            long start = System.nanoTime();
                            limiter.checkAsync(prefix + user, limit, Duration.ofHours(1))
                                    .whenComplete((decision, failure) -> {
                                        record(user, start, decision, failure);
                                        slots.release();
                                    });
                            pause(pauseMicros);
                        }
                    },
                    "load-async");
            async.setDaemon(true);
            threads.add(async);
        }
        threads.forEach(Thread::start);
        go.countDown();
    }

    void stop() throws InterruptedException {
        running.set(false);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        threads.clear();
        Thread.sleep(Driver.TIMEOUT.toMillis() * 2); // async checks still in flight
    }

    private void one(int user) {
        long start = System.nanoTime();
        Decision decision = null;
        Throwable failure = null;
        try {
            decision = limiter.check(prefix + user, limit, Duration.ofHours(1));
        } catch (RateLimiterUnavailableException e) {
            failure = e;
        }
        record(user, start, decision, failure);
    }

    private void record(int user, long start, Decision decision, Throwable failure) {
        long latency = System.nanoTime() - start;
        boolean allowed = decision != null && decision.allowed();
        boolean degraded = decision != null && decision.degraded();
        if (allowed && !degraded) {
            admitted.incrementAndGet(user);
        }
        samples.add(new Sample(start, latency, allowed, degraded, failure != null));
    }

    /** Non-degraded admissions beyond the limit, summed over users: what the exact model forbids. */
    long overAdmissions() {
        long over = 0;
        for (int i = 0; i < users; i++) {
            over += Math.max(0, admitted.get(i) - limit);
        }
        return over;
    }

    /** Non-degraded admissions of each user. */
    long[] admittedPerUser() {
        long[] counts = new long[users];
        for (int i = 0; i < users; i++) {
            counts[i] = admitted.get(i);
        }
        return counts;
    }

    /** Decisions let through because the store failed. */
    long degraded() {
        return samples.stream().filter(Sample::degraded).count();
    }

    List<Sample> samples() {
        return List.copyOf(samples);
    }

    private static void await(CountDownLatch go) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pause(long micros) {
        if (micros > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(micros * 1_000);
        }
    }
}
