package dev.ratelimit.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * How many streamed chat completions one gateway process holds open at once: for each count N
 * ({@code --streams 1000,3000,10000}), a fresh gateway (a separate JVM, {@code java -jar
 * ratelimit-gateway/target/ratelimit-gateway.jar}, budgets in memory) is sent N streams at once, each
 * answered by a local non-blocking upstream ({@link StreamStub}, a JVM of its own) with
 * {@code --chunks} chunks spread over {@code --seconds}, then its usage chunk and {@code [DONE]}. A
 * sample of streams ({@code --sample}) goes straight to the upstream at the same moment, for the time
 * to first byte the gateway adds. Every 500 ms it samples the gateway's threads, RSS, open file
 * descriptors and heap (its {@code /metrics}) and the upstream's open streams; at the plateau it takes
 * the gateway's live heap after a full GC ({@code jcmd GC.run}) for the heap per open stream.
 *
 * <p>Options (or system properties {@code streams.<option>}): {@code --streams}, {@code --seconds}
 * (30), {@code --chunks} (30), {@code --sample} (100), {@code --destinations} (1: the upstream's
 * listeners, each a destination of its own for the gateway's client, reached through one model
 * each), {@code --max-threads}, {@code --max-connections}, {@code --client-idle-timeout-ms} (the
 * gateway's {@code server.*} settings, written only when given: a gateway without them refuses
 * them), {@code --upstream-http} ({@code 1.1}, or {@code 2}: the upstream's {@code http-version},
 * h2c, so the streams share a few upstream connections), {@code --gateway-jar}, {@code --gateway-xmx} (2g), {@code --warmup} (200), {@code
 * --deadline-seconds} (1200), {@code --label}, {@code --out FILE} (the markdown, also printed),
 * {@code --samples DIR} (the CSV of the samples and the gateway's output). Children start under
 * {@code ulimit -n 1048576}, or the hard limit when that is lower.
 *
 * <p>Run from the repository root: {@code ./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package
 * -DskipTests && java -cp benchmarks/ratelimit-benchmarks/target/benchmarks.jar
 * dev.ratelimit.benchmarks.GatewayStreams}.
 */
public final class GatewayStreams {

    private static final Pattern LISTENING = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");
    private static final Pattern MANAGEMENT = Pattern.compile("management: (http://127\\.0\\.0\\.1:\\d+)");
    private static final Pattern STUB = Pattern.compile("stub listening on (\\S+)");
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
    private static final Pattern ERROR_CODE = Pattern.compile("\"code\":\"([a-z_]+)\"");
    private static final String RAISE_FDS = "ulimit -n 1048576 2>/dev/null || ulimit -n \"$(ulimit -Hn)\"; exec \"$@\"";
    private static final long SAMPLE_MILLIS = 500;

    private GatewayStreams() {}

    /** What a run is asked to do. */
    record Options(
            List<Integer> counts,
            int seconds,
            int chunks,
            int sample,
            int destinations,
            @Nullable Integer maxThreads,
            @Nullable Integer maxConnections,
            @Nullable Integer clientIdleTimeoutMs,
            String upstreamHttp,
            Path gatewayJar,
            String gatewayXmx,
            int warmup,
            int deadlineSeconds,
            String label,
            @Nullable Path out,
            Path samples) {

        static Options parse(String[] args) throws IOException {
            Map<String, String> given = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                if (args[i].startsWith("--")) {
                    String key = args[i].substring(2);
                    given.put(key, i + 1 < args.length && !args[i + 1].startsWith("--") ? args[++i] : "true");
                }
            }
            return new Options(
                    Arrays.stream(option(given, "streams", "1000,3000,10000").split(","))
                            .map(String::trim)
                            .map(Integer::parseInt)
                            .toList(),
                    Integer.parseInt(option(given, "seconds", "30")),
                    Integer.parseInt(option(given, "chunks", "30")),
                    Integer.parseInt(option(given, "sample", "100")),
                    Integer.parseInt(option(given, "destinations", "1")),
                    optionalInt(given, "max-threads"),
                    optionalInt(given, "max-connections"),
                    optionalInt(given, "client-idle-timeout-ms"),
                    option(given, "upstream-http", "1.1"),
                    Path.of(option(given, "gateway-jar", "ratelimit-gateway/target/ratelimit-gateway.jar")),
                    option(given, "gateway-xmx", "2g"),
                    Integer.parseInt(option(given, "warmup", "200")),
                    Integer.parseInt(option(given, "deadline-seconds", "1200")),
                    option(given, "label", "gateway"),
                    given.containsKey("out") || System.getProperty("streams.out") != null
                            ? Path.of(option(given, "out", ""))
                            : null,
                    given.containsKey("samples") || System.getProperty("streams.samples") != null
                            ? Path.of(option(given, "samples", ""))
                            : Files.createTempDirectory("gateway-streams"));
        }

        private static String option(Map<String, String> given, String key, String fallback) {
            String value = given.get(key);
            return value != null ? value : System.getProperty("streams." + key, fallback);
        }

        private static @Nullable Integer optionalInt(Map<String, String> given, String key) {
            String value = option(given, key, "");
            return value.isEmpty() ? null : Integer.valueOf(value);
        }
    }

    /** What one count of streams measured. */
    record Measured(
            int streams,
            int completed,
            Map<String, Integer> failures,
            int peakOpenUpstream,
            double wallSeconds,
            int threadsIdle,
            int threadsPeak,
            long rssIdleKb,
            long peakRssKb,
            int fdsPeak,
            long fdLimit,
            long heapIdle,
            long heapPlateau,
            int openAtPlateau,
            long heapSampledPeak,
            Histogram ttfb,
            Histogram direct,
            int directCompleted,
            int directCount,
            String loadBefore,
            String loadAfter,
            int tooManyOpenFiles,
            int threadsAtStart,
            int inFlightAtPlateau,
            Map<String, Long> tcp) {

        double heapPerStreamKb() {
            return openAtPlateau <= 0 || heapIdle < 0 || heapPlateau < 0
                    ? Double.NaN
                    : (heapPlateau - heapIdle) / 1024.0 / openAtPlateau;
        }
    }

    /**
     * Runs the measurement, or the upstream alone ({@code --upstream}, in the child JVM).
     *
     * @param args the options above
     * @throws Exception if a part cannot start
     */
    public static void main(String[] args) throws Exception {
        if (List.of(args).contains("--upstream")) {
            upstreamChild(args);
            return;
        }
        Options options = Options.parse(args);
        Files.createDirectories(options.samples());
        Machine machine = Machine.now(false);
        String ports = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                .get(0)
                .trim()
                .replaceAll("\\s+", " to ");
        long selfFds = fdLimit(ProcessHandle.current().pid());
        int most = options.counts().stream().mapToInt(Integer::intValue).max().orElse(0);
        log("benchmark JVM: open files limit " + selfFds + "; ephemeral ports " + ports + "; samples in "
                + options.samples());
        if (selfFds < most + options.sample() + 1_000L) {
            log("WARNING: the benchmark JVM's open files limit (" + selfFds + ") is below " + most
                    + " streams plus the sample: start it under a higher `ulimit -n`");
        }
        Process stubProcess = child(
                List.of(
                        java(),
                        "-Xmx1g",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-cp",
                        System.getProperty("java.class.path"),
                        GatewayStreams.class.getName(),
                        "--upstream",
                        "--destinations",
                        String.valueOf(options.destinations())),
                Map.of());
        List<String> stubUrls = List.of(awaitLine(stubProcess, STUB).split(","));
        log("upstream (pid " + stubProcess.pid() + ", open files limit " + fdLimit(stubProcess.pid()) + "): "
                + stubUrls);

        QueuedThreadPool clientThreads = new QueuedThreadPool(200);
        clientThreads.setName("bench-client");
        clientThreads.setDaemon(true);
        HttpClient client = new HttpClient();
        client.setExecutor(clientThreads);
        client.setMaxConnectionsPerDestination(most + options.sample() + options.warmup() + 64);
        client.setMaxRequestsQueuedPerDestination(2 * (most + options.sample() + options.warmup()) + 64);
        client.setConnectTimeout(TimeUnit.SECONDS.toMillis(120));
        client.setIdleTimeout(TimeUnit.SECONDS.toMillis(options.deadlineSeconds()));
        client.setUserAgentField(null);
        client.start();

        List<Measured> results = new ArrayList<>();
        try {
            for (int count : options.counts()) {
                results.add(measure(client, options, stubUrls, count));
            }
        } finally {
            client.stop();
            stop(stubProcess);
        }
        String report = report(options, machine.finished(), ports, selfFds, results);
        if (options.out() != null) {
            Files.writeString(options.out(), report);
        }
        System.out.println(report);
    }

    private static void upstreamChild(String[] args) throws Exception {
        int at = List.of(args).indexOf("--destinations");
        int destinations = at >= 0 ? Integer.parseInt(args[at + 1]) : 1;
        StreamStub stub = StreamStub.start(destinations);
        System.out.println("stub listening on " + String.join(",", stub.urls()));
        System.out.flush();
        // the parent holds this pipe open: its end (the parent gone, however) ends the stub
        while (System.in.read() >= 0) {
            // nothing is sent on it
        }
        stub.stop();
        System.exit(0);
    }

    private static Measured measure(HttpClient client, Options options, List<String> stubUrls, int count)
            throws Exception {
        Path config = options.samples().resolve("gateway-" + count + ".yaml");
        Files.writeString(config, config(options, stubUrls));
        Path gatewayLog = options.samples().resolve("gateway-" + count + ".log");
        String loadBefore = Machine.load();
        log(count + " streams: load " + loadBefore + "; starting the gateway");
        Process gateway = child(
                List.of(
                        java(),
                        "-Xmx" + options.gatewayXmx(),
                        "-jar",
                        options.gatewayJar().toString()),
                Map.of("GATEWAY_CONFIG", config.toAbsolutePath().toString()));
        gateway.getOutputStream().close();
        GatewayOutput output = new GatewayOutput(gateway, gatewayLog);
        try {
            String api = output.api.get(180, TimeUnit.SECONDS);
            String management = output.management.get(10, TimeUnit.SECONDS);
            long pid = gateway.pid();
            long fdLimit = fdLimit(pid);
            ProcStatus fresh = ProcStatus.read(pid);
            log("gateway pid " + pid + " at " + api + ", management " + management + ", open files limit " + fdLimit);

            int warm = Math.min(options.warmup(), count);
            if (warm > 0) {
                log("warm-up: " + warm + " streams of 2 s");
                Load warmup = new Load(client, api, stubUrls, options, warm, 0, 2_000, 4);
                warmup.send();
                if (!warmup.latch.await(10, TimeUnit.MINUTES)) {
                    log("warm-up did not finish in 10 minutes");
                }
                log("warm-up: " + warmup.completed() + " of " + warm + " completed");
            }
            Thread.sleep(3_000);
            long heapIdle = heapAfterGc(pid);
            ProcStatus idle = ProcStatus.read(pid);
            stubStats(client, stubUrls.get(0), true);
            log("idle: heap after GC " + heapIdle / 1024 + " KB, " + idle.threads + " threads, RSS " + idle.rssKb
                    + " KB");

            Map<String, Long> tcpBefore = tcpCounters();
            Sampler sampler = new Sampler(client, pid, management, stubUrls.get(0), options.samples(), count);
            Load load = new Load(
                    client,
                    api,
                    stubUrls,
                    options,
                    count,
                    Math.min(options.sample(), count),
                    options.seconds() * 1_000L,
                    options.chunks());
            sampler.load = load;
            sampler.start();
            long started = System.nanoTime();
            load.send();
            log("sent " + count + " streams and " + load.direct.length + " direct in "
                    + (System.nanoTime() - started) / 1_000_000 + " ms");

            // the plateau: the upstream's open streams have not grown for 3 s (or 60 % of a stream's time)
            long limit = started + TimeUnit.SECONDS.toNanos(options.seconds()) * 6 / 10;
            int most = 0;
            long grew = System.nanoTime();
            while (System.nanoTime() < limit && load.latch.getCount() > 0) {
                Thread.sleep(SAMPLE_MILLIS);
                int open = sampler.stubOpen;
                if (open > most) {
                    most = open;
                    grew = System.nanoTime();
                } else if (open > 0 && System.nanoTime() - grew >= TimeUnit.SECONDS.toNanos(3)) {
                    break;
                }
            }
            long heapPlateau = heapAfterGc(pid);
            int openAtPlateau = stubStats(client, stubUrls.get(0), false)[0];
            int inFlightAtPlateau = load.unfinished();
            log("plateau at " + (System.nanoTime() - started) / 1_000_000 + " ms: " + openAtPlateau
                    + " open at the upstream, " + inFlightAtPlateau + " through the gateway unfinished, "
                    + load.waiting() + " sent without an answer yet, heap after GC "
                    + heapPlateau / 1024 + " KB");

            if (!load.latch.await(options.deadlineSeconds(), TimeUnit.SECONDS)) {
                log("deadline: " + load.latch.getCount() + " streams unfinished after " + options.deadlineSeconds()
                        + " s");
            }
            double wall = (load.lastEnd() - started) / 1e9;
            Map<String, Long> tcp = new LinkedHashMap<>();
            tcpCounters().forEach((name, value) -> tcp.put(name, value - tcpBefore.getOrDefault(name, value)));
            sampler.stop();
            ProcStatus end = ProcStatus.read(pid);
            int[] stub = stubStats(client, stubUrls.get(0), false);
            Measured result = new Measured(
                    count,
                    load.completed(),
                    load.failures(),
                    stub[1],
                    wall,
                    idle.threads,
                    Math.max(sampler.threadsPeak, end.threads),
                    idle.rssKb,
                    Math.max(end.hwmKb, sampler.hwmPeak),
                    sampler.fdsPeak,
                    fdLimit,
                    heapIdle,
                    heapPlateau,
                    openAtPlateau,
                    sampler.heapPeak,
                    load.ttfb(load.streams),
                    load.ttfb(load.direct),
                    Load.completed(load.direct),
                    load.direct.length,
                    loadBefore,
                    Machine.load(),
                    output.tooManyOpenFiles.get(),
                    fresh.threads,
                    inFlightAtPlateau,
                    tcp);
            log(count + " streams: " + result.completed() + " completed, failures " + result.failures()
                    + ", peak open at the upstream " + result.peakOpenUpstream() + ", wall "
                    + String.format(Locale.ROOT, "%.1f s", wall) + ", threads " + result.threadsIdle() + " → "
                    + result.threadsPeak() + ", peak RSS " + result.peakRssKb() + " KB, fds peak "
                    + result.fdsPeak() + ", heap per open stream "
                    + String.format(Locale.ROOT, "%.1f KB", result.heapPerStreamKb()));
            return result;
        } finally {
            stop(gateway);
        }
    }

    private static String config(Options options, List<String> stubUrls) {
        StringBuilder yaml = new StringBuilder("""
                keys:
                  - { key: bench-key, tenant: bench, tier: unlimited }
                tiers:
                  unlimited:
                    max-concurrent: 1000000
                    windows: { minute: 1000000000/1m, day: 1000000000/1d }
                models:
                  "*": { rpm: 1000000000, tpm: 1000000000000 }
                upstreams:
                """);
        for (int i = 0; i < stubUrls.size(); i++) {
            yaml.append("  stub")
                    .append(i)
                    .append(": { url: ")
                    .append(stubUrls.get(i))
                    .append("/v1, protocol: openai, models: [\"")
                    .append(model(i, stubUrls.size()))
                    .append("\"]")
                    .append(options.upstreamHttp().equals("1.1") ? "" : ", http-version: " + options.upstreamHttp())
                    .append(" }\n");
        }
        if (options.maxThreads() != null || options.maxConnections() != null || options.clientIdleTimeoutMs() != null) {
            yaml.append("server:\n");
            if (options.maxThreads() != null) {
                yaml.append("  max-threads: ").append(options.maxThreads()).append('\n');
            }
            if (options.maxConnections() != null) {
                yaml.append("  max-connections: ")
                        .append(options.maxConnections())
                        .append('\n');
            }
            if (options.clientIdleTimeoutMs() != null) {
                yaml.append("  client-idle-timeout-ms: ")
                        .append(options.clientIdleTimeoutMs())
                        .append('\n');
            }
        }
        return yaml.toString();
    }

    /** The model routed to the upstream's listener {@code i}: one model per destination. */
    private static String model(int i, int destinations) {
        return destinations == 1 ? "gpt-4o-mini" : "gpt-4o-mini-d" + i;
    }

    /** N streams through the gateway and a sample straight to the upstream, sent at once. */
    private static final class Load {
        final HttpClient client;
        final String api;
        final List<String> stubUrls;
        final StreamCall[] streams;
        final StreamCall[] direct;
        final CountDownLatch latch;
        final long millis;
        final int chunks;
        final AtomicInteger answered = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final AtomicInteger endedUnanswered = new AtomicInteger();
        final int deadlineSeconds;

        Load(
                HttpClient client,
                String api,
                List<String> stubUrls,
                Options options,
                int count,
                int sample,
                long millis,
                int chunks) {
            this.client = client;
            this.api = api;
            this.stubUrls = stubUrls;
            this.streams = new StreamCall[count];
            this.direct = new StreamCall[sample];
            this.latch = new CountDownLatch(count + sample);
            this.millis = millis;
            this.chunks = chunks;
            this.deadlineSeconds = options.deadlineSeconds();
        }

        void send() {
            int step = direct.length == 0 ? Integer.MAX_VALUE : Math.max(1, streams.length / direct.length);
            int sent = 0;
            for (int i = 0; i < streams.length; i++) {
                String model = model(i % stubUrls.size(), stubUrls.size());
                streams[i] = new StreamCall(this);
                send(api + "/v1/chat/completions", model, streams[i]);
                if (i % step == 0 && sent < direct.length) {
                    direct[sent] = new StreamCall(this);
                    send(stubUrls.get(sent % stubUrls.size()) + "/direct/v1/chat/completions", model, direct[sent]);
                    sent++;
                }
            }
        }

        private void send(String url, String model, StreamCall stream) {
            String body = "{\"model\":\"" + model + "\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                    + "\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"bench ms=" + millis
                    + " chunks=" + chunks + "\"}]}";
            stream.start = System.nanoTime();
            client.newRequest(url)
                    .method(HttpMethod.POST)
                    .headers(headers -> headers.put(HttpHeader.AUTHORIZATION, "Bearer bench-key"))
                    .body(new StringRequestContent("application/json", body))
                    .idleTimeout(deadlineSeconds, TimeUnit.SECONDS)
                    .send(stream);
        }

        int completed() {
            return completed(streams);
        }

        /** Streams through the gateway not ended yet. */
        int unfinished() {
            return (int)
                    Arrays.stream(streams).filter(stream -> stream.end == 0).count();
        }

        static int completed(StreamCall[] streams) {
            return (int) Arrays.stream(streams).filter(StreamCall::completed).count();
        }

        /** Sent, neither answered nor ended. */
        int waiting() {
            return streams.length + direct.length - answered.get() - endedUnanswered.get();
        }

        Map<String, Integer> failures() {
            Map<String, Integer> failures = new TreeMap<>();
            for (StreamCall stream : streams) {
                if (!stream.completed()) {
                    String reason = stream.reason();
                    if (failures.merge(reason, 1, Integer::sum) == 1) {
                        log("failure '" + reason + "', first one: " + stream.detail);
                    }
                }
            }
            return failures;
        }

        long lastEnd() {
            return Stream.concat(Arrays.stream(streams), Arrays.stream(direct))
                    .mapToLong(stream -> stream.end == 0 ? System.nanoTime() : stream.end)
                    .max()
                    .orElse(System.nanoTime());
        }

        Histogram ttfb(StreamCall[] which) {
            Histogram histogram = new Histogram(3);
            for (StreamCall stream : which) {
                if (stream.status == 200 && stream.firstByte != 0) {
                    histogram.recordValue(Math.max(0, (stream.firstByte - stream.start) / 1_000));
                }
            }
            return histogram;
        }
    }

    /** One stream as the client sees it: its status, first byte, usage chunk, [DONE] and ending. */
    private static final class StreamCall implements Response.Listener {
        private final Load load;
        private final StringBuilder line = new StringBuilder();
        private final StringBuilder errorBody = new StringBuilder();
        long start;
        volatile long firstByte;
        volatile long end;
        volatile int status;
        volatile boolean usage;
        volatile boolean done;
        volatile boolean errorEvent;
        volatile @Nullable String failure;
        volatile @Nullable String detail;

        StreamCall(Load load) {
            this.load = load;
        }

        @Override
        public void onHeaders(Response response) {
            status = response.getStatus();
            load.answered.incrementAndGet();
        }

        @Override
        public void onContent(Response response, ByteBuffer content) {
            if (firstByte == 0) {
                firstByte = System.nanoTime();
            }
            while (content.hasRemaining()) {
                char c = (char) (content.get() & 0xff);
                if (status != 200) {
                    if (errorBody.length() < 400) {
                        errorBody.append(c);
                    }
                } else if (c == '\n') {
                    line(line.toString());
                    line.setLength(0);
                } else if (line.length() < 8_192) {
                    line.append(c);
                }
            }
        }

        private void line(String text) {
            if (!text.startsWith("data: ")) {
                return;
            }
            String data = text.substring(6);
            if (data.equals("[DONE]")) {
                done = true;
            } else if (data.contains("\"usage\":{") && data.contains("\"total_tokens\"")) {
                usage = true;
            } else if (data.startsWith("{\"error\"")) {
                errorEvent = true;
                Matcher code = ERROR_CODE.matcher(data);
                failure = "error event" + (code.find() ? " " + code.group(1) : "");
            }
        }

        @Override
        public void onComplete(Result result) {
            end = System.nanoTime();
            if (result.isFailed() && failure == null) {
                Throwable cause = result.getFailure();
                failure = cause.getClass().getSimpleName()
                        + (status == 0 ? " before an answer" : firstByte == 0 ? " before a byte" : " mid-stream");
                detail = String.valueOf(cause);
            }
            if (status == 0) {
                load.endedUnanswered.incrementAndGet();
            } else if (status != 200) {
                detail = errorBody.toString();
            }
            load.ended.incrementAndGet();
            load.latch.countDown();
        }

        boolean completed() {
            return end != 0 && failure == null && status == 200 && usage && done && !errorEvent;
        }

        String reason() {
            if (end == 0) {
                return "unfinished at the deadline";
            }
            if (status != 200 && status != 0) {
                Matcher code = ERROR_CODE.matcher(errorBody);
                return "HTTP " + status + (code.find() ? " " + code.group(1) : "");
            }
            String why = failure;
            if (why != null) {
                return why;
            }
            return !usage ? "no usage chunk" : "no [DONE]";
        }
    }

    /** Samples the gateway and the upstream every 500 ms, keeping the peaks and a CSV line each. */
    private static final class Sampler {
        private final HttpClient client;
        private final long pid;
        private final String management;
        private final String stub;
        private final Path csv;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        volatile @Nullable Load load;
        volatile int stubOpen;
        volatile int threadsPeak;
        volatile long hwmPeak;
        volatile int fdsPeak;
        volatile long heapPeak = -1;

        Sampler(HttpClient client, long pid, String management, String stub, Path dir, int count) {
            this.client = client;
            this.pid = pid;
            this.management = management;
            this.stub = stub;
            this.csv = dir.resolve("samples-" + count + ".csv");
            this.thread = new Thread(this::run, "sampler");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(10_000);
        }

        private void run() {
            long started = System.nanoTime();
            try (Writer file = Files.newBufferedWriter(csv);
                    PrintWriter out = new PrintWriter(file)) {
                out.println("ms,gateway_threads,gateway_rss_kb,gateway_hwm_kb,gateway_fds,gateway_heap_used_bytes,"
                        + "upstream_open,client_answered,client_ended");
                while (running.get()) {
                    long at = System.nanoTime();
                    ProcStatus status = ProcStatus.read(pid);
                    int fds = countFds(pid);
                    long heap = heapFromMetrics();
                    int open = -1;
                    try {
                        open = stubStats(client, stub, false)[0];
                        stubOpen = open;
                    } catch (Exception e) {
                        // a sample missed under load: left blank
                    }
                    threadsPeak = Math.max(threadsPeak, status.threads);
                    hwmPeak = Math.max(hwmPeak, status.hwmKb);
                    fdsPeak = Math.max(fdsPeak, fds);
                    heapPeak = Math.max(heapPeak, heap);
                    Load current = load;
                    out.println((at - started) / 1_000_000 + "," + status.threads + "," + status.rssKb + ","
                            + status.hwmKb + "," + fds + "," + heap + "," + open + ","
                            + (current == null ? -1 : current.answered.get()) + ","
                            + (current == null ? -1 : current.ended.get()));
                    out.flush();
                    long sleep = SAMPLE_MILLIS - (System.nanoTime() - at) / 1_000_000;
                    if (sleep > 0) {
                        Thread.sleep(sleep);
                    }
                }
            } catch (IOException e) {
                log("sampler: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** The gateway's heap in use now (garbage included), from its {@code jvm_memory_used_bytes}. */
        private long heapFromMetrics() {
            try {
                ContentResponse response = client.newRequest(management + "/metrics")
                        .timeout(2, TimeUnit.SECONDS)
                        .send();
                long sum = 0;
                boolean found = false;
                for (String line : response.getContentAsString().split("\n")) {
                    if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
                        sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                        found = true;
                    }
                }
                return found ? sum : -1;
            } catch (Exception e) {
                return -1;
            }
        }
    }

    /** The gateway's threads and resident memory, from {@code /proc/<pid>/status}. */
    record ProcStatus(int threads, long rssKb, long hwmKb) {
        static ProcStatus read(long pid) {
            int threads = -1;
            long rss = -1;
            long hwm = -1;
            try {
                for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                    if (line.startsWith("Threads:")) {
                        threads = Integer.parseInt(line.substring(8).trim());
                    } else if (line.startsWith("VmRSS:")) {
                        rss = kb(line);
                    } else if (line.startsWith("VmHWM:")) {
                        hwm = kb(line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process is gone: nothing to read
            }
            return new ProcStatus(threads, rss, hwm);
        }

        private static long kb(String line) {
            return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
    }

    private static int countFds(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return (int) fds.count();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The kernel's counters of connections refused at a full listen queue and of SYN cookies sent,
     * from {@code /proc/net/netstat}: for the whole network namespace, so for every listener on it.
     */
    private static Map<String, Long> tcpCounters() {
        Map<String, Long> counters = new LinkedHashMap<>();
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/net/netstat"));
            for (int i = 0; i + 1 < lines.size(); i++) {
                if (lines.get(i).startsWith("TcpExt:") && lines.get(i + 1).startsWith("TcpExt:")) {
                    String[] names = lines.get(i).split("\\s+");
                    String[] values = lines.get(i + 1).split("\\s+");
                    for (int k = 1; k < names.length && k < values.length; k++) {
                        if (List.of("ListenOverflows", "ListenDrops", "SyncookiesSent")
                                .contains(names[k])) {
                            counters.put(names[k], Long.parseLong(values[k]));
                        }
                    }
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: no counters
        }
        return counters;
    }

    /** The soft limit of open files of a process, from {@code /proc/<pid>/limits}. */
    private static long fdLimit(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/limits"))) {
                if (line.startsWith("Max open files")) {
                    return Long.parseLong(line.substring(14).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown
        }
        return -1;
    }

    /** {@code open peak started finished failed directOpen} of the upstream; {@code reset} restarts its peak. */
    private static int[] stubStats(HttpClient client, String stub, boolean reset) throws Exception {
        ContentResponse response = client.newRequest(stub + "/stats" + (reset ? "?reset" : ""))
                .timeout(5, TimeUnit.SECONDS)
                .send();
        return Arrays.stream(response.getContentAsString().trim().split(" "))
                .mapToInt(Integer::parseInt)
                .toArray();
    }

    /** The gateway's live heap: a full GC, then the heap in use, by {@code jcmd}; -1 when jcmd fails. */
    private static long heapAfterGc(long pid) throws InterruptedException {
        try {
            jcmd(pid, "GC.run");
            Matcher used = HEAP_USED.matcher(jcmd(pid, "GC.heap_info"));
            return used.find() ? Long.parseLong(used.group(1)) * 1024 : -1;
        } catch (IOException e) {
            log("jcmd: " + e);
            return -1;
        }
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process process = new ProcessBuilder(
                        Files.exists(jcmd) ? jcmd.toString() : "jcmd", String.valueOf(pid), command)
                .redirectErrorStream(true)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(120, TimeUnit.SECONDS);
        return out;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A child process under the highest open-files limit allowed: 1048576, or the hard limit. */
    private static Process child(List<String> command, Map<String, String> environment) throws IOException {
        List<String> shell = new ArrayList<>(List.of("bash", "-c", RAISE_FDS, "bash"));
        shell.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(shell);
        builder.environment().put("PORT", "0");
        builder.environment().put("MANAGEMENT_PORT", "0"); // never the default 8081, which may be taken
        builder.environment().put("ACCESS_LOG", "off");
        builder.environment().remove("UPSTREAM_URL");
        builder.environment().remove("REDIS_URL");
        builder.environment().remove("REDIS_CLUSTER_URL");
        builder.environment().remove("RATE_LIMIT_DISABLED");
        builder.environment().putAll(environment);
        builder.redirectErrorStream(true);
        Process process = builder.start();
        // a benchmark stopped from outside must not leave its children running
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "child-reaper"));
        return process;
    }

    /** Reads a child's output to its end, completing with the first group of {@code pattern}. */
    private static String awaitLine(Process process, Pattern pattern) throws Exception {
        CompletableFuture<String> found = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    Matcher matcher = pattern.matcher(line);
                    if (matcher.find()) {
                        found.complete(matcher.group(1));
                    } else {
                        System.err.println("[upstream] " + line);
                    }
                }
                found.completeExceptionally(new IllegalStateException("the child exited before " + pattern));
            } catch (IOException e) {
                found.completeExceptionally(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        return found.get(120, TimeUnit.SECONDS);
    }

    /** The gateway's output: its two addresses, every line to a file, the "Too many open files" counted. */
    private static final class GatewayOutput {
        final CompletableFuture<String> api = new CompletableFuture<>();
        final CompletableFuture<String> management = new CompletableFuture<>();
        final AtomicInteger tooManyOpenFiles = new AtomicInteger();

        GatewayOutput(Process process, Path file) {
            Thread reader = new Thread(
                    () -> {
                        try (BufferedReader lines = new BufferedReader(
                                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                                PrintWriter out = new PrintWriter(Files.newBufferedWriter(file))) {
                            String line;
                            while ((line = lines.readLine()) != null) {
                                out.println(line);
                                out.flush();
                                Matcher matcher = LISTENING.matcher(line);
                                if (matcher.find()) {
                                    api.complete(matcher.group(1));
                                }
                                matcher = MANAGEMENT.matcher(line);
                                if (matcher.find()) {
                                    management.complete(matcher.group(1));
                                }
                                if (line.contains("Too many open files")) {
                                    tooManyOpenFiles.incrementAndGet();
                                }
                            }
                            api.completeExceptionally(new IllegalStateException("the gateway exited; see " + file));
                            management.completeExceptionally(new IllegalStateException("the gateway exited"));
                        } catch (IOException e) {
                            api.completeExceptionally(e);
                            management.completeExceptionally(e);
                        }
                    },
                    "gateway-output");
            reader.setDaemon(true);
            reader.start();
        }
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    static String report(Options options, Machine machine, String ports, long selfFds, List<Measured> results) {
        StringBuilder out = new StringBuilder();
        out.append(machine.line("the client, the upstream and the gateway")).append(".\n\n");
        out.append("Streams of ")
                .append(options.seconds())
                .append(" s, ")
                .append(options.chunks())
                .append(" chunks each then the usage chunk and `[DONE]`; gateway `-Xmx")
                .append(options.gatewayXmx())
                .append("`, ")
                .append(settings(options))
                .append("; ")
                .append(
                        options.destinations() == 1
                                ? "one upstream listener"
                                : options.destinations() + " upstream listeners (one model each, spread evenly)")
                .append("; open files limit ")
                .append(results.isEmpty() ? "?" : String.valueOf(results.get(0).fdLimit()))
                .append(" in the gateway, ")
                .append(selfFds)
                .append(" in the client; ephemeral ports ")
                .append(ports)
                .append(". TTFB: from sending the request to the first byte of the body; added: minus that of ")
                .append(options.sample())
                .append(" streams sent straight to the upstream at the same moment.\n\n");
        out.append(
                "| streams | completed | failed | peak open at upstream | wall time | gateway threads idle → peak"
                        + " | peak RSS | gateway fds peak | heap per open stream | TTFB p50 / p99 | added p50 / p99 | load before |\n");
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Measured r : results) {
            int failed =
                    r.failures().values().stream().mapToInt(Integer::intValue).sum();
            long p50 = r.ttfb().getValueAtPercentile(50);
            long p99 = r.ttfb().getValueAtPercentile(99);
            long d50 = r.direct().getValueAtPercentile(50);
            long d99 = r.direct().getValueAtPercentile(99);
            out.append(String.format(
                    Locale.ROOT,
                    "| %,d | %,d | %,d | %,d | %.1f s | %d → %d | %,d MB | %,d | %s | %s / %s | %s / %s | %s |\n",
                    r.streams(),
                    r.completed(),
                    failed,
                    r.peakOpenUpstream(),
                    r.wallSeconds(),
                    r.threadsIdle(),
                    r.threadsPeak(),
                    r.peakRssKb() / 1024,
                    r.fdsPeak(),
                    Double.isNaN(r.heapPerStreamKb())
                            ? "–"
                            : String.format(Locale.ROOT, "%.1f KB", r.heapPerStreamKb()),
                    time(p50),
                    time(p99),
                    r.ttfb().getTotalCount() == 0 || r.direct().getTotalCount() == 0 ? "–" : signed(p50 - d50),
                    r.ttfb().getTotalCount() == 0 || r.direct().getTotalCount() == 0 ? "–" : signed(p99 - d99),
                    r.loadBefore().split(" / ")[0]));
        }
        out.append('\n');
        for (Measured r : results) {
            out.append(String.format(
                    Locale.ROOT,
                    "- %,d streams: gateway threads %d when it started listening, %d after the warm-up;"
                            + " heap after a full GC %,d KB idle, %,d KB with %,d open at the upstream"
                            + " (%,d through the gateway unfinished);"
                            + " heap in use sampled at most %,d MB; RSS idle %,d MB; straight to the upstream %d of %d"
                            + " completed, TTFB p50 %s, p99 %s; load after %s",
                    r.streams(),
                    r.threadsAtStart(),
                    r.threadsIdle(),
                    r.heapIdle() / 1024,
                    r.heapPlateau() / 1024,
                    r.openAtPlateau(),
                    r.inFlightAtPlateau(),
                    r.heapSampledPeak() / 1024 / 1024,
                    r.rssIdleKb() / 1024,
                    r.directCompleted(),
                    r.directCount(),
                    time(r.direct().getValueAtPercentile(50)),
                    time(r.direct().getValueAtPercentile(99)),
                    r.loadAfter()));
            if (!r.failures().isEmpty()) {
                out.append("; failed: ");
                List<String> parts = new ArrayList<>();
                r.failures().forEach((why, n) -> parts.add(String.format(Locale.ROOT, "%,d %s", n, why)));
                out.append(String.join(", ", parts));
            }
            if (!r.tcp().isEmpty()) {
                List<String> parts = new ArrayList<>();
                r.tcp().forEach((name, n) -> parts.add(name + " +" + n));
                out.append("; kernel TCP counters during the run: ").append(String.join(", ", parts));
            }
            if (r.tooManyOpenFiles() > 0) {
                out.append("; the gateway logged \"Too many open files\" ")
                        .append(r.tooManyOpenFiles())
                        .append(" times");
            }
            out.append(".\n");
        }
        return out.toString();
    }

    private static String settings(Options options) {
        List<String> parts = new ArrayList<>();
        if (options.maxThreads() != null) {
            parts.add("`server.max-threads: " + options.maxThreads() + "`");
        }
        if (options.maxConnections() != null) {
            parts.add("`server.max-connections: " + options.maxConnections() + "`");
        }
        if (options.clientIdleTimeoutMs() != null) {
            parts.add("`server.client-idle-timeout-ms: " + options.clientIdleTimeoutMs() + "`");
        }
        if (!options.upstreamHttp().equals("1.1")) {
            parts.add("`http-version: " + options.upstreamHttp() + "` to the upstream");
        }
        return parts.isEmpty() ? "no `server.*` settings (the gateway's defaults)" : String.join(", ", parts);
    }

    private static String time(long micros) {
        if (micros < 10_000) {
            return micros + " µs";
        }
        if (micros < 10_000_000) {
            return String.format(Locale.ROOT, "%.1f ms", micros / 1000.0);
        }
        return String.format(Locale.ROOT, "%.1f s", micros / 1e6);
    }

    private static String signed(long micros) {
        return micros < 0 ? "−" + time(-micros) : "+" + time(micros);
    }

    private static void log(String message) {
        System.err.println("[gateway-streams] " + message);
    }
}
