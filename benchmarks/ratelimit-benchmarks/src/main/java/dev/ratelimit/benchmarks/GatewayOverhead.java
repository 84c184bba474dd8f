package dev.ratelimit.benchmarks;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * Measures what the gateway adds: the same chat completions, plain and streamed, sent to a stub
 * upstream directly and through the gateway (a separate JVM, in-memory and on a private
 * redis-server), in one run; latency percentiles from one client at a time, throughput from
 * several. Writes {@code docs/gateway-benchmarks.md} (option {@code --docs DIR}); {@code --quick}
 * shortens every phase for a smoke run.
 *
 * <p>Run from the repository root: {@code ./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package
 * -DskipTests && java -cp benchmarks/ratelimit-benchmarks/target/benchmarks.jar
 * dev.ratelimit.benchmarks.GatewayOverhead}.
 */
public final class GatewayOverhead {

    private static final Pattern LISTENING = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");
    private static final int CHUNKS = 20;
    static final String PLAIN = "{\"model\":\"gpt-4o-mini\",\"max_tokens\":64,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the benchmark.\"}]}";
    private static final String STREAM = PLAIN.replace("{\"model\"", "{\"stream\":true,\"model\"");
    private static final int CLIENTS = 8;

    private GatewayOverhead() {}

    /** One measured configuration. */
    record Result(
            String target,
            String mode,
            Histogram total,
            @Nullable Histogram firstByte,
            double perSecond,
            long failed) {}

    /**
     * Runs the measurement.
     *
     * @param args {@code --quick}, {@code --docs DIR}
     * @throws Exception if a part cannot start
     */
    public static void main(String[] args) throws Exception {
        boolean quick = List.of(args).contains("--quick");
        int docsAt = List.of(args).indexOf("--docs");
        Path docs = Path.of(docsAt >= 0 ? args[docsAt + 1] : "docs");
        int warmup = quick ? 300 : 3_000;
        int samples = quick ? 500 : 5_000;
        long throughputMillis = quick ? 1_000 : 5_000;
        Machine machine = Machine.now(quick);

        List<Result> results = new ArrayList<>();
        Server upstream = stubUpstream();
        String direct = "http://127.0.0.1:" + ((ServerConnector) upstream.getConnectors()[0]).getLocalPort();
        Path config = benchConfig();
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (RedisServer redis = RedisServer.start()) {
            Process inMemory = gateway(direct + "/v1", config, null);
            Process onRedis = gateway(direct + "/v1", config, redis.uri());
            try {
                String memoryUrl = listening(inMemory);
                String redisUrl = listening(onRedis);
                for (boolean stream : new boolean[] {false, true}) {
                    for (String[] target : new String[][] {
                        {"upstream directly", direct}, {"gateway, in-memory", memoryUrl}, {"gateway, Redis", redisUrl}
                    }) {
                        log("measuring " + target[0] + (stream ? ", streamed" : ", plain"));
                        results.add(measure(client, target[0], target[1], stream, warmup, samples, throughputMillis));
                    }
                }
            } finally {
                stop(inMemory);
                stop(onRedis);
            }
        } finally {
            upstream.stop();
            Files.deleteIfExists(config);
        }
        String report = report(results, machine.finished(), warmup, samples, throughputMillis);
        Files.createDirectories(docs);
        Files.writeString(docs.resolve("gateway-benchmarks.md"), report);
        System.out.println(report);
    }

