package dev.ratelimit.benchmarks;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import dev.ratelimit.redis.jedis.JedisWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.regex.Pattern;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RedissonClient;

/**
 * Runs every benchmark of the report in one go on a private {@code redis-server} and writes {@code
 * docs/benchmarks.md} and {@code docs/benchmarks.png}.
 *
 * <p>Phases: the {@code redis-benchmark} ceiling, the JMH figures (ceilings, ours, peers), round
 * trips and Redis CPU per decision, the runaway client, and Redis memory per tenant. Options: {@code
 * --quick} (one short iteration each, for smoke runs), {@code --focused} (only the seed script's
 * ceiling and the JMH figures of the spread-key and async ratios; prints the ratios and writes no
 * report), {@code --cost} (only the Redis CPU per decision, printed), {@code --instructions} (only
 * the Redis instructions per decision, printed; the server must run under callgrind, as {@code
 * instructions.sh} starts it), {@code --seed N} (only the single check against the seed's own
 * script on Lettuce, blocking and 64 in flight, N interleaved rounds, best of N, printed), {@code --memory} (only the Redis memory per tenant: ours per tier and the token budgets, printed), {@code
 * --leases SECONDS} (only issue 32's fleet: four limiter JVMs on one hot shared budget, not leased then
 * leased, each run SECONDS measured; {@code --lease-threads N} threads per JVM, 4 by default; see {@link
 * LeaseFleet}), {@code --lease-edges} (only the over-admission count across window edges, in-memory and
 * Redis; see {@link LeaseEdges}), {@code --lease-simulation SECONDS} (only the simulation of 10, 100 and
 * 1,000 leasing instances, or {@code --lease-instances N,N,...}, no Redis, {@code --lease-rate} requests/s for
 * the fleet, 20,000 by default; see
 * {@link LeaseSimulation}), {@code --only REGEX} (JMH
 * figures whose id matches), {@code --docs DIR}
 * (where to write the report; default {@code docs}), {@code --no-report}, {@code --jfr DIR} (record
 * each JMH fork with Java Flight Recorder into {@code DIR/<id>.jfr}).
 */
public final class BenchmarkRunner {

    private static final String S = Workload.SPREAD;
    private static final String C = Workload.CONTENDED;

    private BenchmarkRunner() {}

