package dev.ratelimit.benchmarks;

import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RedissonClient;

/**
 * Peer: Redisson's {@link RRateLimiter}, one permit per decision, same limits as ours. With two
 * windows a user has two limiters, checked in turn (Redisson has no several-limits-per-key check),
 * so a day rejection can follow a consumed minute permit.
 */
@State(Scope.Benchmark)
public class RedissonBenchmark extends WorkloadState {

    private RRateLimiter[][] limiters = new RRateLimiter[0][];
    private @Nullable RedissonClient client;

    /** Empties Redis and sets every user's rate (setup round trips are not measured). */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        RedissonClient created = Peers.redisson();
        client = created;
        int users = contended ? 1 : Workload.USERS;
        limiters = new RRateLimiter[users][];
        for (int i = 0; i < users; i++) {
            RRateLimiter[] perWindow = new RRateLimiter[checked.size()];
            for (int w = 0; w < perWindow.length; w++) {
                perWindow[w] = Peers.redissonLimiter(created, Workload.user(i), checked.get(w));
            }
            limiters[i] = perWindow;
        }
    }

    /** Shuts the client down and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("Redisson", 0);
        if (client != null) {
            client.shutdown();
        }
    }

    /**
     * Acquires one permit from each of the user's limiters in turn and waits for the answers.
     *
     * @return whether every permit was acquired
     */
    @Benchmark
    public boolean blocking() {
        for (RRateLimiter limiter : limiters[Workload.next(contended)]) {
            if (!limiter.tryAcquire()) {
                rejected.increment();
                return false;
            }
        }
        return true;
    }
}
