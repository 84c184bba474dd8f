package dev.ratelimit.benchmarks;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import io.github.bucket4j.BandwidthBuilder;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntConsumer;

/**
 * Redis CPU per decision: {@code INFO commandstats} {@code usec} of the client's commands divided by
 * the decisions they made, for allowed and rejected decisions, 1 and 2 windows, exact and with
 * precision, for the stores' script (plain {@code EVALSHA}, the stores' keys and arguments), next to
 * Bucket4j's commands, in the same run.
 *
 * <p>Allowed: {@value #USERS} users at random, limits out of reach, every key already written once
 * (a warm-up pass) so the figures are the steady state rather than first writes. Rejected: one user
 * whose windows are full ({@value #FULL} entries against a limit of {@value #FULL}). Each figure is the
 * least of {@value #REPEATS} passes of {@value #DECISIONS} decisions on one thread (on a shared
 * machine, Redis descheduled in the middle of a command only ever adds time); the contenders' passes
 * alternate, on one Redis holding all their keys. Our scripts are sent by
 * a plain blocking client (one thread); Bucket4j through its Lettuce proxy.
 *
 * <p>Two floors run in the same passes, with the same keys and arguments: the script call alone
 * (a script that runs no command) and, for allowed decisions in exact request windows, the commands
 * of the exact log alone (a script that runs them and decides nothing). No script that keeps the
 * exact log's commands can cost Redis less than the second.
 */
final class ScriptCost {

    static final int USERS = 1_000;
    static final int FULL = 10;
    static final int REPEATS = 5;
    static final int DECISIONS = 3_000;
    /**
     * Under callgrind, the milliseconds the scripts' clock moves per allowed decision: the scripts
     * are sent this clock rather than reading {@code TIME}, so what has left a window at each
     * decision, and so the count, does not depend on how fast the machine runs them. At 20 ms the
     * warm-up pass spans a minute: every minute window is in its steady state (entries leaving as
     * fast as they arrive). A rejection's clock stands still, so the full window stays full.
     */
    static final long STEP_MILLIS = 20;

    /** One window of a case: length, limit, tokens or requests, precision (0 exact). */
    record Spec(long lengthMillis, long limit, boolean tokens, long precisionMillis) {
        boolean weighted() {
            return tokens && precisionMillis == 0;
        }
    }

    /**
     * One measured case: Redis's cost per decision for each contender, in the unit of the {@link Meter}
     * that measured it (NaN when not measured). {@code
     * floorCall} is the script call alone ({@link BenchScripts#FLOOR_CALL}), {@code floorCommands} the
     * commands of an allowed exact decision alone ({@link BenchScripts#FLOOR_COMMANDS}; exact request
     * windows, allowed decisions only).
     */
    record Result(
            String decision, String windows, double script, double bucket4j, double floorCall, double floorCommands) {}

    private ScriptCost() {}

    /** What one pass measures: Redis's cost per decision of {@code decisions} calls of {@code decide}. */
    interface Meter {
        double perDecision(RedisServer redis, String label, int decisions, IntConsumer decide)
                throws InterruptedException;

        /** The unit of the figures, as printed. */
        String unit();
    }

    /** Microseconds of Redis's thread per decision, from {@code INFO commandstats}. */
    static final Meter MICROS = new Meter() {
        @Override
        public double perDecision(RedisServer redis, String label, int decisions, IntConsumer decide)
                throws InterruptedException {
            return RoundTrips.measure(redis, label, "cost", 1, decisions, decide)
                    .serverMicros();
        }

        @Override
        public String unit() {
            return "us";
        }
    };

    /** Instructions Redis executes per decision, where it runs under callgrind. */
    static Meter instructions(RedisServer redis) {
        Callgrind callgrind = Callgrind.of(redis.pid());
        return new Meter() {
            @Override
            public double perDecision(RedisServer server, String label, int decisions, IntConsumer decide) {
                return callgrind.perCall(decisions, decide);
            }

            @Override
            public String unit() {
                return "instructions";
            }
        };
    }

    static List<Result> measure(RedisServer redis, int decisions) throws InterruptedException {
        return measure(redis, decisions, MICROS);
    }

