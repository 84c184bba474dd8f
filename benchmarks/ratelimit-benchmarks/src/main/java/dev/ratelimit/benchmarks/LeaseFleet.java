package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 32's fleet measurement ({@code --leases SECONDS}): four limiter JVMs, each with its own Lettuce
 * connection to the runner's private {@code redis-server}, reserve for 10,000 spread tenants against one
 * hot shared budget (a model's cap: requests and tokens per minute), first charged in the store on every
 * request, then leased ({@link Leasing#auto()}), for the same duration. Each JVM counts the store calls
 * that touch the budget's keys in a {@link CountingStore}; at the end the runner reads the budget's usage
 * (what the store counts, leases included) against what the JVMs admitted, before and after they return
 * their leases.
 *
 * <p>Each request reserves 1 request and 200 to 1,999 tokens and commits 50 to 100 % of its estimate, as
 * the gateway does with a completion's usage. Nothing binds: the tenant's windows and the cap are far
 * above what a run reaches, so the figures are the cost of admitted requests.
 */
final class LeaseFleet {

    static final int INSTANCES = 4;
    static final int WARM_UP_SECONDS = 5;
    static final Window CAP_REQUESTS = Window.of(1_000_000, Duration.ofMinutes(1));
    static final Window CAP_TOKENS = Window.tokens(1_000_000_000, Duration.ofMinutes(1));
    static final SharedBudget CAP = new SharedBudget("model:gpt-4o", List.of(CAP_REQUESTS, CAP_TOKENS));
    static final Tier TENANT = Tier.of(
            "tenant", Window.of(100_000, Duration.ofMinutes(1)), Window.tokens(100_000_000, Duration.ofMinutes(1)));

    private LeaseFleet() {}

    /** One mode's figures, summed over the JVMs. */
    record Row(
            String mode,
            int seconds,
            long admittedMeasured,
            long rejectedMeasured,
            long budgetCallsMeasured,
            long reserveCallsMeasured,
            long settleCallsMeasured,
            long leaseCallsMeasured,
            long callsMeasured,
            long admittedTotal,
            long tokensTotal,
            long budgetCallsTotal,
            long outstandingRequests,
            long outstandingTokens,
            long usedRequestsAtEnd,
            long usedTokensAtEnd,
            long usedRequestsAfterReturn,
            long usedTokensAfterReturn,
            List<Long> perInstanceAdmitted) {

        double perSecond() {
            return admittedMeasured / (double) seconds;
        }

        double budgetCallsPerThousand() {
            return 1_000.0 * budgetCallsMeasured / admittedMeasured;
        }
    }

    /**
     * Runs the fleet twice on {@code redis}, not leased then leased, and prints the table.
     *
     * @param seconds the measured seconds of each run (after {@value #WARM_UP_SECONDS} s of warm-up)
     * @param threads the blocking threads of each JVM
     */
    static List<Row> run(RedisServer redis, int seconds, int threads) throws Exception {
        if (seconds + WARM_UP_SECONDS >= 55) {
            throw new IllegalArgumentException(
                    "a run must end within the cap's minute: at most " + (54 - WARM_UP_SECONDS) + " measured seconds");
        }
        List<Row> rows = new ArrayList<>();
        for (String mode : List.of("direct", "leased")) {
            redis.call("FLUSHALL");
            rows.add(runMode(redis, mode, seconds, threads));
        }
        Machine after = Machine.now(false);
        System.out.println();
        System.out.println("load average after: " + after.loadBefore());
        System.out.println(table(rows, threads));
        return rows;
    }

    static String table(List<Row> rows, int threads) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%d JVMs x %d threads, measured %d s after %d s of warm-up%n%n",
                INSTANCES,
                threads,
                rows.get(0).seconds(),
                WARM_UP_SECONDS));
        out.append("| Cap | Admitted/s (4 JVMs) | Store calls on the cap's keys per 1,000 admitted"
                + " (reserve + settle + lease take + return) | All store calls per admitted | Rejected |\n");
        out.append("|---|---:|---|---:|---:|\n");
        for (Row row : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %,.0f | **%.2f** (%.1f + %.1f + %.2f) | %.2f | %d |%n",
                    row.mode().equals("leased") ? "leased, `Leasing.auto()`" : "not leased",
                    row.perSecond(),
                    row.budgetCallsPerThousand(),
                    1_000.0 * row.reserveCallsMeasured() / row.admittedMeasured(),
                    1_000.0 * row.settleCallsMeasured() / row.admittedMeasured(),
                    1_000.0 * row.leaseCallsMeasured() / row.admittedMeasured(),
                    row.callsMeasured() / (double) row.admittedMeasured(),
                    row.rejectedMeasured()));
        }
        out.append(
                "\n| Cap | Admitted in the run (warm-up included): requests, tokens | Cap's requests counted at the end"
                        + " | Idle (counted − admitted) | Leases outstanding (the bound) | Tokens: idle / bound"
                        + " | Counted − admitted after `returnLeases()` (requests, tokens) |\n");
        out.append("|---|---:|---:|---:|---:|---|---|\n");
        for (Row row : rows) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %,d, %,d | %,d | %,d | %,d | %,d / %,d | %,d, %,d |%n",
                    row.mode().equals("leased") ? "leased" : "not leased",
                    row.admittedTotal(),
                    row.tokensTotal(),
                    row.usedRequestsAtEnd(),
                    row.usedRequestsAtEnd() - row.admittedTotal(),
                    row.outstandingRequests(),
                    row.usedTokensAtEnd() - row.tokensTotal(),
                    row.outstandingTokens(),
                    row.usedRequestsAfterReturn() - row.admittedTotal(),
                    row.usedTokensAfterReturn() - row.tokensTotal()));
        }
        out.append("\nPer JVM admitted (measured): ");
        for (Row row : rows) {
            out.append(row.mode()).append(' ').append(row.perInstanceAdmitted()).append("; ");
        }
        return out.toString();
    }

    private static Row runMode(RedisServer redis, String mode, int seconds, int threads) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        String classPath = System.getProperty("java.class.path");
        long startAt = System.currentTimeMillis() + 10_000;
        List<Process> workers = new ArrayList<>();
        List<BufferedReader> outputs = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            Process process = new ProcessBuilder(
                            java,
                            "-Xms256m",
                            "-Xmx512m",
                            "-cp",
                            classPath,
                            LeaseFleet.class.getName(),
                            Integer.toString(redis.port()),
                            mode,
                            Integer.toString(seconds),
                            Integer.toString(threads),
                            Long.toString(startAt),
                            Integer.toString(i))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            workers.add(process);
            outputs.add(new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
        }
        BenchmarkRunner.log("fleet (" + mode + "): " + INSTANCES + " JVMs started, pids "
                + workers.stream().map(Process::pid).toList());
        try {
            List<Map<String, Long>> results = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                results.add(readLine(outputs.get(i), "RESULT", i));
            }
            long[] atEnd = usage(redis);
            for (Process worker : workers) {
                Writer in = new OutputStreamWriter(worker.getOutputStream(), StandardCharsets.UTF_8);
                in.write("return\n");
                in.flush();
            }
            List<Map<String, Long>> returned = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                returned.add(readLine(outputs.get(i), "RETURNED", i));
            }
            long[] afterReturn = usage(redis);
            for (Process worker : workers) {
                if (!worker.waitFor(30, TimeUnit.SECONDS)) {
                    worker.destroy();
                }
            }
            long admittedMeasured = sum(results, "admittedMeasured");
            Row row = new Row(
                    mode,
                    seconds,
                    admittedMeasured,
                    sum(results, "rejectedMeasured"),
                    sum(results, "budgetCallsMeasured"),
                    sum(results, "reservesMeasured"),
                    sum(results, "settlesMeasured"),
                    sum(results, "leaseCallsMeasured"),
                    sum(results, "callsMeasured"),
                    sum(results, "admittedTotal"),
                    sum(results, "tokensTotal"),
                    sum(results, "budgetCallsTotal"),
                    sum(results, "outstandingRequests"),
                    sum(results, "outstandingTokens"),
                    atEnd[0],
                    atEnd[1],
                    afterReturn[0],
                    afterReturn[1],
                    results.stream().map(r -> r.get("admittedMeasured")).toList());
            BenchmarkRunner.log(String.format(
                    Locale.ROOT,
                    "  %s: %,.0f admitted/s, %.2f cap calls per 1,000 admitted; idle %d requests (bound %d);"
                            + " returns: %d",
                    mode,
                    row.perSecond(),
                    row.budgetCallsPerThousand(),
                    row.usedRequestsAtEnd() - row.admittedTotal(),
                    row.outstandingRequests(),
                    sum(returned, "returns")));
            return row;
        } finally {
            for (Process worker : workers) {
                if (worker.isAlive()) {
                    worker.destroyForcibly();
                }
            }
        }
    }

    private static long sum(List<Map<String, Long>> results, String key) {
        long total = 0;
        for (Map<String, Long> result : results) {
            total += result.getOrDefault(key, 0L);
        }
        return total;
    }

    private static Map<String, Long> readLine(BufferedReader output, String tag, int index) throws IOException {
        String line;
        while ((line = output.readLine()) != null) {
            if (line.startsWith(tag + " ")) {
                Map<String, Long> values = new HashMap<>();
                for (String field : line.substring(tag.length() + 1).trim().split(" ")) {
                    int eq = field.indexOf('=');
                    values.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
                }
                return values;
            }
            BenchmarkRunner.log("  jvm " + index + ": " + line);
        }
        throw new IllegalStateException("JVM " + index + " ended without " + tag);
    }

    /** The cap's requests and tokens as the store counts them now (leases included). */
    private static long[] usage(RedisServer redis) {
        RedisClient client = RedisClient.create(redis.uri());
        try (CloseableWindowStore store = LettuceWindowStore.create(client)) {
            RateLimiter limiter =
                    SlidingWindowRateLimiter.builder(store).failOpen(false).build();
            long requests = -1;
            long tokens = -1;
            for (Decision.Usage usage : limiter.usage(CAP)) {
                if (usage.window().equals(CAP_REQUESTS)) {
                    requests = usage.used();
                } else if (usage.window().equals(CAP_TOKENS)) {
                    tokens = usage.used();
                }
            }
            return new long[] {requests, tokens};
        } finally {
            client.shutdown();
        }
    }

    /**
     * One limiter JVM: {@code <port> <direct|leased> <seconds> <threads> <startAtEpochMillis> <index>}. Prints
     * {@code RESULT key=value...} at the end, then waits for {@code return} on its input, returns its leases,
     * prints {@code RETURNED ...} and exits.
     */
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        if (port == 6379) {
            throw new IllegalStateException("Refusing port 6379, the shared Redis");
        }
        boolean leased = args[1].equals("leased");
        int seconds = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        long startAt = Long.parseLong(args[4]);
        SharedBudget cap = leased ? CAP.leased(Leasing.auto()) : CAP;
        RedisClient client = RedisClient.create("redis://" + BenchRedis.HOST + ":" + port);
        CloseableWindowStore redisStore = LettuceWindowStore.builder(client)
                .connectTimeout(LettuceStore.PATIENT_CONNECT)
                .build();
        CountingStore store = new CountingStore(redisStore);
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).failOpen(false).build();
        limiter.usage(Workload.user(0), TENANT); // connects before the start
        long warmEnd = startAt + WARM_UP_SECONDS * 1_000L;
        long end = warmEnd + seconds * 1_000L;
        AtomicLong admitted = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong tokens = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long wait = startAt - System.currentTimeMillis();
        if (wait < 0) {
            System.out.println("late start by " + -wait + " ms");
        } else {
            Thread.sleep(wait);
        }
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(
                    () -> {
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        try {
                            while (System.currentTimeMillis() < end) {
                                long estimate = 200 + random.nextInt(1_800);
                                Reservation reservation = limiter.reserve(
                                        Workload.user(random.nextInt(Workload.USERS)),
                                        TENANT,
                                        Amounts.tokens(estimate),
                                        List.of(cap));
                                if (reservation.decision().allowed()) {
                                    long actual = estimate / 2 + random.nextLong(estimate / 2 + 1);
                                    reservation
                                            .commit(Amounts.tokens(actual))
                                            .toCompletableFuture()
                                            .join();
                                    admitted.incrementAndGet();
                                    tokens.addAndGet(actual);
                                } else {
                                    rejected.incrementAndGet();
                                }
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "fleet-worker-" + t);
            worker.start();
            workers.add(worker);
        }
        Thread.sleep(Math.max(0, warmEnd - System.currentTimeMillis()));
        long[] atWarmEnd = snapshot(store, admitted, rejected);
        Thread.sleep(Math.max(0, end - System.currentTimeMillis()));
        long[] atEnd = snapshot(store, admitted, rejected);
        for (Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(2);
        }
        long[] outstanding = store.outstanding(System.currentTimeMillis(), CAP_REQUESTS.lengthMillis());
        System.out.println("RESULT admittedMeasured=" + (atEnd[0] - atWarmEnd[0])
                + " rejectedMeasured=" + (atEnd[1] - atWarmEnd[1])
                + " budgetCallsMeasured=" + (atEnd[2] - atWarmEnd[2])
                + " reservesMeasured=" + (atEnd[3] - atWarmEnd[3])
                + " settlesMeasured=" + (atEnd[4] - atWarmEnd[4])
                + " leaseCallsMeasured=" + (atEnd[5] - atWarmEnd[5])
                + " callsMeasured=" + (atEnd[6] - atWarmEnd[6])
                + " admittedTotal=" + admitted.get()
                + " tokensTotal=" + tokens.get()
                + " budgetCallsTotal=" + store.budgetCalls()
                + " outstandingRequests=" + outstanding[0]
                + " outstandingTokens=" + outstanding[1]);
        System.out.flush();
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String command = input.readLine();
        if ("return".equals(command)) {
            long before = store.leasesReturned.get();
            limiter.returnLeases();
            limiter.awaitSettlements(Duration.ofSeconds(10));
            System.out.println("RETURNED returns=" + (store.leasesReturned.get() - before));
            System.out.flush();
        }
        redisStore.close();
        client.shutdown();
        System.exit(0);
    }

    private static long[] snapshot(CountingStore store, AtomicLong admitted, AtomicLong rejected) {
        return new long[] {
            admitted.get(),
            rejected.get(),
            store.budgetCalls(),
            store.budgetReserves.get(),
            store.budgetSettles.get(),
            store.leaseCalls(),
            store.calls.get()
        };
    }
}
