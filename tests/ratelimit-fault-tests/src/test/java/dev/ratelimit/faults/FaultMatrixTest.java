package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisSentinel;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault matrix: each fault under steady load (8 blocking threads and 32 asynchronous checks in
 * flight over 200 users, 50 per hour each, so most checks are rejected), on a private topology,
 * with both drivers, the limiter failing open with the default circuit breaker. Each row records
 * over-admissions against the exact model (at most 50 non-degraded admissions per user), degraded
 * decisions, the p99 and the maximum latency of checks started during the fault, the time from
 * Redis accepting connections again to the first non-degraded decision (and, where the application's own
 * command shares the store's client, to the first of those commands to succeed), and threads, connections
 * and heap (used, after a GC) under load just before the fault and three seconds after it ended. The rows are written to {@code target/reliability/results.md}; {@code
 * docs/reliability.md} shows them. Run with {@code ./mvnw -B -Pfaults -pl tests/ratelimit-fault-tests
 * -am verify}.
 *
 * <p>Assertions hold the targets where it sets one: zero over-admissions wherever Redis
 * kept its data, and bounded growth of threads and connections.
 */
@Tag("faults")
class FaultMatrixTest {

    private static final int USERS = 200;
    private static final long LIMIT = 50;
    private static final List<Row> ROWS = Collections.synchronizedList(new ArrayList<>());

    /** One measured fault. */
    record Row(
            String fault,
            Driver driver,
            long checks,
            long overAdmissions,
            long degraded,
            double p99Millis,
            double maxMillis,
            double recoveryMillis,
            double applicationRecoveryMillis,
            int threadsBefore,
            int threadsAfter,
            long connectionsBefore,
            long connectionsAfter,
            long heapBeforeMb,
            long heapAfterMb) {}

    /** What a fault does; returns the nanos at which Redis accepts work again. */
    @FunctionalInterface
    interface Fault {
        long inject() throws Exception;
    }

    /**
     * A topology under test.
     *
     * @param application the application's own command on the store's client, measured for recovery
     *     too, or {@code null}
     */
    record Topology(
            CloseableWindowStore store,
            Supplier<RedisServer> primary,
            AutoCloseable resources,
            @Nullable Callable<?> application) {

        Topology(CloseableWindowStore store, Supplier<RedisServer> primary, AutoCloseable resources) {
            this(store, primary, resources, null);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void frozen10s(Driver driver) throws Exception {
        Row row = onStandalone(driver, List.of(), "1 frozen 10 s (SIGSTOP/SIGCONT)", redis -> {
            Faults.freeze(redis);
            Thread.sleep(10_000);
            Faults.thaw(redis);
        });
        assertThat(row.overAdmissions()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void restartWithoutPersistence(Driver driver) throws Exception {
        // counts are lost: the bound is one more limit per user and window, asserted below
        Row row = onStandalone(driver, List.of(), "2a restart, no persistence (3 s down)", redis -> {
            redis.stop();
            Thread.sleep(3_000);
            redis.startAgain();
        });
        assertThat(row.overAdmissions()).isLessThanOrEqualTo(USERS * LIMIT);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void restartWithAof(Driver driver) throws Exception {
        Row row = onStandalone(
                driver,
                List.of("--appendonly", "yes", "--appendfsync", "always"),
                "2b SIGKILL + restart, AOF appendfsync always (3 s down)",
                redis -> {
                    redis.kill();
                    Thread.sleep(3_000);
                    redis.startAgain();
                });
        assertThat(row.overAdmissions()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void restartWithTheApplicationsConnectionOnTheSameClient(Driver driver) throws Exception {
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"))) {
            Driver.Shared shared = driver.sharedClient(redis);
            Row row = measure(
                    "2c SIGKILL + restart, AOF appendfsync always (3 s down), the application's own connection on the same client",
                    driver,
                    new Topology(shared.store(), () -> redis, shared.store(), shared.application()),
                    () -> {
                        redis.kill();
                        Thread.sleep(3_000);
                        redis.startAgain();
                        return System.nanoTime();
                    });
            assertThat(row.overAdmissions()).isZero();
            assertThat(row.recoveryMillis())
                    .as("the limiter decides exactly again")
                    .isNotNegative();
            assertThat(row.applicationRecoveryMillis())
                    .as("the application's own commands work again")
                    .isNotNegative();
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void clientKill(Driver driver) throws Exception {
        Row row = onStandalone(
                driver,
                List.of(),
                "3a CLIENT KILL TYPE normal",
                redis -> redis.call("CLIENT", "KILL", "TYPE", "normal"));
        assertThat(row.overAdmissions()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void clientPauseWrite(Driver driver) throws Exception {
        Row row = onStandalone(driver, List.of(), "3b CLIENT PAUSE 3000 WRITE", redis -> {
            redis.call("CLIENT", "PAUSE", "3000", "WRITE");
            Thread.sleep(3_000);
        });
        assertThat(row.overAdmissions()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void slowServer(Driver driver) throws Exception {
        Row row = onStandalone(
                driver, List.of("--enable-debug-command", "yes"), "3c slow server (DEBUG SLEEP 2)", redis -> {
                    try (RespClient raw = redis.connect()) {
                        raw.call("DEBUG", "SLEEP", "2");
                    }
                });
        assertThat(row.overAdmissions()).isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void outOfMemory(Driver driver) throws Exception {
        Row row = onStandalone(
                driver, List.of("--maxmemory-policy", "noeviction"), "4 over maxmemory, noeviction (3 s)", redis -> {
                    Faults.exhaustMemory(redis);
                    Thread.sleep(3_000);
                    Faults.restoreMemory(redis);
                });
        assertThat(row.overAdmissions()).isZero();
        assertThat(row.degraded()).as("OOM is a failure, never a silent allow").isPositive();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void scriptFlush(Driver driver) throws Exception {
        Row row = onStandalone(driver, List.of(), "5a SCRIPT FLUSH ×20 in 2 s", redis -> {
            for (int i = 0; i < 20; i++) {
                redis.call("SCRIPT", "FLUSH");
                Thread.sleep(100);
            }
        });
        assertThat(row.overAdmissions()).isZero();
        assertThat(row.degraded()).as("a flushed script cache is invisible").isZero();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void scriptsDenied(Driver driver) throws Exception {
        Row row = onStandalone(
                driver, List.of(), "5b EVALSHA/EVAL denied by ACL (2 s)", redis -> denied(redis, "-evalsha", "-eval"));
        assertThat(row.overAdmissions()).isZero();
        assertThat(row.degraded()).isPositive();
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void timeFails(Driver driver) throws Exception {
        Row row = onStandalone(driver, List.of(), "5c TIME denied by ACL (2 s)", redis -> denied(redis, "-time"));
        assertThat(row.overAdmissions()).isZero();
        assertThat(row.degraded()).isPositive();
    }

    private static void denied(RedisServer redis, String... rules) throws InterruptedException {
        List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", "default"));
        command.addAll(List.of(rules));
        redis.call(command.toArray(String[]::new));
        Thread.sleep(2_000);
        redis.call("ACL", "SETUSER", "default", "+@all");
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void sentinelFailover(Driver driver) throws Exception {
        try (RedisSentinel sentinel = RedisSentinel.start(List.of())) {
            CloseableWindowStore store = driver.sentinel(sentinel);
            measure(
                    "6a Sentinel failover (primary SIGKILLed)",
                    driver,
                    new Topology(store, sentinel::primary, store),
                    () -> {
                        sentinel.killPrimary();
                        return System.nanoTime();
                    });
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void clusterFailover(Driver driver) throws Exception {
        try (RedisCluster cluster = RedisCluster.startWithReplicas(List.of())) {
            CloseableWindowStore store = driver.cluster(cluster);
            String victim = "ratelimit:{" + "probe" + "}:3600";
            measure(
                    "6b Cluster failover (1 of 3 masters SIGKILLed)",
                    driver,
                    new Topology(store, () -> cluster.masters().get(0), store),
                    () -> {
                        cluster.killMasterOf(victim);
                        return System.nanoTime();
                    });
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void hundredFaults(Driver driver) throws Exception {
        Row row = onStandalone(driver, List.of(), "100 faults (CLIENT KILL and 200 ms freezes, alternating)", redis -> {
            for (int i = 0; i < 100; i++) {
                if (i % 2 == 0) {
                    redis.call("CLIENT", "KILL", "TYPE", "normal");
                } else {
                    Faults.freeze(redis);
                    Thread.sleep(200);
                    Faults.thaw(redis);
                }
                Thread.sleep(300);
            }
        });
        assertThat(row.overAdmissions()).isZero();
        assertThat(row.threadsAfter()).as("threads after 100 faults").isLessThanOrEqualTo(row.threadsBefore() + 8);
        assertThat(row.connectionsAfter())
                .as("connections after 100 faults")
                .isLessThanOrEqualTo(row.connectionsBefore() + 8);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void fourProcesses(Driver driver) throws Exception {
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"))) {
            String prefix = "procs-" + UUID.randomUUID().toString().substring(0, 8) + "-u";
            List<Process> workers = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    workers.add(new ProcessBuilder(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-Xmx128m",
                                    "-XX:TieredStopAtLevel=1",
                                    // the worker's stdout is its protocol: no perf-data file to contend
                                    // for (a PID reused across namespaces locks it, and the JVM warns),
                                    // and the JVM's own warnings on stderr, which is discarded
                                    "-XX:-UsePerfData",
                                    "-Xlog:disable",
                                    "-Xlog:all=warning:stderr",
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    FaultWorker.class.getName(),
                                    driver.name(),
                                    Integer.toString(redis.port()),
                                    prefix,
                                    Integer.toString(USERS),
                                    Long.toString(LIMIT))
                            .redirectError(ProcessBuilder.Redirect.DISCARD)
                            .start());
                }
                List<java.io.BufferedReader> outputs = new ArrayList<>();
                for (Process worker : workers) {
                    java.io.BufferedReader output = new java.io.BufferedReader(new java.io.InputStreamReader(
                            worker.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
                    outputs.add(output);
                    assertThat(output.readLine()).isEqualTo(FaultWorker.READY);
                }
                long start = System.nanoTime();
                redis.kill();
                Thread.sleep(3_000);
                redis.startAgain();
                Thread.sleep(3_000);
                long[] admitted = new long[USERS];
                long degraded = 0;
                for (int i = 0; i < workers.size(); i++) {
                    java.io.Writer stop = new java.io.OutputStreamWriter(
                            workers.get(i).getOutputStream(), java.nio.charset.StandardCharsets.UTF_8);
                    stop.write(FaultWorker.STOP + "\n");
                    stop.flush();
                    String[] result = outputs.get(i).readLine().split(" ");
                    assertThat(result[0]).isEqualTo(FaultWorker.RESULT);
                    degraded += Long.parseLong(result[1]);
                    for (int u = 0; u < USERS; u++) {
                        admitted[u] += Long.parseLong(result[2 + u]);
                    }
                }
                long over = 0;
                for (long count : admitted) {
                    over += Math.max(0, count - LIMIT);
                }
                ROWS.add(new Row(
                        "7 four JVMs, SIGKILL + restart with AOF always (3 s down)",
                        driver,
                        -1,
                        over,
                        degraded,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        Double.NaN,
                        -1,
                        -1,
                        -1,
                        -1,
                        -1,
                        -1));
                assertThat(over)
                        .as("over-admissions of four limiter instances sharing one Redis")
                        .isZero();
                assertThat(System.nanoTime() - start).isPositive();
            } finally {
                workers.forEach(Process::destroyForcibly);
            }
        }
    }

    /** What a fault does to one server; Redis accepts work again when it returns. */
    @FunctionalInterface
    interface ServerFault {
        void inject(RedisServer redis) throws Exception;
    }

    /** Measures a fault on a standalone server started with {@code arguments}. */
    private static Row onStandalone(Driver driver, List<String> arguments, String name, ServerFault fault)
            throws Exception {
        try (RedisServer redis = RedisServer.start(arguments)) {
            CloseableWindowStore store = driver.standalone(redis);
            return measure(name, driver, new Topology(store, () -> redis, store), () -> {
                fault.inject(redis);
                return System.nanoTime();
            });
        }
    }

    private static Row measure(String name, Driver driver, Topology topology, Fault fault) throws Exception {
        try (AutoCloseable resources = topology.resources()) {
            RateLimiter limiter = SlidingWindowRateLimiter.builder(topology.store())
                    .name("faults")
                    .build();
            Load load =
                    new Load(limiter, "fault-" + UUID.randomUUID().toString().substring(0, 8) + "-u", USERS, LIMIT);
            load.start(8, 32, 2_000);
            Application application = topology.application() == null ? null : Application.start(topology.application());
            Thread.sleep(1_500); // every connection the load needs is open
            int threadsBefore = threads();
            long connectionsBefore = connections(topology.primary().get());
            long heapBefore = heapMb();
            long faultStart = System.nanoTime();
            long recovered = fault.inject();
            Thread.sleep(3_000);
            int threadsAfter = threads();
            long connectionsAfter = connections(topology.primary().get());
            long heapAfter = heapMb();
            load.stop();
            double applicationRecovery = application == null ? Double.NaN : application.stop(recovered);
            List<Load.Sample> samples = load.samples();
            long degraded = samples.stream().filter(Load.Sample::degraded).count();
            long[] during = samples.stream()
                    .filter(s -> s.startNanos() >= faultStart && s.startNanos() <= recovered)
                    .mapToLong(Load.Sample::latencyNanos)
                    .sorted()
                    .toArray();
            double p99 = during.length == 0
                    ? 0
                    : during[(int) Math.min(during.length - 1, Math.ceil(during.length * 0.99) - 1)] / 1e6;
            double max = during.length == 0 ? 0 : during[during.length - 1] / 1e6;
            double recovery = samples.stream()
                    .filter(s -> s.startNanos() >= recovered && !s.degraded() && !s.failed())
                    .mapToLong(Load.Sample::startNanos)
                    .min()
                    .stream()
                    .mapToDouble(first -> Math.max(0, first - recovered) / 1e6)
                    .findFirst()
                    .orElse(-1);
            Row row = new Row(
                    name,
                    driver,
                    samples.size(),
                    load.overAdmissions(),
                    degraded,
                    p99,
                    max,
                    recovery,
                    applicationRecovery,
                    threadsBefore,
                    threadsAfter,
                    connectionsBefore,
                    connectionsAfter,
                    heapBefore,
                    heapAfter);
            ROWS.add(row);
            return row;
        }
    }

    /**
     * The application's own commands on the store's client, one after another on one thread, as an
     * application's request threads would send them.
     */
    private static final class Application {

        private final Callable<?> command;
        private final Thread thread;
        private final List<long[]> successes = Collections.synchronizedList(new ArrayList<>());
        private volatile boolean running = true;

        private Application(Callable<?> command) {
            this.command = command;
            this.thread = new Thread(this::run, "fault-application");
        }

        static Application start(Callable<?> command) {
            Application application = new Application(command);
            application.thread.setDaemon(true);
            application.thread.start();
            return application;
        }

        private void run() {
            while (running) {
                try {
                    command.call();
                    successes.add(new long[] {System.nanoTime()});
                } catch (Exception e) {
                    // Redis is down or the connection is being re-established: the next command tries again
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** Stops and returns the time from {@code recovered} to the first command to succeed after it, in ms. */
        double stop(long recovered) throws InterruptedException {
            running = false;
            thread.join(10_000);
            synchronized (successes) {
                return successes.stream().mapToLong(done -> done[0]).filter(done -> done >= recovered).min().stream()
                        .mapToDouble(done -> (done - recovered) / 1e6)
                        .findFirst()
                        .orElse(-1);
            }
        }
    }

    private static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    private static long heapMb() {
        System.gc();
        Runtime runtime = Runtime.getRuntime();
        return (runtime.totalMemory() - runtime.freeMemory()) / (1024 * 1024);
    }

    /** Client connections of the server, less the one asking. */
    private static long connections(RedisServer server) {
        try {
            String list = String.valueOf(server.call("CLIENT", "LIST", "TYPE", "normal"));
            return Arrays.stream(list.split("\n"))
                            .filter(line -> !line.isBlank())
                            .count()
                    - 1;
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private static String millis(double value) {
        return Double.isNaN(value) || value < 0 ? "–" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String pair(long before, long after) {
        return before < 0 ? "–" : before + "→" + after;
    }

    @AfterAll
    static void report() throws IOException {
        Path directory = Path.of(System.getProperty("ratelimit.reliability.report", "target/reliability"));
        Files.createDirectories(directory);
        List<Row> rows = new ArrayList<>(ROWS);
        rows.sort((a, b) -> a.fault().equals(b.fault())
                ? a.driver().compareTo(b.driver())
                : a.fault().compareTo(b.fault()));
        StringBuilder table = new StringBuilder();
        table.append("| fault | driver | checks | over-admissions | degraded | p99 during fault (ms)"
                + " | max during fault (ms) | recovery (ms) | application recovery (ms) | threads before→after"
                + " | connections before→after | heap MB before→after |\n");
        table.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
        for (Row row : rows) {
            table.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |%n",
                    row.fault(),
                    row.driver().name().toLowerCase(Locale.ROOT),
                    row.checks() < 0 ? "–" : Long.toString(row.checks()),
                    row.overAdmissions(),
                    row.degraded(),
                    millis(row.p99Millis()),
                    millis(row.maxMillis()),
                    millis(row.recoveryMillis()),
                    millis(row.applicationRecoveryMillis()),
                    pair(row.threadsBefore(), row.threadsAfter()),
                    pair(row.connectionsBefore(), row.connectionsAfter()),
                    pair(row.heapBeforeMb(), row.heapAfterMb())));
        }
        String load = Files.exists(Path.of("/proc/loadavg"))
                ? Files.readString(Path.of("/proc/loadavg")).trim()
                : "?";
        table.append("\nLoad average at the end of the run (/proc/loadavg): ")
                .append(load)
                .append('\n');
        Files.writeString(directory.resolve("results.md"), table.toString());
    }
}