    /**
     * Runs the benchmarks.
     *
     * @param args the options described in the class documentation
     * @throws Exception if a phase fails
     */
    public static void main(String[] args) throws Exception {
        Settings settings = Settings.parse(args);
        long start = System.nanoTime();
        Machine machine = Machine.now(settings.quick);
        log("machine: " + machine.describe());
        if (settings.leaseSimulationSeconds > 0) {
            log("leased shared budgets: simulation of N instances over the in-memory store, no Redis");
            LeaseSimulation.run(settings.leaseSimulationSeconds, settings.leaseRate, settings.leaseInstances);
            log("load average after: " + Machine.load());
            return;
        }
        Path outcomes = Files.createTempFile("ratelimit-bench-outcomes", ".tsv");
        try (RedisServer redis = RedisServer.start()) {
            String redisVersion =
                    String.valueOf(redis.call("INFO", "server")).replaceAll("(?s).*redis_version:([^\\r\\n]+).*", "$1");
            log("private redis-server " + redisVersion + " on " + redis.uri() + " (dir " + redis.directory() + ")");
            machine = machine.withRedis(redisVersion);

            if (settings.leaseSeconds > 0) {
                log("leased shared budgets: " + LeaseFleet.INSTANCES + " limiter JVMs, one hot shared budget");
                LeaseFleet.run(redis, settings.leaseSeconds, settings.leaseThreads);
                return;
            }
            if (settings.leaseEdges) {
                log("leased shared budgets: over-admission across window edges, injected clock");
                LeaseEdges.run(redis);
                log("load average after: " + Machine.load());
                return;
            }
            if (settings.instructions) {
                log("Redis instructions per decision only (redis-server under callgrind)");
                ScriptCost.measure(redis, ScriptCost.DECISIONS, ScriptCost.instructions(redis));
                return;
            }
            if (settings.seedRounds > 0) {
                seedRatios(settings, redis.port(), outcomes, machine);
                return;
            }
            if (settings.costOnly) {
                log("Redis CPU per decision only");
                ScriptCost.measure(redis, ScriptCost.DECISIONS);
                return;
            }
            if (settings.memoryOnly) {
                log("Redis memory per tenant only");
                for (Tier tier : TierPolicy.defaults().tiers().values()) {
                    progress(MemoryPerTenant.ours(redis, tier));
                }
                MemoryPerTenant.budgets(redis);
                return;
            }
            log("phase 1/4: redis-benchmark ceiling");
            List<RedisBenchmarkTool.Result> ceilings = new ArrayList<>();
            long scale = settings.quick ? 10 : 1;
            ceilings.add(progress(RedisBenchmarkTool.runSeed(
                    redis, "seed script: redis-benchmark -P 16, 4 clients (64 in flight)", 4, 16, 600_000 / scale)));
            if (!settings.focused) {
                ceilings.addAll(otherCeilings(redis, scale));
            }

            log("phase 2/4: JMH");
            List<JmhRun> runs = runs().stream()
                    .filter(run -> settings.only.matcher(run.id()).find())
                    .filter(run ->
                            !settings.focused || FOCUSED.matcher(run.id()).matches())
                    .toList();
            List<JmhRun.Figures> figures = jmhPhase(runs, settings, redis.port(), outcomes);

            List<RoundTrips.Result> roundTrips = new ArrayList<>();
            List<ScriptCost.Result> scriptCost = new ArrayList<>();
            List<RunawayClient.Result> runaway = new ArrayList<>();
            List<MemoryPerTenant.Result> memory = new ArrayList<>();
            List<MemoryPerTenant.Result> budgets = new ArrayList<>();
            if (!settings.focused) {
                log("phase 3/4: round trips per decision (MONITOR + INFO commandstats), Redis CPU per decision,"
                        + " the runaway client");
                roundTrips = roundTrips(redis, settings.quick ? 200 : 2_000);
                scriptCost = ScriptCost.measure(redis, settings.quick ? 300 : ScriptCost.DECISIONS);
                runaway = RunawayClient.measure(redis, Duration.ofSeconds(settings.quick ? 2 : 5));

                log("phase 4/4: Redis memory per tenant at full budget");
                for (Tier tier : TierPolicy.defaults().tiers().values()) {
                    memory.add(progress(MemoryPerTenant.ours(redis, tier)));
                    memory.add(progress(MemoryPerTenant.bucket4j(redis, tier)));
                    memory.add(progress(MemoryPerTenant.redisson(redis, tier)));
                }
                budgets = MemoryPerTenant.budgets(redis);
            }

            machine = machine.finished();
            String outcomeLines = Files.readString(outcomes, StandardCharsets.UTF_8);
            log("outcomes per trial (benchmark, parameters, rejected, failed):\n" + outcomeLines);
            Report report = new Report(
                            machine,
                            settings.describe(),
                            ceilings,
                            figures,
                            roundTrips,
                            memory,
                            outcomeLines,
                            Duration.ofNanos(System.nanoTime() - start))
                    .extras(scriptCost, runaway, budgets);
            if (settings.writeReport && !settings.focused) {
                Files.createDirectories(settings.docs);
                report.write(settings.docs.resolve("benchmarks.md"), settings.docs.resolve("benchmarks.png"));
                log("wrote " + settings.docs.resolve("benchmarks.md") + " and "
                        + settings.docs.resolve("benchmarks.png"));
            }
            System.out.println();
            System.out.println("load average before / after: " + machine.loadBefore() + " / " + machine.loadAfter());
            System.out.println(report.ratiosMarkdown());
        } finally {
            Files.deleteIfExists(outcomes);
        }
        log("done in " + Duration.ofNanos(System.nanoTime() - start).toSeconds() + " s; private redis-server stopped");
    }

    /**
     * The single check against the seed's own script on one driver (Lettuce), for {@code --seed N}:
     * blocking on one thread and asynchronous with 64 in flight, ours and the seed's script side by side,
     * in N interleaved rounds (seed, ours, seed async, ours async in odd rounds; ours first in each pair
     * in even rounds), best of N per figure.
     */
    static List<JmhRun> seedRuns() {
        Class<?> seed = LettuceEvalshaBenchmark.class;
        Class<?> ours = LettuceStoreBenchmark.class;
        return List.of(
                new JmhRun(
                        "seed-lettuce-1t", "ceiling", "seed's script, Lettuce EVALSHA sync", seed, "blocking", 1, S, 1),
                new JmhRun("ours-lettuce-1t", "ours", "ours: Lettuce blocking check", ours, "blocking", 1, S, 1),
                JmhRun.async("seed-lettuce-async", "ceiling", "seed's script, Lettuce EVALSHA async", seed, S, 1),
                JmhRun.async("ours-lettuce-async", "ours", "ours: Lettuce checkAsync", ours, S, 1));
    }

