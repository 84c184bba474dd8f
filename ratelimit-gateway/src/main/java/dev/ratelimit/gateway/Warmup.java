package dev.ratelimit.gateway;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.gateway.admin.HealthCheck;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Warms the store's path before the gateway listens: rounds of uncharged usage reads of every
 * tenant's windows, {@link #PARALLEL} at a time, through a limiter of their own (so a read that is
 * slow or times out counts against no breaker and in no metric of the gateway's), until
 * {@link #CALM_ROUNDS} rounds in a row answered within a tenth of the store timeout, or
 * {@link #BUDGET} passed.
 *
 * <p>Why: a JVM that has just started runs its Redis client, its event loop and the limiter
 * interpreted. On a busy machine the first burst of requests, each a store call, then takes longer
 * than the store timeout, the breaker opens, and the burst is decided without the store (admitted
 * past request and token windows, refused by money windows). Reads go through the same client,
 * connection, script and decoding as decisions, and change nothing in Redis.
 *
 * <p>A store that does not answer the first read is not waited for: readiness already says 503 until
 * it answers ({@link HealthCheck}).
 */
public final class Warmup {

    /** How many reads are in flight at once, as a burst's requests would be. */
    static final int PARALLEL = 8;

    /** Rounds in a row that must answer within a tenth of the store timeout. */
    static final int CALM_ROUNDS = 20;

    /** Rounds at the least, however fast the first ones answer. */
    static final int MIN_ROUNDS = 50;

    /** The longest the warm-up runs; the gateway then listens, warm or not. */
    static final Duration BUDGET = Duration.ofSeconds(20);

    private static final System.Logger LOG = System.getLogger(Warmup.class.getName());

    private Warmup() {}

    /**
     * Runs the warm-up.
     *
     * @param limiter a limiter of the warm-up's own on the gateway's store
     * @param config the configuration whose tenants' windows are read
     * @param storeTimeout the store's command timeout
     * @return how the warm-up ended, for the log
     */
    static String run(RateLimiter limiter, GatewayConfig config, Duration storeTimeout) throws InterruptedException {
        List<Map.Entry<String, TierConfig>> tenants =
                new ArrayList<>(config.tenants().entrySet());
        if (tenants.isEmpty()) {
            return "skipped: no tenants";
        }
        long began = System.nanoTime();
        long calmNanos = storeTimeout.toNanos() / 4;
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL, task -> {
            Thread thread = new Thread(task, "gateway-warm-up");
            thread.setDaemon(true);
            return thread;
        });
        try {
            int rounds = 0;
            int calm = 0;
            long slowest = 0;
            long first = 0;
            while (rounds < MIN_ROUNDS || calm < CALM_ROUNDS) {
                if (System.nanoTime() - began > BUDGET.toNanos()) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "warm-up: the store still took " + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms after "
                                    + BUDGET.toSeconds() + " s of warming; listening anyway");
                    return "stopped at its budget after " + rounds + " rounds";
                }
                List<Future<Long>> reads = new ArrayList<>(PARALLEL);
                for (int i = 0; i < PARALLEL; i++) {
                    Map.Entry<String, TierConfig> tenant = tenants.get((rounds * PARALLEL + i) % tenants.size());
                    reads.add(pool.submit(() -> {
                        long start = System.nanoTime();
                        limiter.usage(tenant.getKey(), tenant.getValue().tier());
                        return System.nanoTime() - start;
                    }));
                }
                slowest = 0;
                for (Future<Long> read : reads) {
                    try {
                        slowest = Math.max(slowest, read.get());
                    } catch (java.util.concurrent.ExecutionException e) {
                        if (e.getCause() instanceof RateLimiterUnavailableException && rounds == 0) {
                            return "skipped: the store did not answer ("
                                    + e.getCause().getMessage() + ")";
                        }
                        slowest = Long.MAX_VALUE; // a read that failed is not calm
                    }
                }
                if (rounds == 0) {
                    first = slowest;
                }
                rounds++;
                calm = slowest <= calmNanos ? calm + 1 : 0;
            }
            return rounds * PARALLEL + " reads (first round's slowest " + TimeUnit.NANOSECONDS.toMillis(first)
                    + " ms) in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began) + " ms";
        } finally {
            pool.shutdownNow();
        }
    }
}
