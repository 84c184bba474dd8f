package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.ScriptCall;
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
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Redis CPU per decision: {@code INFO commandstats} {@code usec} of the client's commands divided by
 * the decisions they made, for allowed and rejected decisions, 1 and 2 windows, exact and with
 * precision, for the stores' script (plain {@code EVALSHA}, the stores' keys and arguments), next to
 * Bucket4j's commands, in the same run.
 *
 * <p>Allowed: {@value #USERS} users at random, limits out of reach, every key already written once
 * (a warm-up of {@value #WARM_UP_PASSES} passes: every key written, then a whole minute more) so the
 * figures are the steady state rather than first writes. Rejected: one user
 * whose windows are full ({@value #FULL} entries against a limit of {@value #FULL}). Each figure is the
 * least of {@value #REPEATS} passes of {@value #DECISIONS} decisions on one thread (on a shared
 * machine, Redis descheduled in the middle of a command only ever adds time); the contenders' passes
 * alternate, on one Redis holding all their keys. Our scripts are sent by
 * a plain blocking client (one thread); Bucket4j through its Lettuce proxy.
 *
 * <p>Two more allowed cases send a gateway's multi-scope reservation, keys and arguments built by the
 * stores' own {@link ScriptCall} (standalone {@link KeySpace}): each of the {@value #USERS} users with
 * its own windows, plus shared budgets whose keys every user of the budget charges ({@value #TEAMS}
 * teams, one org, one model cap), all in one {@code EVALSHA}.
 *
 * <p>Two floors run in the same passes, with the same keys and arguments: the script call alone
 * (a script that runs no command) and, for allowed decisions in exact request windows, the commands
 * of the exact log alone (a script that runs them and decides nothing). No script that keeps the
 * exact log's commands can cost Redis less than the second.
 */
final class ScriptCost {

    static final int USERS = 1_000;
    /** Teams of the multi-scope cases: user {@code u} is in team {@code u % TEAMS}. */
    static final int TEAMS = 10;

    static final int FULL = 10;
    static final int REPEATS = 5;
    /** Passes per figure: {@link #REPEATS}, or fewer with {@code -Dratelimit.cost.repeats=N} (callgrind's counts repeat). */
    private static final int PASSES = Integer.getInteger("ratelimit.cost.repeats", REPEATS);

    static final int DECISIONS = 3_000;
    /**
     * Under callgrind, the milliseconds the scripts' clock moves per allowed decision: the scripts
     * are sent this clock rather than reading {@code TIME}, so what has left a window at each
     * decision, and so the count, does not depend on how fast the machine runs them. At 20 ms a pass
     * spans a minute: after the warm-up every minute window is in its steady state (entries leaving as
     * fast as they arrive). A rejection's clock stands still, so the full window stays full.
     */
    static final long STEP_MILLIS = 20;

    /**
     * Under callgrind, where the scripts' clock starts: on an hour (2026-01-01T00:00:00Z), the same in
     * every run. A pass of {@value #DECISIONS} decisions spans one minute, so each pass after the warm-up
     * is one whole minute of the clock: its precision windows move to a new step at the same decisions
     * in every pass and every run, and no hour-step window moves. (Started at the machine's time, the
     * minute's boundary fell anywhere in a pass, and the first pass after the warm-up, whose rings had
     * just been written, moved fewer of them than the others: the least of the passes varied by about
     * 1 % from run to run.)
     */
    static final long CLOCK_START_MILLIS = 1_767_225_600_000L;

    /** Passes of {@value #DECISIONS} decisions run before the measured ones (see {@code scriptDecide}). */
    static final int WARM_UP_PASSES = 2;

    /**
     * The system property that selects cases: a regular expression found in a row's decision and
     * windows ({@code "allowed 1 window, exact (minute)"}, {@code "allowed tokens only, ..."}); all
     * rows when unset. For iterating on the script without the whole ten-to-twenty-minute run.
     */
    static final String ONLY = "ratelimit.cost.only";

    private static boolean selected(String decision, String label) {
        String only = System.getProperty(ONLY);
        return only == null
                || java.util.regex.Pattern.compile(only)
                        .matcher(decision + " " + label)
                        .find();
    }

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
                if (!selected("allowed", labels[c])) {
                    continue;
                }
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
                if (!selected("rejected (first window full)", labels[c])) {
                    continue;
                }
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
            // after the rows above, so that they run as they did before these cases were added
            for (Gateway gateway : Gateway.values()) {
                if (!selected("allowed", gateway.label)) {
                    continue;
                }
                results.add(log(meter, measureGateway(meter, redis, plain, gateway, decisions)));
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
        boolean exactRequests = specs.stream().allMatch(s -> !s.tokens() && s.precisionMillis() == 0);
        return interleaved(
                meter,
                redis,
                plain,
                decision,
                label,
                script -> specCalls(script, specs, tokens),
                withBucket4j ? () -> bucketDecide(buckets, specs, rejected, decisions) : null,
                !rejected && exactRequests,
                rejected,
                decisions);
    }

    /** One multi-scope case: the script and the call alone, as {@link #measureCase} runs them. */
    private static Result measureGateway(
            Meter meter, RedisServer redis, RespClient plain, Gateway gateway, int decisions)
            throws InterruptedException {
        return interleaved(
                meter, redis, plain, "allowed", gateway.label, gateway::calls, null, false, false, decisions);
    }

    private static Result interleaved(
            Meter meter,
            RedisServer redis,
            RespClient plain,
            String decision,
            String label,
            Function<BenchScripts, Calls> calls,
            @Nullable Supplier<IntConsumer> bucket4j,
            boolean commandsFloor,
            boolean rejected,
            int decisions)
            throws InterruptedException {
        redis.call("FLUSHALL");
        // instructions: a clock of the run's own, and users drawn from a fixed seed, so two runs repeat
        boolean repeatable = meter != MICROS;
        IntConsumer script = scriptDecide(
                redis, plain, BenchScripts.CURRENT, calls.apply(BenchScripts.CURRENT), rejected, decisions, repeatable);
        IntConsumer bucket = bucket4j == null ? null : bucket4j.get();
        IntConsumer call = scriptDecide(
                redis,
                plain,
                BenchScripts.FLOOR_CALL,
                calls.apply(BenchScripts.FLOOR_CALL),
                rejected,
                decisions,
                repeatable);
        IntConsumer commands = commandsFloor
                ? scriptDecide(
                        redis,
                        plain,
                        BenchScripts.FLOOR_COMMANDS,
                        calls.apply(BenchScripts.FLOOR_COMMANDS),
                        false,
                        decisions,
                        repeatable)
                : null;
        String[] labels = {"script", "Bucket4j", "call alone", "commands alone"};
        IntConsumer[] contenders = {script, bucket, call, commands};
        double[] least = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
        for (int r = 0; r < PASSES; r++) {
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

    /**
     * The keys and arguments of each user's call, indexed by user; each call sends a copy of the
     * user's arguments with the time (index 1, when the run sends its own clock) and a fresh entry id
     * (index 2) filled in.
     */
    private record Calls(String[][] keys, String[][] args) {}

    private static Calls specCalls(BenchScripts script, List<Spec> specs, long tokens) {
        String[][] keys = new String[USERS][];
        String[][] args = new String[USERS][];
        String[] template = args(specs, tokens);
        for (int u = 0; u < USERS; u++) {
            keys[u] = keys(script.name().toLowerCase(Locale.ROOT), u, specs);
            args[u] = template;
        }
        return new Calls(keys, args);
    }

    private static IntConsumer scriptDecide(
            RedisServer redis,
            RespClient plain,
            BenchScripts script,
            Calls calls,
            boolean rejected,
            int decisions,
            boolean repeatable) {
        redis.call("SCRIPT", "LOAD", script.source());
        java.util.Random seeded = new java.util.Random(42);
        long[] clock = {CLOCK_START_MILLIS};
        IntConsumer decide = t -> {
            int user = rejected ? 0 : (repeatable ? seeded : ThreadLocalRandom.current()).nextInt(USERS);
            String[] k = calls.keys()[user];
            String[] a = calls.args()[user].clone();
            a[2] = ScriptArgs.member();
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
            if (!(plain.call(command) instanceof List<?> reply)) {
                throw new IllegalStateException("the script answered no list");
            }
            if (!rejected && !Long.valueOf(1).equals(reply.get(0))) {
                throw new IllegalStateException("an allowed case was not allowed: " + reply);
            }
        };
        if (rejected) {
            for (int i = 0; i < FULL; i++) {
                decide.accept(0);
            }
        }
        // every key written, and a whole minute more: the steady state is measured (with a one-minute
        // warm-up, the first measured minute cost about 1.4 % less than every later one, in the exact
        // windows' ZRANGE and ZREMRANGEBYSCORE, and the least of the passes was always that minute)
        for (int i = 0; i < WARM_UP_PASSES * decisions; i++) {
            decide.accept(0);
        }
        return decide;
    }

    /**
     * The multi-scope cases: one user's reservation as a gateway's limiter sends it, the user's scope
     * first, then the shared budgets', in one call. Limits are out of reach: every decision is allowed.
     */
    enum Gateway {
        /** Today's gateway: the tenant's request and token windows and the model's cap. */
        TOKENS(
                "tokens only, today's gateway: tenant (requests + tokens per minute exact, per day @ 1 min)"
                        + " + model cap (rpm, tpm); reserve 1,000 tokens",
                false),
        /** Tokens and money: spend windows of the tenant, its team and the org besides. */
        MONEY(
                "tokens + money across tenant, team, org and model cap: tenant (the four windows above + spend"
                        + " per day @ 1 min + per 30 days @ 1 h), team and org (spend per 30 days @ 1 h), model cap"
                        + " (rpm, tpm); reserve 1,000 tokens + 12,500 usd_micros",
                true);

        private static final long BIG = 1_000_000_000L;
        private static final Duration MINUTE = Duration.ofMinutes(1);
        private static final Duration DAY = Duration.ofDays(1);
        private static final Duration MONTH = Duration.ofDays(30);
        private static final Window SPEND_MONTH = Window.of("spend/30d", BIG * 1_000, MONTH, Window.Unit.USD_MICROS)
                .withPrecision(Duration.ofHours(1));
        private static final List<Window> MODEL_CAP =
                List.of(new Window("rpm", BIG, MINUTE), Window.tokens("tpm", BIG * 1_000, MINUTE));

        final String label;
        private final boolean money;

        Gateway(String label, boolean money) {
            this.label = label;
            this.money = money;
        }

        private List<StoreRequest.Scope> scopes(int user) {
            List<Window> tenant = new ArrayList<>(List.of(
                    new Window("rpm", BIG, MINUTE),
                    Window.tokens("tpm", BIG * 1_000, MINUTE),
                    new Window("rpd", BIG, DAY).withPrecision(MINUTE),
                    Window.tokens("tpd", BIG * 1_000, DAY).withPrecision(MINUTE)));
            List<StoreRequest.Scope> scopes = new ArrayList<>();
            if (money) {
                tenant.add(Window.of("spend/day", BIG * 1_000, DAY, Window.Unit.USD_MICROS)
                        .withPrecision(MINUTE));
                tenant.add(SPEND_MONTH);
            }
            scopes.add(StoreRequest.Scope.user("user_" + user, tenant));
            if (money) {
                scopes.add(StoreRequest.Scope.shared("team_" + user % TEAMS, List.of(SPEND_MONTH)));
                scopes.add(StoreRequest.Scope.shared("org_1", List.of(SPEND_MONTH)));
            }
            scopes.add(StoreRequest.Scope.shared("model:gpt-4o", MODEL_CAP));
            return scopes;
        }

        private Amounts amounts() {
            Amounts tokens = Amounts.tokens(1_000);
            return money ? tokens.and(Window.Unit.USD_MICROS, 12_500) : tokens;
        }

        /** Every user's call, spelled by the stores' {@link ScriptCall}; the stores' prefix for ours. */
        Calls calls(BenchScripts script) {
            String prefix = script == BenchScripts.CURRENT
                    ? KeySpace.DEFAULT_PREFIX
                    : script.name().toLowerCase(Locale.ROOT);
            KeySpace space = new KeySpace(KeyLayout.STANDALONE, prefix);
            String[][] keys = new String[USERS][];
            String[][] args = new String[USERS][];
            for (int u = 0; u < USERS; u++) {
                ScriptCall<?> call = ScriptCall.reserve(
                        new StoreRequest(scopes(u), amounts(), "-", StoreRequest.STORE_TIME, null), space);
                keys[u] = call.keys();
                args[u] = call.args();
            }
            return new Calls(keys, args);
        }
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
        List<String> args = new ArrayList<>(List.of("r", "", "", "", "")); // the member is filled in per call
        for (Spec spec : specs) {
            args.add(Long.toString(spec.lengthMillis()));
            args.add(Long.toString(spec.limit()));
            args.add(spec.tokens() ? Long.toString(tokens) : "");
            args.add(Long.toString(spec.precisionMillis()));
        }
        return args.toArray(String[]::new);
    }
}
