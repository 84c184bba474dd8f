package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** Writes the benchmark report: the markdown tables and the chart, with ratios from the same run. */
final class Report {

    /** The command that produces the report, as documented. */
    static final String COMMAND = "./mvnw -q -B -pl ratelimit-benchmarks -am package -DskipTests"
            + " && java -jar ratelimit-benchmarks/target/benchmarks.jar";

    private final Machine machine;
    private final String settings;
    private final List<RedisBenchmarkTool.Result> ceilings;
    private final List<JmhRun.Figures> figures;
    private final List<RoundTrips.Result> roundTrips;
    private final List<MemoryPerTenant.Result> memory;
    private final String outcomes;
    private final Duration elapsed;

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

    /** The machine and the load on it, before and after the run. */
    record Machine(
            int cores,
            String javaVersion,
            String redisVersion,
            String loadBefore,
            String loadAfter,
            int otherJvms,
            boolean quick,
            String startedAt) {

        static Machine now(boolean quick) {
            return new Machine(
                    Runtime.getRuntime().availableProcessors(),
                    System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                    "?",
                    load(),
                    "?",
                    countOtherJvms(),
                    quick,
                    ZonedDateTime.now(ZoneOffset.UTC)
                                    .format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
                                    .substring(0, 16) + "Z");
        }

        Machine withRedis(String version) {
            return new Machine(cores, javaVersion, version.trim(), loadBefore, loadAfter, otherJvms, quick, startedAt);
        }

        Machine finished() {
            return new Machine(cores, javaVersion, redisVersion, loadBefore, load(), otherJvms, quick, startedAt);
        }

        String describe() {
            return cores + " cores, " + javaVersion + ", load average " + loadBefore + ", other JVMs running: "
                    + otherJvms;
        }

        private static String load() {
            try {
                String[] fields =
                        Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
                return fields[0] + " / " + fields[1] + " / " + fields[2];
            } catch (IOException | RuntimeException e) {
                return "unknown";
            }
        }

        static int countOtherJvms() {
            long self = ProcessHandle.current().pid();
            java.util.Set<Long> mine = new java.util.HashSet<>();
            ProcessHandle.current().descendants().forEach(child -> mine.add(child.pid()));
            return (int) ProcessHandle.allProcesses()
                    .filter(process -> process.pid() != self && !mine.contains(process.pid()))
                    .filter(process -> process.info()
                            .command()
                            .map(c -> c.endsWith("/java"))
                            .orElse(false))
                    .count();
        }
    }

    /** One target ratio. */
    record Ratio(String what, @Nullable Double value, double target, String numerator, String denominator) {
        boolean holds() {
            return value != null && value >= target;
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
                .filter(c -> c.pipeline() == 16 && c.keys().equals(Workload.SPREAD))
                .findFirst();
        ratios.add(new Ratio(
                "ours Lettuce async (64 in flight) / redis-benchmark -P 16 (4 clients = 64 in flight), spread keys",
                ratio(
                        rate("ours-lettuce-async"),
                        pipelined.map(RedisBenchmarkTool.Result::rps).orElse(null)),
                0.8,
                fmt(rate("ours-lettuce-async")),
                pipelined.map(r -> fmt(r.rps())).orElse("-")));
        blocking(
                ratios,
                "ours Lettuce blocking 1 thread / plain Lettuce EVALSHA 1 thread",
                "ours-lettuce-1t",
                "evalsha-lettuce-1t");
        blocking(
                ratios,
                "ours Lettuce blocking 8 threads / plain Lettuce EVALSHA 8 threads",
                "ours-lettuce-8t",
                "evalsha-lettuce-8t");
        blocking(
                ratios,
                "ours Jedis blocking 1 thread / plain Jedis EVALSHA 1 thread",
                "ours-jedis-1t",
                "evalsha-jedis-1t");
        blocking(
                ratios,
                "ours Jedis blocking 8 threads / plain Jedis EVALSHA 8 threads",
                "ours-jedis-8t",
                "evalsha-jedis-8t");
        blocking(
                ratios,
                "ours Lettuce blocking 8 threads / plain EVALSHA, contended key",
                "ours-lettuce-8t-c",
                "evalsha-lettuce-8t-c");
        blocking(
                ratios,
                "ours Jedis blocking 8 threads / plain EVALSHA, contended key",
                "ours-jedis-8t-c",
                "evalsha-jedis-8t-c");
        blocking(
                ratios,
                "ours Lettuce blocking 1 thread / plain EVALSHA, two windows",
                "ours-lettuce-1t-2w",
                "evalsha-lettuce-1t-2w");
        blocking(
                ratios,
                "ours Lettuce blocking 8 threads / plain EVALSHA, two windows",
                "ours-lettuce-8t-2w",
                "evalsha-lettuce-8t-2w");
        blocking(
                ratios,
                "ours Jedis blocking 8 threads / plain EVALSHA, two windows",
                "ours-jedis-8t-2w",
                "evalsha-jedis-8t-2w");
        blocking(
                ratios,
                "(experiment: proposed Lettuce fix) ours Lettuce blocking 1 thread, reply on caller thread / plain EVALSHA",
                "ours-lettuce-1t-ct",
                "evalsha-lettuce-1t");
        blocking(
                ratios,
                "(experiment: proposed Lettuce fix) ours Lettuce blocking 8 threads, reply on caller thread / plain EVALSHA",
                "ours-lettuce-8t-ct",
                "evalsha-lettuce-8t");
        blocking(
                ratios,
                "(async, for reference) ours Lettuce async / plain Lettuce async EVALSHA",
                "ours-lettuce-async",
                "evalsha-lettuce-async");
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
        return ratios;
    }