    static List<Result> measure(RedisServer redis, int decisions, Meter meter) throws InterruptedException {
        RedisClient client = RedisClient.create(redis.uri());
        List<Result> results = new ArrayList<>();
        try (RespClient plain = redis.connect();
                StatefulRedisConnection<String, byte[]> bucketConnection = Peers.bucket4jConnection(client)) {
            ProxyManager<String> buckets = Peers.bucket4j(bucketConnection);
            long minute = Duration.ofMinutes(1).toMillis();
            long day = Duration.ofDays(1).toMillis();
            long big = 1_000_000_000L;
            Spec minuteExact = new Spec(minute, big, false, 0);
            Spec dayExact = new Spec(day, big, false, 0);
            Spec dayAtMinute = new Spec(day, big, false, minute);
            Spec minuteAtSecond = new Spec(minute, big, false, 1_000);
            Spec tokensExact = new Spec(minute, big * 1_000, true, 0);
            Spec tokensDayAtMinute = new Spec(day, big * 1_000, true, minute);
            String[] labels = {
                "1 window, exact (minute)",
                "2 windows, exact (minute + day)",
                "1 window, precision (day @ 1 min)",
                "2 windows, precision (minute @ 1 s + day @ 1 min)",
                "requests + tokens, exact (minute + minute tokens; reserve 100 tokens)",
                "requests + tokens, precision (day @ 1 min + day tokens @ 1 min; reserve 100 tokens)"
            };
            List<List<Spec>> cases = List.of(
                    List.of(minuteExact),
                    List.of(minuteExact, dayExact),
                    List.of(dayAtMinute),
                    List.of(minuteAtSecond, dayAtMinute),
                    List.of(minuteExact, tokensExact),
                    List.of(dayAtMinute, tokensDayAtMinute));
            for (int c = 0; c < cases.size(); c++) {
                List<Spec> specs = cases.get(c);
                long tokens = specs.stream().anyMatch(Spec::tokens) ? 100 : 0;
                results.add(log(
                        meter,
                        measureCase(
                                meter, redis, plain, buckets, "allowed", labels[c], specs, tokens, false, c < 2,
                                decisions)));
            }
            for (int c = 0; c < 4; c++) {
                List<Spec> specs = new ArrayList<>(cases.get(c));
                Spec first = specs.get(0);
                specs.set(0, new Spec(first.lengthMillis(), FULL, false, first.precisionMillis()));
                results.add(log(
                        meter,
                        measureCase(
                                meter,
                                redis,
                                plain,
                                buckets,
                                "rejected (first window full)",
                                labels[c],
                                specs,
                                0,
                                true,
                                c < 2,
                                decisions)));
            }
        } finally {
            client.shutdown();
        }
        return results;
    }

    private static Result log(Meter meter, Result result) {
        BenchmarkRunner.log(String.format(
                Locale.ROOT,
                "  %s, %s: script %.1f, Bucket4j %.1f %s per decision; floors: the call alone %.1f,"
                        + " the commands alone %.1f",
                result.decision(),
                result.windows(),
                result.script(),
                result.bucket4j(),
                meter.unit(),
                result.floorCall(),
                result.floorCommands()));
        return result;
    }

    /**
     * One case: the script, Bucket4j and the floors set up side by side on one emptied Redis, each warmed, then
     * their passes interleaved, so that a slow spell of the shared machine falls on all of them.
     */
    private static Result measureCase(
            Meter meter,
            RedisServer redis,
            RespClient plain,
            ProxyManager<String> buckets,
            String decision,
            String label,
            List<Spec> specs,
            long tokens,
            boolean rejected,
            boolean withBucket4j,
            int decisions)
            throws InterruptedException {
        redis.call("FLUSHALL");
        // instructions: a clock of the run's own, and users drawn from a fixed seed, so two runs repeat
        boolean repeatable = meter != MICROS;
        IntConsumer script =
                scriptDecide(redis, plain, BenchScripts.CURRENT, specs, tokens, rejected, decisions, repeatable);
        IntConsumer bucket = withBucket4j ? bucketDecide(buckets, specs, rejected, decisions) : null;
        IntConsumer call =
                scriptDecide(redis, plain, BenchScripts.FLOOR_CALL, specs, tokens, rejected, decisions, repeatable);
        boolean exactRequests = specs.stream().allMatch(s -> !s.tokens() && s.precisionMillis() == 0);
        IntConsumer commands = !rejected && exactRequests
                ? scriptDecide(redis, plain, BenchScripts.FLOOR_COMMANDS, specs, tokens, false, decisions, repeatable)
                : null;
        String[] labels = {"script", "Bucket4j", "call alone", "commands alone"};
        IntConsumer[] contenders = {script, bucket, call, commands};
        double[] least = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
        for (int r = 0; r < REPEATS; r++) {
            // being descheduled mid-command only adds time: the least of the passes is the closest to the cost
            for (int i = 0; i < contenders.length; i++) {
                if (contenders[i] != null) {
                    double cost = meter.perDecision(redis, labels[i], decisions, contenders[i]);
                    least[i] = Double.isNaN(least[i]) ? cost : Math.min(least[i], cost);
                }
            }
        }
        return new Result(decision, label, least[0], least[1], least[2], least[3]);
    }