    private static Result measure(
            HttpClient client, String name, String base, boolean stream, int warmup, int samples, long throughputMillis)
            throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                .header("Authorization", "Bearer bench-key")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(stream ? STREAM : PLAIN))
                .build();
        Histogram total = new Histogram(3);
        Histogram firstByte = stream ? new Histogram(3) : null;
        AtomicLong failed = new AtomicLong();
        for (int i = 0; i < warmup; i++) {
            call(client, request, stream, null, null, failed);
        }
        for (int i = 0; i < samples; i++) {
            call(client, request, stream, total, firstByte, failed);
        }
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Long>> counts = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            counts.add(pool.submit(() -> {
                go.await();
                long done = 0;
                while (running.get()) {
                    done += call(client, request, stream, null, null, failed) ? 1 : 0;
                }
                return done;
            }));
        }
        long started = System.nanoTime();
        go.countDown();
        Thread.sleep(throughputMillis);
        running.set(false);
        long completed = 0;
        for (Future<Long> count : counts) {
            completed += count.get(60, TimeUnit.SECONDS);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        pool.shutdown();
        return new Result(name, stream ? "streamed" : "plain", total, firstByte, completed / seconds, failed.get());
    }

    /**
     * One request, read to its end; records its total time and, for a stream, its first event's. A
     * transport failure (a keep-alive connection closed under the client) is counted, not timed.
     */
    private static boolean call(
            HttpClient client,
            HttpRequest request,
            boolean stream,
            @Nullable Histogram total,
            @Nullable Histogram firstByte,
            AtomicLong failed)
            throws InterruptedException {
        try {
            return timed(client, request, stream, total, firstByte);
        } catch (IOException e) {
            failed.incrementAndGet();
            return false;
        }
    }

    private static boolean timed(
            HttpClient client,
            HttpRequest request,
            boolean stream,
            @Nullable Histogram total,
            @Nullable Histogram firstByte)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + response.statusCode() + " from " + request.uri());
        }
        try (InputStream body = response.body()) {
            if (stream) {
                BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
                String line;
                boolean first = true;
                while ((line = lines.readLine()) != null) {
                    if (first && line.startsWith("data: ")) {
                        if (firstByte != null) {
                            firstByte.recordValue((System.nanoTime() - start) / 1_000);
                        }
                        first = false;
                    }
                }
            } else {
                body.readAllBytes();
            }
        }
        if (total != null) {
            total.recordValue((System.nanoTime() - start) / 1_000);
        }
        return true;
    }

    /**
     * Writes the gateway configuration every benchmark uses to a temporary file: one key
     * ({@code bench-key}) on a tier whose budgets never run out, so every request is admitted and
     * counted but none is refused.
     */
    static Path benchConfig() throws IOException {
        Path config = Files.createTempFile("gateway-bench", ".yaml");
        Files.writeString(config, """
                keys:
                  - { key: bench-key, tenant: bench, tier: unlimited }
                tiers:
                  unlimited:
                    max-concurrent: 10000
                    windows: { minute: 1000000000/1m, day: 1000000000/1d }
                models:
                  gpt-4o-mini: { rpm: 1000000000, tpm: 1000000000 }
                """);
        return config;
    }

    /** A stub upstream as cheap as it gets: fixed bytes, no parsing beyond spotting a stream request. */
    static Server stubUpstream() throws Exception {
        StringBuilder events = new StringBuilder();
        for (int i = 0; i < CHUNKS; i++) {
            events.append("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\","
                            + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\"},\"finish_reason\":null}]}")
                    .append("\n\n");
        }
        String usage = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
                + "\"usage\":{\"prompt_tokens\":14,\"completion_tokens\":20,\"total_tokens\":34}}\n\n";
        byte[] streamed = (events + usage + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
        byte[] streamedWithoutUsage = (events + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
        byte[] plain =
                ("{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,"
                                + "\"message\":{\"role\":\"assistant\",\"content\":\""
                                + " word".repeat(CHUNKS).strip()
                                + "\"},\"finish_reason\":\"stop\"}],"
                                + "\"usage\":{\"prompt_tokens\":14,\"completion_tokens\":20,\"total_tokens\":34}}")
                        .getBytes(StandardCharsets.UTF_8);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).whenComplete((body, failure) -> {
                    if (failure != null) {
                        callback.failed(failure);
                        return;
                    }
                    boolean stream = body.contains("\"stream\":true");
                    byte[] answer =
                            !stream ? plain : body.contains("\"include_usage\":true") ? streamed : streamedWithoutUsage;
                    response.getHeaders().put("Content-Type", stream ? "text/event-stream" : "application/json");
                    response.write(true, java.nio.ByteBuffer.wrap(answer), callback);
                });
                return true;
            }
        });
        server.start();
        return server;
    }

    private static Process gateway(String upstream, Path config, @Nullable String redisUrl) throws IOException {
        return gateway(upstream, config, redisUrl, List.of());
    }

    /**
     * A child JVM on this JVM's class path running {@code mainClass}, with the heap every benchmark
     * process gets ({@code -Xmx1g}) and {@code options} before the class name.
     */
    static ProcessBuilder jvm(List<String> options, String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx1g");
        command.addAll(options);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true);
    }

    /** Starts a child process that a benchmark stopped from outside does not leave running. */
    static Process startReaped(ProcessBuilder builder) throws IOException {
        Process process = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "child-reaper"));
        return process;
    }

    /** The gateway in a child JVM with extra JVM {@code options} (a profiler's, say). */
    static Process gateway(String upstream, Path config, @Nullable String redisUrl, List<String> options)
            throws IOException {
        ProcessBuilder builder = jvm(options, "dev.ratelimit.gateway.GatewayServer");
        builder.environment().put("PORT", "0");
        builder.environment().put("MANAGEMENT_PORT", "0"); // never the default 8081, which may be taken
        builder.environment().put("ACCESS_LOG", "off"); // a line per request would be measured as overhead
        builder.environment().put("UPSTREAM_URL", upstream);
        builder.environment().put("GATEWAY_CONFIG", config.toString());
        builder.environment().remove("RATE_LIMIT_DISABLED");
        if (redisUrl == null) {
            builder.environment().remove("REDIS_URL");
        } else {
            builder.environment().put("REDIS_URL", redisUrl);
        }
        return startReaped(builder);
    }

    /** Waits for a child's "listening on http://127.0.0.1:PORT" line and returns that URL; drains the rest. */
    static String listening(Process process) throws Exception {
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    Matcher matcher = LISTENING.matcher(line);
                    if (matcher.find()) {
                        url.complete(matcher.group(1));
                    }
                }
                url.completeExceptionally(new IllegalStateException("the gateway exited before listening"));
            } catch (IOException e) {
                url.completeExceptionally(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        return url.get(120, TimeUnit.SECONDS);
    }

    static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    private static String firstByteDelta(@Nullable Histogram result, @Nullable Histogram base) {
        if (result == null || base == null) {
            return "–";
        }
        return "+" + micros(result.getValueAtPercentile(50) - base.getValueAtPercentile(50));
    }

    private static String report(
            List<Result> results, Machine machine, int warmup, int samples, long throughputMillis) {
        StringBuilder out = new StringBuilder();
        out.append("# Gateway overhead\n\n");
        out.append("What `ratelimit-gateway` adds to a chat completion: the same requests sent to a stub upstream\n")
                .append("directly and through the gateway (a separate JVM; budgets in memory, or on a private\n")
                .append("`redis-server`), plain and streamed (")
                .append(CHUNKS)
                .append(" chunks plus the usage chunk the gateway asks for), in one run.\n")
                .append(
                        "Every gateway request is authenticated, parsed, counted with jtokkit, admitted (a concurrency\n")
                .append("slot and the tier's request windows), forwarded, relayed and settled.\n\n");
        out.append(
                "```bash\n./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package -DskipTests && "
                        + "java -cp benchmarks/ratelimit-benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.GatewayOverhead\n```\n\n");
        out.append(machine.line("the client, the stub and the gateway"))
                .append(machine.quick() ? "; **quick run: short phases, rough figures**" : "")
                .append(".\n\n");
        out.append("Latency: one client, one request at a time, ")
                .append(samples)
                .append(" requests after ")
                .append(warmup)
                .append(" of warm-up (java.net.http, HTTP/1.1 keep-alive). Throughput: ")
                .append(CLIENTS)
                .append(" clients for ")
                .append(throughputMillis / 1000)
                .append(" s.\n\n");
        out.append("| target | mode | p50 | p99 | first event p50 | first event p99 | requests/s | failed |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Result result : results) {
            out.append("| ")
                    .append(result.target())
                    .append(" | ")
                    .append(result.mode())
                    .append(" | ")
                    .append(micros(result.total().getValueAtPercentile(50)))
                    .append(" | ")
                    .append(micros(result.total().getValueAtPercentile(99)))
                    .append(" | ")
                    .append(
                            result.firstByte() == null
                                    ? "–"
                                    : micros(result.firstByte().getValueAtPercentile(50)))
                    .append(" | ")
                    .append(
                            result.firstByte() == null
                                    ? "–"
                                    : micros(result.firstByte().getValueAtPercentile(99)))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%,.0f", result.perSecond()))
                    .append(" | ")
                    .append(result.failed())
                    .append(" |\n");
        }
        out.append("\n**Added by the gateway** (gateway minus upstream directly):\n\n");
        out.append("| gateway | mode | p50 | p99 | first event p50 | throughput |\n|---|---|---:|---:|---:|---:|\n");
        for (Result result : results) {
            if (result.target().startsWith("upstream")) {
                continue;
            }
            Result base = results.stream()
                    .filter(r -> r.target().startsWith("upstream") && r.mode().equals(result.mode()))
                    .findFirst()
                    .orElseThrow();
            out.append("| ")
                    .append(result.target().replace("gateway, ", ""))
                    .append(" | ")
                    .append(result.mode())
                    .append(" | +")
                    .append(micros(result.total().getValueAtPercentile(50)
                            - base.total().getValueAtPercentile(50)))
                    .append(" | +")
                    .append(micros(result.total().getValueAtPercentile(99)
                            - base.total().getValueAtPercentile(99)))
                    .append(" | ")
                    .append(firstByteDelta(result.firstByte(), base.firstByte()))
                    .append(" | ")
                    .append(String.format(Locale.ROOT, "%.0f %%", 100 * result.perSecond() / base.perSecond()))
                    .append(" of direct |\n");
        }
        out.append("\nThe client, the stub, the gateway and Redis share the machine's cores, so the throughput\n")
                .append("column is what the whole set-up sustains, not the gateway alone; a real upstream answers in\n")
                .append("hundreds of milliseconds, against which these figures are the gateway's whole cost.\n");
        return out.toString();
    }

    private static String micros(long micros) {
        return micros >= 10_000
                ? String.format(Locale.ROOT, "%.1f ms", micros / 1000.0)
                : String.format(Locale.ROOT, "%d µs", micros);
    }

    private static void log(String message) {
        System.err.println("[gateway-overhead] " + message);
    }
}