    private static void seedRatios(Settings settings, int port, Path outcomes, Machine machine)
            throws RunnerException, IOException {
        List<JmhRun> runs = seedRuns();
        double[] best = new double[runs.size()];
        StringBuilder rounds = new StringBuilder();
        for (int round = 1; round <= settings.seedRounds; round++) {
            log("seed round " + round + "/" + settings.seedRounds);
            // every other round runs ours before the seed's script, so a drift in the machine's load
            // during a round does not always favour the same side of a ratio
            boolean oursFirst = round % 2 == 0;
            List<JmhRun> ordered = oursFirst ? List.of(runs.get(1), runs.get(0), runs.get(3), runs.get(2)) : runs;
            List<JmhRun.Figures> measured = jmhPhase(ordered, settings, port, outcomes);
            List<JmhRun.Figures> figures =
                    oursFirst ? List.of(measured.get(1), measured.get(0), measured.get(3), measured.get(2)) : measured;
            rounds.append(String.format(Locale.ROOT, "| %d |", round));
            for (int i = 0; i < runs.size(); i++) {
                double rate = figures.get(i).decisionsPerSecond();
                best[i] = Math.max(best[i], rate);
                rounds.append(String.format(Locale.ROOT, " %,.0f |", rate));
            }
            rounds.append(String.format(
                    Locale.ROOT,
                    " %.3f× | %.3f× |%n",
                    figures.get(1).decisionsPerSecond() / figures.get(0).decisionsPerSecond(),
                    figures.get(3).decisionsPerSecond() / figures.get(2).decisionsPerSecond()));
        }
        Machine finished = machine.finished();
        System.out.println();
        System.out.println("load average before / after: " + finished.loadBefore() + " / " + finished.loadAfter());
        System.out.println(
                "| Round | seed sync | ours check | seed async | ours checkAsync | sync ratio | async ratio |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        System.out.print(rounds);
        System.out.println(String.format(
                Locale.ROOT,
                "| best of %d | %,.0f | %,.0f | %,.0f | %,.0f | %.3f× | %.3f× |",
                settings.seedRounds,
                best[0],
                best[1],
                best[2],
                best[3],
                best[1] / best[0],
                best[3] / best[2]));
    }

    /** The JMH figures of {@code --focused}: the spread-key ratio at 8 threads and the async ceiling ratio. */
    static final Pattern FOCUSED =
            Pattern.compile("ours-lettuce-8t|ours-jedis-8t|bucket4j-8t|redisson-8t|ours-lettuce-async");

    private static List<RedisBenchmarkTool.Result> otherCeilings(RedisServer redis, long scale) {
        List<RedisBenchmarkTool.Result> ceilings = new ArrayList<>();
        ceilings.add(
                progress(RedisBenchmarkTool.run(redis, "redis-benchmark, 1 client", 1, 1, false, 100_000 / scale)));
        ceilings.add(
                progress(RedisBenchmarkTool.run(redis, "redis-benchmark, 8 clients", 8, 1, false, 200_000 / scale)));
        ceilings.add(
                progress(RedisBenchmarkTool.run(redis, "redis-benchmark, 64 clients", 64, 1, false, 300_000 / scale)));
        ceilings.add(progress(RedisBenchmarkTool.run(
                redis, "redis-benchmark -P 16, 4 clients (64 in flight)", 4, 16, false, 600_000 / scale)));
        ceilings.add(
                progress(RedisBenchmarkTool.run(redis, "redis-benchmark, 8 clients", 8, 1, true, 200_000 / scale)));
        ceilings.add(progress(RedisBenchmarkTool.run(
                redis, "redis-benchmark -P 16, 4 clients (64 in flight)", 4, 16, true, 600_000 / scale)));
        return ceilings;
    }

    private static List<JmhRun.Figures> jmhPhase(List<JmhRun> runs, Settings settings, int port, Path outcomes)
            throws RunnerException, IOException {
        List<JmhRun.Figures> figures = new ArrayList<>();
        int index = 0;
        for (JmhRun run : runs) {
            index++;
            log(String.format(
                    Locale.ROOT,
                    "JMH %d/%d: %s (%s, %s, %d window(s), %s)",
                    index,
                    runs.size(),
                    run.id(),
                    run.contender(),
                    run.keys(),
                    run.windows(),
                    run.isAsync() ? "64 in flight" : run.threads() + " thread(s)"));
            int othersBefore = Machine.countOtherJvms();
            JmhRun.Figures measured = jmh(run, settings, port, outcomes);
            measured = new JmhRun.Figures(
                    measured.run(),
                    measured.decisionsPerSecond(),
                    measured.p50Micros(),
                    measured.p99Micros(),
                    measured.samples(),
                    Math.max(othersBefore, Machine.countOtherJvms()));
            log(String.format(
                    Locale.ROOT,
                    "  -> %,.0f decisions/s, p50 %.1f us, p99 %.1f us; other JVMs seen: %d",
                    measured.decisionsPerSecond(),
                    measured.p50Micros(),
                    measured.p99Micros(),
                    measured.otherJvms()));
            figures.add(measured);
        }

        return figures;
    }

    /** Every JMH figure of the report. */
    static List<JmhRun> runs() {
        Class<?> le = LettuceEvalshaBenchmark.class;
        Class<?> je = JedisEvalshaBenchmark.class;
        Class<?> ls = LettuceStoreBenchmark.class;
        Class<?> js = JedisStoreBenchmark.class;
        Class<?> im = InMemoryStoreBenchmark.class;
        Class<?> b4 = Bucket4jBenchmark.class;
        Class<?> rd = RedissonBenchmark.class;
        String ceiling = "ceiling";
        String ours = "ours";
        String peer = "peer";
        List<JmhRun> runs = new ArrayList<>();
        // Each ratio's two figures run back to back, so drift in the machine's load hits both alike.
        // spread keys, one window
        runs.add(new JmhRun("evalsha-lettuce-1t", ceiling, "plain EVALSHA, Lettuce sync", le, "blocking", 1, S, 1));
        runs.add(new JmhRun("ours-lettuce-1t", ours, "ours: Lettuce blocking", ls, "blocking", 1, S, 1));
        runs.add(new JmhRun("evalsha-lettuce-8t", ceiling, "plain EVALSHA, Lettuce sync", le, "blocking", 8, S, 1));
        runs.add(new JmhRun("ours-lettuce-8t", ours, "ours: Lettuce blocking", ls, "blocking", 8, S, 1));
        runs.add(JmhRun.async("evalsha-lettuce-async", ceiling, "plain EVALSHA, Lettuce async", le, S, 1));
        runs.add(JmhRun.async("ours-lettuce-async", ours, "ours: Lettuce async", ls, S, 1));
        runs.add(new JmhRun("evalsha-jedis-1t", ceiling, "plain EVALSHA, Jedis", je, "blocking", 1, S, 1));
        runs.add(new JmhRun("ours-jedis-1t", ours, "ours: Jedis blocking", js, "blocking", 1, S, 1));
        runs.add(new JmhRun("evalsha-jedis-8t", ceiling, "plain EVALSHA, Jedis", je, "blocking", 8, S, 1));
        runs.add(new JmhRun("ours-jedis-8t", ours, "ours: Jedis blocking", js, "blocking", 8, S, 1));
        runs.add(new JmhRun("bucket4j-8t", peer, "Bucket4j Lettuce proxy", b4, "blocking", 8, S, 1));
        runs.add(new JmhRun("redisson-8t", peer, "Redisson RRateLimiter", rd, "blocking", 8, S, 1));
        runs.add(new JmhRun("bucket4j-1t", peer, "Bucket4j Lettuce proxy", b4, "blocking", 1, S, 1));
        runs.add(new JmhRun("redisson-1t", peer, "Redisson RRateLimiter", rd, "blocking", 1, S, 1));
        runs.add(new JmhRun("ours-inmemory-1t", ours, "ours: in-memory", im, "check", 1, S, 1));
        runs.add(new JmhRun("ours-inmemory-8t", ours, "ours: in-memory", im, "check", 8, S, 1));
        // one contended key, one window
        runs.add(new JmhRun("evalsha-lettuce-8t-c", ceiling, "plain EVALSHA, Lettuce sync", le, "blocking", 8, C, 1));
        runs.add(new JmhRun("ours-lettuce-8t-c", ours, "ours: Lettuce blocking", ls, "blocking", 8, C, 1));
        runs.add(new JmhRun("bucket4j-8t-c", peer, "Bucket4j Lettuce proxy", b4, "blocking", 8, C, 1));
        runs.add(new JmhRun("evalsha-jedis-8t-c", ceiling, "plain EVALSHA, Jedis", je, "blocking", 8, C, 1));
        runs.add(new JmhRun("ours-jedis-8t-c", ours, "ours: Jedis blocking", js, "blocking", 8, C, 1));
        runs.add(new JmhRun("redisson-8t-c", peer, "Redisson RRateLimiter", rd, "blocking", 8, C, 1));
        runs.add(JmhRun.async("ours-lettuce-async-c", ours, "ours: Lettuce async", ls, C, 1));
        // spread keys, two windows (minute + day, all or nothing)
        runs.add(new JmhRun("evalsha-lettuce-1t-2w", ceiling, "plain EVALSHA, Lettuce sync", le, "blocking", 1, S, 2));
        runs.add(new JmhRun("ours-lettuce-1t-2w", ours, "ours: Lettuce blocking", ls, "blocking", 1, S, 2));
        runs.add(new JmhRun("evalsha-lettuce-8t-2w", ceiling, "plain EVALSHA, Lettuce sync", le, "blocking", 8, S, 2));
        runs.add(new JmhRun("ours-lettuce-8t-2w", ours, "ours: Lettuce blocking", ls, "blocking", 8, S, 2));
        runs.add(JmhRun.async("evalsha-lettuce-async-2w", ceiling, "plain EVALSHA, Lettuce async", le, S, 2));
        runs.add(JmhRun.async("ours-lettuce-async-2w", ours, "ours: Lettuce async", ls, S, 2));
        runs.add(new JmhRun("evalsha-jedis-8t-2w", ceiling, "plain EVALSHA, Jedis", je, "blocking", 8, S, 2));
        runs.add(new JmhRun("ours-jedis-8t-2w", ours, "ours: Jedis blocking", js, "blocking", 8, S, 2));
        runs.add(new JmhRun("bucket4j-8t-2w", peer, "Bucket4j Lettuce proxy", b4, "blocking", 8, S, 2));
        runs.add(new JmhRun("redisson-8t-2w", peer, "Redisson RRateLimiter", rd, "blocking", 8, S, 2));
        runs.add(new JmhRun("ours-inmemory-8t-2w", ours, "ours: in-memory", im, "check", 8, S, 2));
        // token budgets: reserve in request and token windows against today's check, back to back
        Class<?> tb = ReserveBenchmark.class;
        runs.add(new JmhRun(
                "tb-check-8t", ours, "ours: Lettuce check, requests per minute and day", tb, "blocking", 8, S, 2));
        runs.add(new JmhRun(
                "tb-reserve-exact-8t",
                ours,
                "ours: Lettuce reserve, requests and tokens per minute and day, exact",
                tb,
                "blocking",
                8,
                S,
                4));
        runs.add(new JmhRun(
                "tb-reserve-precision-8t",
                ours,
                "ours: Lettuce reserve, requests and tokens per minute (exact) and day (1-minute precision)",
                tb,
                "blocking",
                8,
                S,
                4));
        return runs;
    }

    private static JmhRun.Figures jmh(JmhRun run, Settings settings, int port, Path outcomes)
            throws RunnerException, IOException {
        Path json = Files.createTempFile("ratelimit-bench-" + run.id(), ".json");
        Options options = new OptionsBuilder()
                .include("^" + Pattern.quote(run.benchmark().getName() + "." + run.method()) + "$")
                .mode(Mode.SampleTime)
                .timeUnit(TimeUnit.MICROSECONDS)
                .threads(run.threads())
                .forks(settings.forks)
                .warmupIterations(settings.warmupIterations)
                .warmupTime(settings.warmupTime)
                .measurementIterations(settings.measurementIterations)
                .measurementTime(settings.measurementTime)
                .param("keys", run.keys())
                .param("windows", Integer.toString(run.windows()))
                .param("variant", run.variant())
                .jvmArgsAppend(
                        "-D" + BenchRedis.PORT_PROPERTY + "=" + port,
                        "-D" + BenchRedis.OUTCOMES_PROPERTY + "=" + outcomes,
                        "-Xms1g",
                        "-Xmx3g")
                .shouldFailOnError(true)
                .resultFormat(ResultFormatType.JSON)
                .result(json.toString())
                .verbosity(settings.quick ? VerboseMode.SILENT : VerboseMode.NORMAL)
                .build();
        if (settings.jfr != null) {
            options = new OptionsBuilder()
                    .parent(options)
                    .jvmArgsAppend(
                            "-D" + BenchRedis.PORT_PROPERTY + "=" + port,
                            "-D" + BenchRedis.OUTCOMES_PROPERTY + "=" + outcomes,
                            "-Xms1g",
                            "-Xmx3g",
                            "-XX:StartFlightRecording=settings=profile,filename="
                                    + settings.jfr.resolve(run.id() + ".jfr").toAbsolutePath())
                    .build();
        }
        new Runner(options).run();
        try {
            return JmhResults.read(run, json);
        } finally {
            Files.deleteIfExists(json);
        }
    }

    private static List<RoundTrips.Result> roundTrips(RedisServer redis, int perThread) throws Exception {
        List<RoundTrips.Result> results = new ArrayList<>();
        redis.call("FLUSHALL");
        RedisClient lettuce = RedisClient.create(redis.uri());
        redis.clients.jedis.RedisClient jedis = jedisFor(redis);
        RedissonClient redisson = null;
        StatefulRedisConnection<String, byte[]> bucket4jConnection = null;
        StatefulRedisConnection<String, String> plainConnection = null;
        WindowStore lettuceStore = LettuceWindowStore.create(lettuce);
        try {
            RateLimiter oursLettuce = SlidingWindowRateLimiter.builder(lettuceStore)
                    .failOpen(false)
                    .build();
            RateLimiter oursJedis = SlidingWindowRateLimiter.builder(JedisWindowStore.create(jedis))
                    .failOpen(false)
                    .build();
            plainConnection = lettuce.connect();
            RedisCommands<String, String> plain = plainConnection.sync();
            plain.scriptLoad(SlidingWindowScript.source());
            bucket4jConnection = Peers.bucket4jConnection(lettuce);
            ProxyManager<String> proxies = Peers.bucket4j(bucket4jConnection);
            BucketProxy[] buckets = new BucketProxy[Workload.USERS];
            BucketProxy[] tierBuckets = new BucketProxy[Workload.USERS];
            for (int i = 0; i < Workload.USERS; i++) {
                buckets[i] = proxies.builder()
                        .build("bucket4j:" + Workload.user(i), Peers.bucketConfiguration(Workload.ONE_WINDOW));
                tierBuckets[i] = proxies.builder()
                        .build("bucket4j2:" + Workload.user(i), Peers.bucketConfiguration(Workload.TWO_WINDOWS));
            }
            redisson = Peers.redisson();
            int users = 200;
            RRateLimiter[][] redissonLimiters = new RRateLimiter[users][];
            for (int i = 0; i < users; i++) {
                redissonLimiters[i] = new RRateLimiter[] {
                    Peers.redissonLimiter(redisson, Workload.user(i), Workload.MINUTE),
                    Peers.redissonLimiter(redisson, Workload.user(i), Workload.DAY)
                };
            }
            RedissonClient redissonClient = redisson;

            // warm up every contender so connection set-up is not counted
            for (int i = 0; i < 50; i++) {
                oursLettuce.check(Workload.user(i), Workload.TWO_WINDOWS);
                oursJedis.check(Workload.user(i), Workload.TWO_WINDOWS);
                buckets[i].tryConsume(1);
                tierBuckets[i].tryConsume(1);
                redissonLimiters[i][0].tryAcquire();
                redissonLimiters[i][1].tryAcquire();
            }
            for (int t = 0; t < 8; t++) { // let every pooled connection open
                Thread[] warm = new Thread[8];
                for (int w = 0; w < warm.length; w++) {
                    warm[w] = new Thread(() -> {
                        for (int i = 0; i < 20; i++) {
                            oursJedis.check(Workload.user(i), Workload.ONE_WINDOW);
                            redissonLimiters[0][0].tryAcquire();
                        }
                    });
                    warm[w].start();
                }
                for (Thread thread : warm) {
                    thread.join();
                }
            }

            results.add(measure(redis, "plain EVALSHA (Lettuce)", "spread, 1 window, 1 thread", 1, perThread, t -> {
                int user = Workload.next(false);
                plain.evalsha(
                        SlidingWindowScript.sha1(),
                        ScriptOutputType.MULTI,
                        ScriptArgs.keys(user, 1),
                        ScriptArgs.args(ScriptArgs.member(), 1));
            }));
            results.add(measure(
                    redis,
                    "ours: Lettuce",
                    "spread, 1 window, 1 thread",
                    1,
                    perThread,
                    t -> oursLettuce.check(Workload.user(Workload.next(false)), Workload.ONE_WINDOW)));
            results.add(measure(
                    redis,
                    "ours: Lettuce",
                    "spread, 2 windows, 1 thread",
                    1,
                    perThread,
                    t -> oursLettuce.check(Workload.user(Workload.next(false)), Workload.TWO_WINDOWS)));
            results.add(measure(
                    redis,
                    "ours: Lettuce",
                    "contended, 1 window, 8 threads",
                    8,
                    perThread / 4,
                    t -> oursLettuce.check(Workload.user(0), Workload.ONE_WINDOW)));
            results.add(measure(
                    redis,
                    "ours: Jedis",
                    "spread, 1 window, 1 thread",
                    1,
                    perThread,
                    t -> oursJedis.check(Workload.user(Workload.next(false)), Workload.ONE_WINDOW)));
            results.add(measure(
                    redis,
                    "ours: Jedis",
                    "spread, 2 windows, 1 thread",
                    1,
                    perThread,
                    t -> oursJedis.check(Workload.user(Workload.next(false)), Workload.TWO_WINDOWS)));
            results.add(measure(
                    redis,
                    "Bucket4j Lettuce proxy",
                    "spread, 1 window, 1 thread",
                    1,
                    perThread,
                    t -> buckets[Workload.next(false)].tryConsume(1)));
            results.add(measure(
                    redis,
                    "Bucket4j Lettuce proxy",
                    "spread, 2 windows, 1 thread",
                    1,
                    perThread,
                    t -> tierBuckets[Workload.next(false)].tryConsume(1)));
            results.add(measure(
                    redis,
                    "Bucket4j Lettuce proxy",
                    "contended, 1 window, 8 threads",
                    8,
                    perThread / 4,
                    t -> buckets[0].tryConsume(1)));
            results.add(measure(
                    redis,
                    "Redisson RRateLimiter",
                    "spread, 1 window, 1 thread",
                    1,
                    perThread,
                    t ->
                            redissonLimiters[
                                    java.util.concurrent.ThreadLocalRandom.current()
                                            .nextInt(users)][0].tryAcquire()));
            results.add(measure(redis, "Redisson RRateLimiter", "spread, 2 windows, 1 thread", 1, perThread, t -> {
                RRateLimiter[] pair = redissonLimiters[
                        java.util.concurrent.ThreadLocalRandom.current().nextInt(users)];
                if (pair[0].tryAcquire()) {
                    pair[1].tryAcquire();
                }
            }));
            results.add(measure(
                    redis,
                    "Redisson RRateLimiter",
                    "contended, 1 window, 8 threads",
                    8,
                    perThread / 4,
                    t -> redissonLimiters[0][0].tryAcquire()));
            if (redissonClient.isShutdown()) {
                throw new IllegalStateException("Redisson shut down during the round-trip phase");
            }
        } finally {
            if (lettuceStore instanceof AutoCloseable closeable) {
                closeable.close();
            }
            if (plainConnection != null) {
                plainConnection.close();
            }
            if (bucket4jConnection != null) {
                bucket4jConnection.close();
            }
            if (redisson != null) {
                redisson.shutdown();
            }
            jedis.close();
            lettuce.shutdown();
        }
        return results;
    }

    private static redis.clients.jedis.RedisClient jedisFor(RedisServer redis) {
        System.setProperty(BenchRedis.PORT_PROPERTY, Integer.toString(redis.port()));
        return BenchRedis.jedis();
    }

    private static RoundTrips.Result measure(
            RedisServer redis, String label, String workload, int threads, int perThread, IntConsumer decide)
            throws InterruptedException {
        RoundTrips.Result result = RoundTrips.measure(redis, label, workload, threads, perThread, decide);
        log(String.format(
                Locale.ROOT,
                "  %s, %s: %.2f round trips per decision (%s); executed: %s",
                label,
                workload,
                result.roundTrips(),
                result.clientSummary(),
                result.executedSummary()));
        return result;
    }

    static <T> T progressOf(T result) {
        return progress(result);
    }

    private static <T> T progress(T result) {
        log("  " + result);
        return result;
    }

    static void log(String message) {
        System.out.println("[bench " + Instant.now().toString().substring(11, 19) + "] " + message);
        System.out.flush();
    }

    /** Command-line settings. */
    static final class Settings {
        boolean quick;
        boolean focused;
        boolean costOnly;
        boolean instructions;
        boolean memoryOnly;
        int seedRounds;
        int leaseSeconds;
        int leaseThreads = 4;
        boolean leaseEdges;
        int leaseSimulationSeconds;
        double leaseRate = 20_000;
        int[] leaseInstances = {10, 100, 1_000};
        boolean writeReport = true;
        Pattern only = Pattern.compile("");
        Path docs = Path.of("docs");

        @org.jspecify.annotations.Nullable
        Path jfr;

        int forks = 1;
        int warmupIterations = 2;
        TimeValue warmupTime = TimeValue.seconds(2);
        int measurementIterations = 4;
        TimeValue measurementTime = TimeValue.seconds(3);

        static Settings parse(String[] args) {
            Settings settings = new Settings();
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--quick" -> {
                        settings.quick = true;
                        settings.warmupIterations = 1;
                        settings.warmupTime = TimeValue.seconds(1);
                        settings.measurementIterations = 1;
                        settings.measurementTime = TimeValue.seconds(1);
                    }
                    case "--only" -> settings.only = Pattern.compile(args[++i]);
                    case "--focused" -> settings.focused = true;
                    case "--cost" -> settings.costOnly = true;
                    case "--instructions" -> settings.instructions = true;
                    case "--memory" -> settings.memoryOnly = true;
                    case "--seed" -> settings.seedRounds = Integer.parseInt(args[++i]);
                    case "--leases" -> settings.leaseSeconds = Integer.parseInt(args[++i]);
                    case "--lease-threads" -> settings.leaseThreads = Integer.parseInt(args[++i]);
                    case "--lease-edges" -> settings.leaseEdges = true;
                    case "--lease-simulation" -> settings.leaseSimulationSeconds = Integer.parseInt(args[++i]);
                    case "--lease-rate" -> settings.leaseRate = Double.parseDouble(args[++i]);
                    case "--lease-instances" ->
                        settings.leaseInstances = java.util.Arrays.stream(args[++i].split(","))
                                .mapToInt(Integer::parseInt)
                                .toArray();
                    case "--docs" -> settings.docs = Path.of(args[++i]);
                    case "--no-report" -> settings.writeReport = false;
                    case "--jfr" -> settings.jfr = Path.of(args[++i]);
                    default ->
                        throw new IllegalArgumentException("unknown option " + args[i]
                                + "; options: --quick, --focused, --cost, --instructions, --memory, --seed ROUNDS,"
                                + " --leases SECONDS, --lease-threads N, --lease-edges, --lease-simulation SECONDS,"
                                + " --lease-rate REQUESTS_PER_SECOND, --lease-instances N,N,..., --only REGEX,"
                                + " --docs DIR,"
                                + " --no-report, --jfr DIR");
                }
            }
            return settings;
        }

        String describe() {
            return String.format(
                    Locale.ROOT,
                    "JMH %s mode, %d fork, %d warm-up iteration(s) of %s and %d measurement iteration(s) of %s per figure",
                    "SampleTime",
                    forks,
                    warmupIterations,
                    warmupTime,
                    measurementIterations,
                    measurementTime);
        }
    }

    static void writeString(Path path, String text) throws IOException {
        Files.writeString(path, text, StandardCharsets.UTF_8);
    }
}