    private void blocking(List<Ratio> ratios, String what, String ours, String plain) {
        ratios.add(new Ratio(what, ratio(rate(ours), rate(plain)), 0.95, fmt(rate(ours)), fmt(rate(plain))));
    }

    String ratiosMarkdown() {
        StringBuilder out = new StringBuilder();
        out.append(
                "| Ratio (same run) | Measured | Target | Verdict | Numerator (decisions/s) | Denominator (decisions/s) |\n");
        out.append("|---|---:|---:|---|---:|---:|\n");
        for (Ratio ratio : ratios()) {
            out.append("| ")
                    .append(ratio.what())
                    .append(" | ")
                    .append(ratio.value() == null ? "-" : String.format(Locale.ROOT, "%.3f×", ratio.value()))
                    .append(" | ≥ ")
                    .append(String.format(Locale.ROOT, "%.2f×", ratio.target()))
                    .append(" | ")
                    .append(ratio.verdict())
                    .append(" | ")
                    .append(ratio.numerator())
                    .append(" | ")
                    .append(ratio.denominator())
                    .append(" |\n");
        }
        boolean oneTrip = true;
        StringBuilder trips = new StringBuilder();
        for (RoundTrips.Result result : roundTrips) {
            if (result.label().startsWith("ours")) {
                oneTrip &= Math.abs(result.roundTrips() - 1.0) < 0.005;
                trips.append(String.format(Locale.ROOT, "%.2f ", result.roundTrips()));
            }
        }
        out.append("| ours: Redis round trips per decision, 1 and 2 windows, Lettuce and Jedis (MONITOR) | ")
                .append(trips.toString().trim())
                .append(" | = 1 | ")
                .append(roundTrips.isEmpty() ? "not measured" : oneTrip ? "holds" : "**missed**")
                .append(" | | |\n");
        return out.toString();
    }