    private static IntConsumer scriptDecide(
            RedisServer redis,
            RespClient plain,
            BenchScripts script,
            List<Spec> specs,
            long tokens,
            boolean rejected,
            int decisions,
            boolean repeatable) {
        redis.call("SCRIPT", "LOAD", script.source());
        java.util.Random seeded = new java.util.Random(42);
        long[] clock = {System.currentTimeMillis()};
        String[][] keys = new String[USERS][];
        for (int u = 0; u < USERS; u++) {
            keys[u] = keys(script.name().toLowerCase(java.util.Locale.ROOT), u, specs);
        }
        IntConsumer decide = t -> {
            int user = rejected ? 0 : (repeatable ? seeded : ThreadLocalRandom.current()).nextInt(USERS);
            String[] k = keys[user];
            String[] a = args(specs, tokens);
            if (repeatable) {
                a[1] = Long.toString(clock[0]);
                clock[0] += rejected ? 0 : STEP_MILLIS;
            }
            String[] command = new String[3 + k.length + a.length];
            command[0] = "EVALSHA";
            command[1] = script.sha1();
            command[2] = Integer.toString(k.length);
            System.arraycopy(k, 0, command, 3, k.length);
            System.arraycopy(a, 0, command, 3 + k.length, a.length);
            if (!(plain.call(command) instanceof List<?>)) {
                throw new IllegalStateException("the script answered no list");
            }
        };
        if (rejected) {
            for (int i = 0; i < FULL; i++) {
                decide.accept(0);
            }
        }
        for (int i = 0; i < decisions; i++) { // every key written once: the steady state is measured
            decide.accept(0);
        }
        return decide;
    }

    private static IntConsumer bucketDecide(
            ProxyManager<String> proxies, List<Spec> specs, boolean rejected, int decisions) {
        ConfigurationBuilder builder = BucketConfiguration.builder();
        for (int i = 0; i < specs.size(); i++) {
            Spec spec = specs.get(i);
            builder.addLimit(BandwidthBuilder.builder()
                    .capacity(spec.limit())
                    .refillGreedy(spec.limit(), Duration.ofMillis(spec.lengthMillis()))
                    .build());
        }
        BucketConfiguration configuration = builder.build();
        BucketProxy[] buckets = new BucketProxy[USERS];
        for (int u = 0; u < USERS; u++) {
            buckets[u] = proxies.builder().build("bucket4j-cost:" + u + ":" + specs.size(), () -> configuration);
        }
        IntConsumer decide =
                t -> buckets[rejected ? 0 : ThreadLocalRandom.current().nextInt(USERS)].tryConsume(1);
        if (rejected) {
            buckets[0].tryConsume(FULL);
        }
        for (int i = 0; i < decisions; i++) {
            decide.accept(0);
        }
        return decide;
    }

    private static String[] keys(String prefix, int user, List<Spec> specs) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            Spec spec = specs.get(i);
            String key = "ratelimit:{" + prefix + "-" + user + "}:" + i + ":" + spec.lengthMillis()
                    + (spec.tokens() ? "t" : "");
            keys.add(key);
            if (spec.weighted()) {
                keys.add(key + ":sum");
            }
        }
        return keys.toArray(String[]::new);
    }

    private static String[] args(List<Spec> specs, long tokens) {
        List<String> args = new ArrayList<>(List.of("r", "", ScriptArgs.member(), "", ""));
        for (Spec spec : specs) {
            args.add(Long.toString(spec.lengthMillis()));
            args.add(Long.toString(spec.limit()));
            args.add(spec.tokens() ? Long.toString(tokens) : "");
            args.add(Long.toString(spec.precisionMillis()));
        }
        return args.toArray(String[]::new);
    }
}
