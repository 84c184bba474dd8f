package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Writes the benchmark report: the Markdown template resource {@value #TEMPLATE} filled with the tables,
 * ratios and machine facts of one run, and the chart.
 */
final class Report {

    /** The report's prose and layout, a resource next to this class; {@code {{name}}} marks a value. */
    static final String TEMPLATE = "benchmarks.md";

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{(\\w+)}}");

    /** The command that produces the report, as documented. */
    static final String COMMAND = "./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package -DskipTests"
            + " && java -jar benchmarks/ratelimit-benchmarks/target/benchmarks.jar";

    /** Ours against the plain driver's EVALSHA of the same script: what, our figure's id, the plain one's id. */
    private static final String[][] BLOCKING_PAIRS = {
        {"ours Lettuce blocking 1 thread / plain Lettuce EVALSHA 1 thread", "ours-lettuce-1t", "evalsha-lettuce-1t"},
        {"ours Lettuce blocking 8 threads / plain Lettuce EVALSHA 8 threads", "ours-lettuce-8t", "evalsha-lettuce-8t"},
        {"ours Jedis blocking 1 thread / plain Jedis EVALSHA 1 thread", "ours-jedis-1t", "evalsha-jedis-1t"},
        {"ours Jedis blocking 8 threads / plain Jedis EVALSHA 8 threads", "ours-jedis-8t", "evalsha-jedis-8t"},
        {"ours Lettuce blocking 8 threads / plain EVALSHA, contended key", "ours-lettuce-8t-c", "evalsha-lettuce-8t-c"},
        {"ours Jedis blocking 8 threads / plain EVALSHA, contended key", "ours-jedis-8t-c", "evalsha-jedis-8t-c"},
        {"ours Lettuce blocking 1 thread / plain EVALSHA, two windows", "ours-lettuce-1t-2w", "evalsha-lettuce-1t-2w"},
        {"ours Lettuce blocking 8 threads / plain EVALSHA, two windows", "ours-lettuce-8t-2w", "evalsha-lettuce-8t-2w"},
        {"ours Jedis blocking 8 threads / plain EVALSHA, two windows", "ours-jedis-8t-2w", "evalsha-jedis-8t-2w"},
        {
            "(async, for reference) ours Lettuce async / plain Lettuce async EVALSHA",
            "ours-lettuce-async",
            "evalsha-lettuce-async"
        },
    };

    private final Machine machine;
    private final String settings;
    private final List<RedisBenchmarkTool.Result> ceilings;
    private final List<JmhRun.Figures> figures;
    private final List<RoundTrips.Result> roundTrips;
    private final List<MemoryPerTenant.Result> memory;
    private final String outcomes;
    private final Duration elapsed;
    private List<ScriptCost.Result> scriptCost = List.of();
    private List<RunawayClient.Result> runaway = List.of();
    private List<MemoryPerTenant.Result> budgets = List.of();

    Report(
            Machine machine,
            String settings,
            List<RedisBenchmarkTool.Result> ceilings,
            List<JmhRun.Figures> figures,
            List<RoundTrips.Result> roundTrips,
            List<MemoryPerTenant.Result> memory,
            String outcomes,
            Duration elapsed) {
        this.machine = machine;
        this.settings = settings;
        this.ceilings = ceilings;
        this.figures = figures;
        this.roundTrips = roundTrips;
        this.memory = memory;
        this.outcomes = outcomes;
        this.elapsed = elapsed;
    }

    /** Adds the sections of the round-two figures: Redis CPU per decision, the runaway client, token budgets' memory. */
    Report extras(
            List<ScriptCost.Result> scriptCost,
            List<RunawayClient.Result> runaway,
            List<MemoryPerTenant.Result> budgets) {
        this.scriptCost = scriptCost;
        this.runaway = runaway;
        this.budgets = budgets;
        return this;
    }

    /** One target: a ratio of at least {@code target}, or with {@code atMost} a value of at most it. */
    record Ratio(
            String what, @Nullable Double value, double target, String numerator, String denominator, boolean atMost) {

        Ratio(String what, @Nullable Double value, double target, String numerator, String denominator) {
            this(what, value, target, numerator, denominator, false);
        }

        boolean holds() {
            return value != null && (atMost ? value <= target : value >= target);
        }

        String verdict() {
            return value == null ? "not measured" : holds() ? "holds" : "**missed**";
        }
    }

    void write(Path markdown, Path png) throws IOException {
        Files.writeString(markdown, markdown(png.getFileName().toString()), StandardCharsets.UTF_8);
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart(), out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    List<Ratio> ratios() {
        List<Ratio> ratios = new ArrayList<>();
        Optional<RedisBenchmarkTool.Result> pipelined = ceilings.stream()
                .filter(c -> c.pipeline() == 16
                        && c.keys().equals(Workload.SPREAD)
                        && c.label().startsWith("seed"))
                .findFirst();
        ratios.add(new Ratio(
                "ours Lettuce async (64 in flight) / redis-benchmark -P 16 of the seed's script (4 clients = 64 in"
                        + " flight), spread keys",
                ratio(
                        rate("ours-lettuce-async"),
                        pipelined.map(RedisBenchmarkTool.Result::rps).orElse(null)),
                0.8,
                fmt(rate("ours-lettuce-async")),
                pipelined.map(r -> fmt(r.rps())).orElse("-")));
        for (String[] pair : BLOCKING_PAIRS) {
            ratios.add(new Ratio(
                    pair[0], ratio(rate(pair[1]), rate(pair[2])), 0.95, fmt(rate(pair[1])), fmt(rate(pair[2]))));
        }
        ratios.add(new Ratio(
                "ours Lettuce blocking 8 threads / Bucket4j 8 threads, one contended key",
                ratio(rate("ours-lettuce-8t-c"), rate("bucket4j-8t-c")),
                3.0,
                fmt(rate("ours-lettuce-8t-c")),
                fmt(rate("bucket4j-8t-c"))));
        ratios.add(new Ratio(
                "ours Jedis blocking 8 threads / Bucket4j 8 threads, one contended key",
                ratio(rate("ours-jedis-8t-c"), rate("bucket4j-8t-c")),
                3.0,
                fmt(rate("ours-jedis-8t-c")),
                fmt(rate("bucket4j-8t-c"))));
        Double bestPeer = max(rate("bucket4j-8t"), rate("redisson-8t"));
        String bestName = bestPeer == null
                ? "-"
                : fmt(bestPeer) + (bestPeer.equals(rate("bucket4j-8t")) ? " (Bucket4j)" : " (Redisson)");
        ratios.add(new Ratio(
                "ours Lettuce blocking 8 threads / better of Bucket4j and Redisson, 10,000 keys",
                ratio(rate("ours-lettuce-8t"), bestPeer),
                1.5,
                fmt(rate("ours-lettuce-8t")),
                bestName));
        ratios.add(new Ratio(
                "ours Jedis blocking 8 threads / better of Bucket4j and Redisson, 10,000 keys",
                ratio(rate("ours-jedis-8t"), bestPeer),
                1.5,
                fmt(rate("ours-jedis-8t")),
                bestName));
        for (ScriptCost.Result cost : scriptCost) {
            if (cost.decision().equals("allowed") && cost.windows().startsWith("1 window, exact")) {
                ratios.add(new Ratio(
                        "Redis µs per allowed decision, 1 exact window (INFO commandstats; Bucket4j: "
                                + micros(cost.bucket4j())
                                + " µs; the exact log's commands alone: " + micros(cost.floorCommands())
                                + " µs; the script call alone: " + micros(cost.floorCall()) + " µs)",
                        cost.script(),
                        10.0,
                        micros(cost.script()) + " µs",
                        "",
                        true));
            }
        }
        if (runaway.size() == 2) {
            RunawayClient.Result off = runaway.get(0);
            RunawayClient.Result on = runaway.get(1);
            ratios.add(new Ratio(
                    "runaway client (8 threads, one key): Redis calls per rejected decision, rejection cache on",
                    on.callsPerRejected(),
                    0.01,
                    String.format(Locale.ROOT, "%.2g", on.callsPerRejected()),
                    "",
                    true));
            ratios.add(new Ratio(
                    "runaway client: rejected decisions/s, cache on / cache off",
                    ratio(on.rejectedPerSecond(), off.rejectedPerSecond()),
                    20.0,
                    fmt(on.rejectedPerSecond()),
                    fmt(off.rejectedPerSecond())));
        }
        return ratios;
    }

    String ratiosMarkdown() {
        Table table = new Table(
                "| Ratio (same run) | Measured | Target | Verdict | Numerator (decisions/s) | Denominator (decisions/s) |",
                "|---|---:|---:|---|---:|---:|");
        for (Ratio ratio : ratios()) {
            table.row(
                    ratio.what(),
                    ratio.value() == null
                            ? "-"
                            : ratio.atMost()
                                    ? String.format(Locale.ROOT, "%.5g", ratio.value())
                                    : String.format(Locale.ROOT, "%.3f×", ratio.value()),
                    ratio.atMost()
                            ? String.format(Locale.ROOT, "≤ %s", ratio.target())
                            : String.format(Locale.ROOT, "≥ %.2f×", ratio.target()),
                    ratio.verdict(),
                    ratio.numerator(),
                    ratio.denominator());
        }
        boolean oneTrip = true;
        StringBuilder trips = new StringBuilder();
        for (RoundTrips.Result result : roundTrips) {
            if (result.label().startsWith("ours")) {
                oneTrip &= Math.abs(result.roundTrips() - 1.0) < 0.005;
                trips.append(String.format(Locale.ROOT, "%.2f ", result.roundTrips()));
            }
        }
        table.row(
                "ours: Redis round trips per decision, 1 and 2 windows, Lettuce and Jedis (MONITOR)",
                trips.toString().trim(),
                "= 1",
                roundTrips.isEmpty() ? "not measured" : oneTrip ? "holds" : "**missed**",
                "",
                "");
        return table.toString();
    }

    private String markdown(String pngName) throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("startedAt", machine.startedAt());
        values.put("commit", commit());
        values.put("command", COMMAND);
        values.put("png", pngName);
        values.put("elapsedMinutes", Long.toString(elapsed.toMinutes()));
        values.put(
                "smokeNote",
                machine.quick()
                        ? "> **Smoke run (`--quick`)**: one short iteration per figure; the numbers are not meant to be"
                                + " compared.\n\n"
                        : "");
        values.put("cores", Integer.toString(machine.cores()));
        values.put("cpuModel", machine.cpuModel());
        values.put("java", machine.javaVersion());
        values.put("loadBefore", machine.loadBefore());
        values.put("loadAfter", machine.loadAfter());
        values.put("otherJvms", Integer.toString(machine.otherJvms()));
        values.put("redisVersion", machine.redisVersion());
        values.put("settings", settings);
        values.put("inFlight", Integer.toString(BenchRedis.IN_FLIGHT));
        values.put("poolSize", Integer.toString(BenchRedis.POOL_SIZE));
        values.put("limitPerMinute", fmt(Workload.LIMIT_PER_MINUTE));
        values.put("limitPerDay", fmt(Workload.LIMIT_PER_DAY));
        values.put("targets", ratiosMarkdown());
        values.put("jmh", jmhTable());
        values.put("ceilings", ceilingTable());
        values.put("roundTrips", roundTripTable());
        values.put("memory", memoryTable());
        values.put("scriptCost", scriptCostTable());
        values.put("runaway", runawayTable());
        values.put("budgetMemory", budgetTable());
        values.put("tokenBudgets", tokenBudgetTable());
        values.put("costUsers", fmt(ScriptCost.USERS));
        values.put("costRepeats", Integer.toString(ScriptCost.REPEATS));
        values.put("costDecisions", fmt(ScriptCost.DECISIONS));
        values.put("dayRequests", fmt(MemoryPerTenant.DAY_REQUESTS));
        values.put("tokensPerRequest", fmt(MemoryPerTenant.TOKENS_PER_REQUEST));
        values.put("dayTokens", fmt(MemoryPerTenant.DAY_TOKENS));
        values.put("monthUsdMicros", fmt(MemoryPerTenant.MONTH_USD_MICROS));
        values.put("monthReservations", fmt(MemoryPerTenant.MONTH_RESERVATIONS));
        return fill(template(), values);
    }

    /** Replaces every {@code {{name}}} of the template; a name without a value is a bug in the report. */
    static String fill(String template, Map<String, String> values) {
        Matcher placeholder = PLACEHOLDER.matcher(template);
        StringBuilder out = new StringBuilder();
        while (placeholder.find()) {
            String value = values.get(placeholder.group(1));
            if (value == null) {
                throw new IllegalStateException(
                        "the report template names {{" + placeholder.group(1) + "}}, which the report does not fill");
            }
            placeholder.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        return placeholder.appendTail(out).toString();
    }

    private static String template() throws IOException {
        try (InputStream in = Report.class.getResourceAsStream(TEMPLATE)) {
            if (in == null) {
                throw new IOException("missing resource " + TEMPLATE + " next to " + Report.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private String jmhTable() {
        Table table = new Table(
                "| Id | Contender | Keys | Windows | Threads / in flight | Decisions/s | p50 µs | p99 µs | Rejected | Failed"
                        + " | Other JVMs |",
                "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|");
        Map<String, long[]> outcomeCounts = outcomeCounts();
        for (JmhRun.Figures f : figures) {
            JmhRun run = f.run();
            long[] counts = outcomeCounts.get(run.id());
            table.row(
                    run.id(),
                    run.contender(),
                    run.keys(),
                    run.windows(),
                    run.isAsync()
                            ? BenchRedis.IN_FLIGHT + " in flight"
                            : run.threads() + (run.threads() == 1 ? " thread" : " threads"),
                    fmt(f.decisionsPerSecond()),
                    micros(f.p50Micros()),
                    micros(f.p99Micros()),
                    counts == null ? "-" : counts[0],
                    counts == null ? "-" : counts[1],
                    f.otherJvms());
        }
        return table.toString();
    }

    private String ceilingTable() {
        Table table = new Table(
                "| Run | Keys | Clients | Pipeline | Requests | Requests/s | p50 ms | p99 ms |",
                "|---|---|---:|---:|---:|---:|---:|---:|");
        for (RedisBenchmarkTool.Result c : ceilings) {
            table.row(
                    c.label(),
                    c.keys(),
                    c.clients(),
                    c.pipeline(),
                    fmt(c.requests()),
                    fmt(c.rps()),
                    String.format(Locale.ROOT, "%.3f", c.p50Ms()),
                    String.format(Locale.ROOT, "%.3f", c.p99Ms()));
        }
        return table.toString();
    }

    private String roundTripTable() {
        Table table = new Table(
                "| Contender | Workload | Decisions | Round trips / decision | Client commands / decision | Executed"
                        + " commands / decision (commandstats) | Redis µs / decision |",
                "|---|---|---:|---:|---|---|---:|");
        for (RoundTrips.Result r : roundTrips) {
            table.row(
                    r.label(),
                    r.workload(),
                    fmt(r.decisions()),
                    String.format(Locale.ROOT, "%.2f", r.roundTrips()),
                    r.clientSummary(),
                    r.executedSummary(),
                    String.format(Locale.ROOT, "%.1f", r.serverMicros()));
        }
        return table.toString();
    }

    private String memoryTable() {
        Table table = new Table(
                "| Tier | Contender | Keys | Bytes | Bytes per recorded request | Check |",
                "|---|---|---:|---:|---:|---|");
        for (MemoryPerTenant.Result m : memory) {
            int requests = requestsFor(m);
            table.row(
                    m.tier(),
                    m.contender(),
                    m.keys(),
                    fmt(m.bytes()),
                    requests == 0 ? "-" : String.format(Locale.ROOT, "%.0f", m.bytes() / (double) requests),
                    m.note());
        }
        return table.toString();
    }

    private String scriptCostTable() {
        if (scriptCost.isEmpty()) {
            return "Not measured in this run.\n";
        }
        Table table = new Table(
                "| Decision | Windows | Script (µs) | Bucket4j (µs) | Floor: the call alone (µs)"
                        + " | Floor: the commands alone (µs) |",
                "|---|---|---:|---:|---:|---:|");
        for (ScriptCost.Result r : scriptCost) {
            table.row(
                    r.decision(),
                    r.windows(),
                    micros(r.script()),
                    micros(r.bucket4j()),
                    micros(r.floorCall()),
                    micros(r.floorCommands()));
        }
        return table.toString();
    }

    private String runawayTable() {
        if (runaway.isEmpty()) {
            return "Not measured in this run.\n";
        }
        Table table = new Table(
                "| Rejection cache | Limit (per 1 s window) | Seconds | Allowed | Rejected | Rejected/s | Offered ÷ limit"
                        + " | Redis calls | Calls per rejected decision (after one per allowed) | All calls ÷ rejected |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (RunawayClient.Result r : runaway) {
            table.row(
                    r.cache(),
                    fmt(r.limitPerSecond()),
                    String.format(Locale.ROOT, "%.1f", r.seconds()),
                    fmt(r.allowed()),
                    fmt(r.rejected()),
                    fmt(r.rejectedPerSecond()),
                    String.format(Locale.ROOT, "%.0f×", r.offeredMultiple()),
                    fmt(r.redisCalls()),
                    String.format(Locale.ROOT, "%.2g", r.callsPerRejected()),
                    String.format(Locale.ROOT, "%.2g", r.allCallsPerRejected()));
        }
        return table.toString();
    }

    private String budgetTable() {
        if (budgets.isEmpty()) {
            return "Not measured in this run.\n";
        }
        Table table = new Table("| Budget | Contender | Keys | Bytes | Check |", "|---|---|---:|---:|---|");
        for (MemoryPerTenant.Result m : budgets) {
            table.row(m.tier(), m.contender(), m.keys(), fmt(m.bytes()), m.note());
        }
        return table.toString();
    }

    private String tokenBudgetTable() {
        Table table = new Table(
                "| Call (Lettuce, blocking, 8 threads, 10,000 keys) | Windows | Decisions/s | ÷ check |",
                "|---|---|---:|---:|");
        String[][] rows = {
            {"tb-check-8t", "check (today)", "requests per minute and per day, exact"},
            {"tb-reserve-exact-8t", "reserve 100 tokens", "requests and tokens per minute and per day, exact"},
            {
                "tb-reserve-precision-8t",
                "reserve 100 tokens",
                "requests and tokens per minute (exact) and per day (1-minute precision)"
            }
        };
        for (String[] row : rows) {
            table.row(row[1], row[2], fmt(rate(row[0])), ratioText(ratio(rate(row[0]), rate("tb-check-8t"))));
        }
        return table.toString();
    }

    private static String ratioText(@Nullable Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.2f×", value);
    }

    /** A Markdown table: a header, an alignment line and one line per row. */
    static final class Table {
        private final StringBuilder text = new StringBuilder();

        Table(String header, String alignment) {
            text.append(header).append('\n').append(alignment).append('\n');
        }

        void row(Object... cells) {
            text.append('|');
            for (Object cell : cells) {
                text.append(' ').append(cell).append(" |");
            }
            text.append('\n');
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }

    static String commit() {
        try {
            Process git = new ProcessBuilder("git", "rev-parse", "--short", "HEAD")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return git.waitFor() == 0 && !out.isEmpty() ? out : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static int requestsFor(MemoryPerTenant.Result m) {
        if (m.contender().startsWith("Bucket4j")) {
            return 0;
        }
        return switch (m.tier()) {
            case "free" -> 105;
            case "pro" -> 5_060;
            case "enterprise" -> 100_600;
            default -> 0;
        };
    }

    private CategoryChart chart() {
        Map<String, String[]> bars = new LinkedHashMap<>();
        bars.put("redis-benchmark\n1 client", new String[] {"rb:1:1", null});
        bars.put("redis-benchmark\n8 clients", new String[] {"rb:8:1", "rb:8:1:c"});
        bars.put("redis-benchmark\n-P16 x 4", new String[] {"rb:4:16", "rb:4:16:c"});
        bars.put("EVALSHA Lettuce\n1 thread", new String[] {"evalsha-lettuce-1t", null});
        bars.put("EVALSHA Lettuce\n8 threads", new String[] {"evalsha-lettuce-8t", "evalsha-lettuce-8t-c"});
        bars.put("EVALSHA Lettuce\nasync 64", new String[] {"evalsha-lettuce-async", null});
        bars.put("EVALSHA Jedis\n1 thread", new String[] {"evalsha-jedis-1t", null});
        bars.put("EVALSHA Jedis\n8 threads", new String[] {"evalsha-jedis-8t", "evalsha-jedis-8t-c"});
        bars.put("ours Lettuce\n1 thread", new String[] {"ours-lettuce-1t", null});
        bars.put("ours Lettuce\n8 threads", new String[] {"ours-lettuce-8t", "ours-lettuce-8t-c"});
        bars.put("ours Lettuce\nasync 64", new String[] {"ours-lettuce-async", "ours-lettuce-async-c"});
        bars.put("ours Jedis\n1 thread", new String[] {"ours-jedis-1t", null});
        bars.put("ours Jedis\n8 threads", new String[] {"ours-jedis-8t", "ours-jedis-8t-c"});
        bars.put("Bucket4j\n1 thread", new String[] {"bucket4j-1t", null});
        bars.put("Bucket4j\n8 threads", new String[] {"bucket4j-8t", "bucket4j-8t-c"});
        bars.put("Redisson\n1 thread", new String[] {"redisson-1t", null});
        bars.put("Redisson\n8 threads", new String[] {"redisson-8t", "redisson-8t-c"});
        List<String> labels = new ArrayList<>();
        List<Number> spread = new ArrayList<>();
        List<Number> contended = new ArrayList<>();
        bars.forEach((label, ids) -> {
            labels.add(label.replace('\n', ' '));
            spread.add(orZero(value(ids[0])));
            contended.add(orZero(ids[1] == null ? null : value(ids[1])));
        });
        CategoryChart chart = new CategoryChartBuilder()
                .width(1600)
                .height(900)
                .title("Rate-limit decisions per second, one window, same run (" + machine.cores() + " cores"
                        + (machine.quick() ? ", SMOKE RUN" : "") + ")")
                .xAxisTitle("")
                .yAxisTitle("decisions / s")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setXAxisLabelRotation(90);
        chart.getStyler().setLabelsVisible(false);
        chart.getStyler().setYAxisDecimalPattern("#,###");
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.addSeries("10,000 keys (spread)", labels, spread);
        chart.addSeries("one key (contended)", labels, contended);
        return chart;
    }

    private @Nullable Double value(String id) {
        if (id.startsWith("rb:")) {
            String[] parts = id.split(":");
            int clients = Integer.parseInt(parts[1]);
            int pipeline = Integer.parseInt(parts[2]);
            String keys = parts.length > 3 ? Workload.CONTENDED : Workload.SPREAD;
            return ceilings.stream()
                    .filter(c -> c.clients() == clients
                            && c.pipeline() == pipeline
                            && c.keys().equals(keys))
                    .map(RedisBenchmarkTool.Result::rps)
                    .findFirst()
                    .orElse(null);
        }
        return rate(id);
    }

    private @Nullable Double rate(String id) {
        return figures.stream()
                .filter(f -> f.run().id().equals(id))
                .map(JmhRun.Figures::decisionsPerSecond)
                .findFirst()
                .orElse(null);
    }

    private Map<String, long[]> outcomeCounts() {
        Map<String, long[]> counts = new LinkedHashMap<>();
        for (String line : outcomes.split("\n")) {
            String[] fields = line.split("\t");
            if (fields.length == 4) {
                // forks append in run order; a later line for the same key belongs to a later run
                counts.put(
                        fields[0] + "|" + fields[1] + "|" + counts.size(),
                        new long[] {Long.parseLong(fields[2]), Long.parseLong(fields[3])});
            }
        }
        // match lines to figures in order
        Map<String, long[]> byRun = new LinkedHashMap<>();
        List<Map.Entry<String, long[]>> entries = new ArrayList<>(counts.entrySet());
        int next = 0;
        for (JmhRun.Figures f : figures) {
            String prefix = benchmarkName(f.run()) + "|" + f.run().outcomeParams() + "|";
            for (int i = next; i < entries.size(); i++) {
                if (entries.get(i).getKey().startsWith(prefix)) {
                    byRun.put(f.run().id(), entries.get(i).getValue());
                    next = i + 1;
                    break;
                }
            }
        }
        return byRun;
    }

    private static String benchmarkName(JmhRun run) {
        return run.benchmark().getSimpleName().replace("Benchmark", "");
    }

    private static double orZero(@Nullable Double value) {
        return value == null ? 0 : value;
    }

    private static @Nullable Double ratio(@Nullable Double numerator, @Nullable Double denominator) {
        if (numerator == null || denominator == null || denominator == 0) {
            return null;
        }
        return numerator / denominator;
    }

    private static @Nullable Double max(@Nullable Double a, @Nullable Double b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return Math.max(a, b);
    }

    private static String fmt(@Nullable Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String fmt(long value) {
        return String.format(Locale.ROOT, "%,d", value);
    }

    private static String micros(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }
}