    private String markdown(String pngName) {
        StringBuilder out = new StringBuilder();
        out.append("# Benchmarks\n\n");
        out.append("Generated by `ratelimit-benchmarks` (`dev.ratelimit.benchmarks.BenchmarkRunner`) from one run on ")
                .append(machine.startedAt())
                .append(" (commit ")
                .append(commit())
                .append("). Reproduce with:\n\n```\n")
                .append(COMMAND)
                .append("\n```\n\n");
        out.append(
                        "It starts a private `redis-server` on a free port in a temporary directory (never the shared one), ")
                .append(
                        "runs `redis-benchmark`, the JMH benchmarks, the round-trip and memory measurements, writes this file ")
                .append("and `")
                .append(pngName)
                .append("`, and stops Redis (about 12 minutes). `--quick` makes every figure one ")
                .append("short iteration (smoke test); `--only REGEX` selects JMH figures by id.\n\n");
        if (machine.quick()) {
            out.append(
                    "> **Smoke run (`--quick`)**: one short iteration per figure; the numbers are not meant to be compared.\n\n");
        }
        out.append("**Machine**: a shared 2-core machine (")
                .append(machine.describe())
                .append("; load average after: ")
                .append(machine.loadAfter())
                .append("), Redis ")
                .append(machine.redisVersion())
                .append(
                        ". Redis, `redis-benchmark` and the JVM under test share these 2 cores, so every figure includes ")
                .append(
                        "the client's CPU cost competing with Redis: ratios within the run are meaningful, absolute numbers are ")
                .append("not portable. Whole run: ")
                .append(elapsed.toMinutes())
                .append(" min.\n\n");
        out.append("**Method**: ")
                .append(settings)
                .append(
                        ". Throughput is derived from the sampled mean time per call (threads / mean); p50/p99 are JMH's sampled ")
                .append(
                        "percentiles of one call. For the asynchronous figures a call's time is the wait for room among the 64 in ")
                .append(
                        "flight, so only throughput is reported (latency ≈ 64 / throughput by Little's law). One fork per figure: on this shared machine a figure varies by up to about ±10% from run to run (peers more, up to about 20%), so a ratio within a few percent of its target can land on either side in another run; the two figures of each ratio run back to back. Each JMH figure starts ")
                .append("on an emptied Redis (`FLUSHALL` of the private server).\n\n");
        out.append("**Workload** (the same for every contender): one request per decision; limits far above what a ")
                .append(
                        "trial can reach, so decisions are allowed ones that record the request (the full cost of a decision): ")
                .append(String.format(
                        Locale.ROOT,
                        "%,d per minute, and for two-window (tier) checks also %,d per day",
                        Workload.LIMIT_PER_MINUTE,
                        Workload.LIMIT_PER_DAY))
                .append(
                        ". *Spread*: each decision for one of 10,000 users chosen uniformly at random; *contended*: every ")
                .append(
                        "decision for one user. Ours uses the full `RateLimiter` (validation, windows ordered, circuit breaker, ")
                .append(
                        "`Decision`), built fail-closed so that a store failure would fail the run instead of counting as a fast ")
                .append(
                        "allowed decision. The plain `EVALSHA` figures send the same script with the same keys and arguments ")
                .append(
                        "and nothing else. Bucket4j 8.19: `Bucket4jLettuce.casBasedBuilder` over one Lettuce connection, ")
                .append("a bucket with capacity = limit refilled greedily over the window (one bandwidth per window), ")
                .append(
                        "`tryConsume(1)`. Redisson 4.3: `RRateLimiter` (`OVERALL`, rate = limit per window, keep-alive = window + 1 s), ")
                .append(
                        "`tryAcquire()`; its rate is set for every user before measuring; with two windows a user has two ")
                .append(
                        "limiters, checked in turn. Pools: Jedis and Redisson 16 connections; Lettuce one shared connection.\n\n");

        out.append("## Targets\n\n").append(ratiosMarkdown()).append('\n');

        out.append("![decisions per second](").append(pngName).append(")\n\n");

        out.append("## Throughput and latency (JMH)\n\n");
        out.append(
                "| Id | Contender | Keys | Windows | Threads / in flight | Decisions/s | p50 µs | p99 µs | Rejected | Failed |\n");
        out.append("|---|---|---|---:|---|---:|---:|---:|---:|---:|\n");
        Map<String, long[]> outcomeCounts = outcomeCounts();
        for (JmhRun.Figures f : figures) {
            JmhRun run = f.run();
            long[] counts = outcomeCounts.get(outcomeKey(run));
            out.append("| ")
                    .append(run.id())
                    .append(" | ")
                    .append(run.contender())
                    .append(" | ")
                    .append(run.keys())
                    .append(" | ")
                    .append(run.windows())
                    .append(" | ")
                    .append(
                            run.isAsync()
                                    ? "64 in flight"
                                    : run.threads() + (run.threads() == 1 ? " thread" : " threads"))
                    .append(" | ")
                    .append(fmt(f.decisionsPerSecond()))
                    .append(" | ")
                    .append(micros(f.p50Micros()))
                    .append(" | ")
                    .append(micros(f.p99Micros()))
                    .append(" | ")
                    .append(counts == null ? "-" : Long.toString(counts[0]))
                    .append(" | ")
                    .append(counts == null ? "-" : Long.toString(counts[1]))
                    .append(" |\n");
        }
        out.append(
                        "\nRejected/Failed: decisions that were rejections (the limits are set so there should be none) and ")
                .append(
                        "asynchronous calls that failed, counted over the whole trial including warm-up. Other JVMs: the most Java ")
                .append(
                        "processes not started by this run (other builds or tests on the shared machine) seen just before or just ")
                .append("after the figure; 0 means nothing else was running then. The in-memory store ")
                .append(
                        "runs only on spread keys: on one key it reaches the per-minute limit within a second and would measure ")
                .append("rejections.\n\n");

        out.append("## Redis ceiling (`redis-benchmark`)\n\n");
        out.append(
                        "`redis-benchmark ... EVALSHA <sha> 1 <key> \"\" 1 <random member> 60000 1000000`: our script, server time, ")
                .append("one window, random members (`__rand_int__`).\n\n");
        out.append(
                "| Run | Keys | Clients | Pipeline | Requests | Requests/s | p50 ms | p99 ms |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (RedisBenchmarkTool.Result c : ceilings) {
            out.append("| ")
                    .append(c.label())
                    .append(" | ")
                    .append(c.keys())
                    .append(" | ")
                    .append(c.clients())
                    .append(" | ")
                    .append(c.pipeline())
                    .append(" | ")
                    .append(fmt(c.requests()))
                    .append(" | ")
                    .append(fmt(c.rps()))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", c.p50Ms()))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", c.p99Ms()))
                    .append(" |\n");
        }

        out.append("\n## Round trips and Redis work per decision\n\n");
        out.append(
                        "Round trips: commands sent by the client, counted with `MONITOR` (commands a script runs are tagged `lua` ")
                .append(
                        "and not counted). The other columns come from a second pass of the same decisions without MONITOR. Executed: every command Redis ran per decision, scripts' included, from ")
                .append(
                        "`INFO commandstats` deltas after `CONFIG RESETSTAT`. Redis µs / decision: commandstats `usec` of the client's ")
                .append(
                        "commands (a script's time includes the commands it runs; reading, parsing and answering each round trip ")
                .append("costs Redis more on top). ")
                .append("Counted after a warm-up, so connection set-up is excluded.\n\n");
        out.append(
                "| Contender | Workload | Decisions | Round trips / decision | Client commands / decision | Executed commands / decision (commandstats) | Redis µs / decision |\n");
        out.append("|---|---|---:|---:|---|---|---:|\n");
        for (RoundTrips.Result r : roundTrips) {
            out.append("| ")
                    .append(r.label())
                    .append(" | ")
                    .append(r.workload())
                    .append(" | ")
                    .append(fmt(r.decisions()))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.2f", r.roundTrips()))
                    .append(" | ")
                    .append(r.clientSummary())
                    .append(" | ")
                    .append(r.executedSummary())
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.1f", r.serverMicros()))
                    .append(" |\n");
        }

        out.append("\n## Redis memory per tenant at full budget\n\n");
        out.append(
                        "`MEMORY USAGE <key> SAMPLES 0` summed over every key of one tenant whose budget is used up, per default tier ")
                .append(
                        "(free 5/min + 100/day, pro 60/min + 5,000/day, enterprise 600/min + 100,000/day). Ours: an injected clock ")
                .append(
                        "spreads day − minute requests over the day, then the minute's requests come in one burst, so both windows ")
                .append(
                        "are full. Redisson: each of its two limiters takes its limit of single-permit acquires. Bucket4j: a token ")
                .append(
                        "bucket's state has a fixed size whatever its token count, so one consume of the minute capacity exhausts it.\n\n");
        out.append(
                "| Tier | Contender | Keys | Bytes | Bytes per recorded request | Check |\n|---|---|---:|---:|---:|---|\n");
        for (MemoryPerTenant.Result m : memory) {
            int requests = requestsFor(m);
            out.append("| ")
                    .append(m.tier())
                    .append(" | ")
                    .append(m.contender())
                    .append(" | ")
                    .append(m.keys())
                    .append(" | ")
                    .append(fmt(m.bytes()))
                    .append(" | ")
                    .append(requests == 0 ? "-" : String.format(Locale.ROOT, "%.0f", m.bytes() / (double) requests))
                    .append(" | ")
                    .append(m.note())
                    .append(" |\n");
        }
        out.append(
                        "\nA sliding log stores one entry per request in each window: that is the price of exactness (and of an exact ")
                .append(
                        "Retry-After); a token bucket stores a few numbers. Keys expire one second after their window, so an idle ")
                .append("tenant costs nothing.\n");
        return out.toString();
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
                .title("Rate-limit decisions per second, one window, same run (" + machine.cores()
                        + "-core shared machine" + (machine.quick() ? ", SMOKE RUN" : "") + ")")
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
                    byRun.put(outcomeKey(f.run()), entries.get(i).getValue());
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

    private static String outcomeKey(JmhRun run) {
        return run.id();
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
