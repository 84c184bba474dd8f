package dev.ratelimit.benchmarks;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.ee10.proxy.AsyncProxyServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.proxy.ProxyHandler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;

/**
 * CPU per request of one HTTP hop: the same plain chat completions sent, over a fixed number of
 * keep-alive connections, to a stub upstream directly and through each hop in turn (a bare Jetty
 * reverse proxy, servlet and core flavours; nginx; the gateway in memory; the gateway on a private
 * redis-server), every hop its own process, whose utime+stime is read from {@code /proc/PID/stat}
 * before and after each measured phase. Reports CPU milliseconds per 1,000 requests for each
 * process (the hop, redis-server, the stub, the client), requests per second, and the gateway's
 * ratios to the bare Jetty hop. CPU time per request depends far less than wall time on what else
 * the machine runs, but it does depend on it (caches, batching): the load average is printed before
 * and after.
 *
 * <p>Run from the repository root after {@code ./mvnw -B -q -pl
 * ratelimit-gateway,benchmarks/ratelimit-benchmarks -am package -DskipTests}: {@code java -cp
 * benchmarks/ratelimit-benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.HopCpu}. Options:
 * {@code --requests N} per measured phase (20,000), {@code --warmup N} (5,000), {@code --connections
 * N} (16), {@code --phases N} per target (2), {@code --only a,b} (targets by key: {@code stub,
 * jetty-servlet, jetty-core, nginx, memory, redis}), and {@code --profile DIR}: instead of the table,
 * the gateway in memory (on a private redis-server with {@code --only redis}) under the same load
 * with a 60 s JFR recording ({@code settings=profile},
 * method sampling every 1 ms, started 45 s in, after the warm-up), summarized by hot method and
 * area. nginx runs one worker process; the Jetty hops, the stub and the gateway run with {@code
 * -Xmx1g} and the JVM's defaults otherwise.
 *
 * <p>The same process also serves the children it starts: {@code HopCpu stub} (the stub upstream of
 * {@link GatewayOverhead}), {@code HopCpu jetty-servlet URL} (Jetty's {@code
 * AsyncProxyServlet.Transparent}: an ee10 servlet with asynchronous I/O relaying through Jetty's
 * HTTP client, the gateway's own stack without the limiting) and {@code HopCpu jetty-core URL}
 * (Jetty's core {@code ProxyHandler.Reverse}, no servlet layer).
 */
public final class HopCpu {

    private static final String SERVLET_HOP = "jetty-servlet";
    private static final String CORE_HOP = "jetty-core";
    private static final String STUB = "stub";
    private static final List<String> TARGETS = List.of(STUB, SERVLET_HOP, CORE_HOP, "nginx", "memory", "redis");

    private HopCpu() {}

    /** One measured phase of one target. */
    record Phase(
            String target,
            int phase,
            int requests,
            double seconds,
            long failed,
            double hopMs,
            double hopSystemMs,
            double redisMs,
            double stubMs,
            double clientMs,
            @Nullable Map<String, Double> hopThreads) {

        double perThousand(double ms) {
            return ms * 1000 / requests;
        }

        /** CPU of the hop's JIT compiler threads in this phase; 0 for a process that is not a JVM. */
        double jitMs() {
            return hopThreads == null ? 0 : hopThreads.getOrDefault("JIT", 0.0);
        }
    }

    /**
     * Runs the measurement, or serves as one of its child processes.
     *
     * @param args see the class comment
     * @throws Exception if a part cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals(STUB)) {
            serve(GatewayOverhead.stubUpstream());
            return;
        }
        if (args.length > 1 && args[0].equals(SERVLET_HOP)) {
            serve(servletHop(args[1]));
            return;
        }
        if (args.length > 1 && args[0].equals(CORE_HOP)) {
            serve(coreHop(args[1]));
            return;
        }
        int requests = intOption(args, "--requests", 20_000);
        int warmup = intOption(args, "--warmup", 5_000);
        int connections = intOption(args, "--connections", 16);
        int phases = intOption(args, "--phases", 2);
        @Nullable String only = option(args, "--only");
        @Nullable String profile = option(args, "--profile");
        List<String> targets = only == null ? TARGETS : List.of(only.split(","));

        long ticks = clockTicks();
        Machine machine = Machine.now(false);
        log("machine: " + machine.describe() + "; clock ticks " + ticks + "/s");
        Process stub = GatewayOverhead.startReaped(GatewayOverhead.jvm(List.of(), HopCpu.class.getName(), STUB));
        HttpClient client = new HttpClient();
        client.setMaxConnectionsPerDestination(connections);
        client.setIdleTimeout(120_000);
        client.start();
        Path config = GatewayOverhead.benchConfig();
        try {
            String stubUrl = GatewayOverhead.listening(stub);
            if (profile != null) {
                profile(
                        client,
                        stubUrl,
                        config,
                        Path.of(profile),
                        "redis".equals(only),
                        warmup,
                        requests,
                        connections,
                        ticks,
                        stub.pid());
                return;
            }
            List<Phase> results = new ArrayList<>();
            for (String target : targets) {
                results.addAll(measure(
                        target, client, stubUrl, stub.pid(), config, warmup, requests, connections, phases, ticks));
            }
            Machine done = machine.finished();
            System.out.println(report(results, done, requests, warmup, connections, ticks));
        } finally {
            client.stop();
            GatewayOverhead.stop(stub);
            Files.deleteIfExists(config);
        }
    }

    private static List<Phase> measure(
            String target,
            HttpClient client,
            String stubUrl,
            long stubPid,
            Path config,
            int warmup,
            int requests,
            int connections,
            int phases,
            long ticks)
            throws Exception {
        @Nullable RedisServer redis = target.equals("redis") ? RedisServer.start() : null;
        @Nullable Path nginxDir = null;
        @Nullable Process hop = null;
        String url;
        try {
            switch (target) {
                case STUB -> url = stubUrl;
                case SERVLET_HOP, CORE_HOP -> {
                    hop = GatewayOverhead.startReaped(
                            GatewayOverhead.jvm(List.of(), HopCpu.class.getName(), target, stubUrl));
                    url = GatewayOverhead.listening(hop);
                }
                case "nginx" -> {
                    nginxDir = Files.createTempDirectory("hop-cpu-nginx");
                    int port = freePort();
                    hop = nginx(nginxDir, port, URI.create(stubUrl).getPort());
                    url = "http://127.0.0.1:" + port;
                }
                case "memory", "redis" -> {
                    hop = GatewayOverhead.gateway(
                            stubUrl + "/v1", config, redis == null ? null : redis.uri(), List.of());
                    url = GatewayOverhead.listening(hop);
                }
                default -> throw new IllegalArgumentException("unknown target " + target + "; known: " + TARGETS);
            }
            URI uri = URI.create(url + "/v1/chat/completions");
            log(target + ": warming up, " + warmup + " requests to " + uri);
            long warmFailed = load(client, uri, warmup, connections);
            if (warmFailed > 0) {
                throw new IllegalStateException(target + ": " + warmFailed + " of the warm-up requests failed");
            }
            List<Phase> measured = new ArrayList<>();
            long hopPid = hop == null ? -1 : hop.pid();
            long redisPid = redis == null ? -1 : redis.pid();
            long self = ProcessHandle.current().pid();
            for (int phase = 1; phase <= phases; phase++) {
                Map<String, Long> threadsBefore = hop == null || target.equals("nginx") ? null : threadTicks(hopPid);
                long[] before = {
                    treeTicks(hopPid), treeTicks(redisPid), treeTicks(stubPid), treeTicks(self), systemTicks(hopPid)
                };
                long started = System.nanoTime();
                long failed = load(client, uri, requests, connections);
                double seconds = (System.nanoTime() - started) / 1e9;
                long[] after = {
                    treeTicks(hopPid), treeTicks(redisPid), treeTicks(stubPid), treeTicks(self), systemTicks(hopPid)
                };
                Map<String, Double> split = threadsBefore == null
                        ? null
                        : threadSplit(threadsBefore, threadTicks(hopPid), ticks, after[0] - before[0]);
                Phase result = new Phase(
                        target,
                        phase,
                        requests,
                        seconds,
                        failed,
                        millis(after[0] - before[0], ticks),
                        millis(after[4] - before[4], ticks),
                        millis(after[1] - before[1], ticks),
                        millis(after[2] - before[2], ticks),
                        millis(after[3] - before[3], ticks),
                        split);
                log(String.format(
                        Locale.ROOT,
                        "%s phase %d: hop %.3f ms/req, redis %.3f, stub %.3f, client %.3f; %.0f req/s; %d failed%s",
                        target,
                        phase,
                        result.perThousand(result.hopMs()) / 1000,
                        result.perThousand(result.redisMs()) / 1000,
                        result.perThousand(result.stubMs()) / 1000,
                        result.perThousand(result.clientMs()) / 1000,
                        requests / seconds,
                        failed,
                        split == null ? "" : "; threads (ms) " + split));
                measured.add(result);
            }
            if (redis != null) {
                long sent = warmup + (long) phases * requests;
                log("redis-server commands per request, from INFO commandstats over " + sent + " requests: "
                        + commandsPerRequest(String.valueOf(redis.call("INFO", "commandstats")), sent));
            }
            return measured;
        } finally {
            if (hop != null) {
                GatewayOverhead.stop(hop);
            }
            if (redis != null) {
                redis.close();
            }
            if (nginxDir != null) {
                deleteRecursively(nginxDir);
            }
        }
    }

    /**
     * Sends {@code count} plain chat completions over at most {@code connections} keep-alive
     * connections, {@code connections} at a time, each answered in full before the next goes out on
     * that chain; returns how many failed or were not answered 200.
     */
    static long load(HttpClient client, URI uri, int count, int connections) throws InterruptedException {
        AtomicInteger remaining = new AtomicInteger(count);
        AtomicLong failed = new AtomicLong();
        CountDownLatch chains = new CountDownLatch(connections);
        for (int c = 0; c < connections; c++) {
            next(client, uri, remaining, failed, chains);
        }
        if (!chains.await(15, TimeUnit.MINUTES)) {
            throw new IllegalStateException("requests still outstanding after 15 minutes");
        }
        return failed.get();
    }

    private static void next(
            HttpClient client, URI uri, AtomicInteger remaining, AtomicLong failed, CountDownLatch chains) {
        if (remaining.getAndDecrement() <= 0) {
            chains.countDown();
            return;
        }
        client.newRequest(uri)
                .method(HttpMethod.POST)
                .headers(headers -> headers.put(HttpHeader.AUTHORIZATION, "Bearer bench-key"))
                .body(new StringRequestContent("application/json", GatewayOverhead.PLAIN))
                .timeout(60, TimeUnit.SECONDS)
                .send(result -> {
                    if (result.isFailed() || result.getResponse().getStatus() != 200) {
                        if (failed.incrementAndGet() > 100) {
                            remaining.set(0); // something is broken: stop, and say so
                        }
                    }
                    next(client, uri, remaining, failed, chains);
                });
    }

    /**
     * nginx from the system's packages with a generated configuration: one worker process, no
     * access log, {@code proxy_pass} to the stub over an upstream keep-alive pool, and keep-alive
     * request limits raised on both sides so no connection is closed during a run.
     */
    private static Process nginx(Path dir, int port, int stubPort) throws Exception {
        Files.createDirectories(dir.resolve("temp"));
        String conf = """
                worker_processes 1;
                daemon off;
                pid %1$s/nginx.pid;
                error_log %1$s/error.log warn;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path %1$s/temp/body;
                    proxy_temp_path %1$s/temp/proxy;
                    fastcgi_temp_path %1$s/temp/fastcgi;
                    uwsgi_temp_path %1$s/temp/uwsgi;
                    scgi_temp_path %1$s/temp/scgi;
                    keepalive_requests 100000000;
                    upstream stub {
                        server 127.0.0.1:%3$d;
                        keepalive 64;
                        keepalive_requests 100000000;
                    }
                    server {
                        listen 127.0.0.1:%2$d;
                        location / {
                            proxy_pass http://stub;
                            proxy_http_version 1.1;
                            proxy_set_header Connection "";
                        }
                    }
                }
                """.formatted(dir, port, stubPort);
        Path file = dir.resolve("nginx.conf");
        Files.writeString(file, conf);
        ProcessBuilder builder = new ProcessBuilder("nginx", "-p", dir.toString(), "-c", file.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile());
        Process process = GatewayOverhead.startReaped(builder);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nginx exited: " + Files.readString(dir.resolve("error.log")));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return process;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("nginx did not listen on " + port);
    }

    /** {@code cmdstat_evalsha:calls=123,...} lines turned into "evalsha 1.00, ..." per request. */
    private static String commandsPerRequest(String commandstats, long requests) {
        StringBuilder out = new StringBuilder();
        for (String line : commandstats.split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                String calls = line.substring(line.indexOf("calls=") + "calls=".length(), line.indexOf(','));
                out.append(String.format(Locale.ROOT, "%s %.2f; ", name, Long.parseLong(calls) / (double) requests));
            }
        }
        return out.toString();
    }

    /** The gateway in memory under load with a JFR recording, then the recording summarized. */
    private static void profile(
            HttpClient client,
            String stubUrl,
            Path config,
            Path dir,
            boolean onRedis,
            int warmup,
            int batch,
            int connections,
            long ticks,
            long stubPid)
            throws Exception {
        Files.createDirectories(dir);
        Path recording = dir.resolve(onRedis ? "gateway-redis.jfr" : "gateway-memory.jfr")
                .toAbsolutePath();
        int delay = 45;
        int duration = 60;
        @Nullable RedisServer redis = onRedis ? RedisServer.start() : null;
        long redisPid = redis == null ? -1 : redis.pid();
        Process gateway = GatewayOverhead.gateway(
                stubUrl + "/v1",
                config,
                redis == null ? null : redis.uri(),
                List.of(
                        "-XX:+FlightRecorder",
                        "-XX:FlightRecorderOptions=stackdepth=256",
                        "-XX:StartFlightRecording=delay=" + delay + "s,duration=" + duration + "s,filename=" + recording
                                + ",settings=profile,method-profiling=max"));
        long started = System.nanoTime();
        try {
            URI uri = URI.create(GatewayOverhead.listening(gateway) + "/v1/chat/completions");
            load(client, uri, warmup, connections);
            while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(delay + 1)) {
                load(client, uri, 1_000, connections);
            }
            Map<String, Long> threadsBefore = threadTicks(gateway.pid());
            long before = treeTicks(gateway.pid());
            long systemBefore = systemTicks(gateway.pid());
            long stubBefore = treeTicks(stubPid);
            long redisBefore = treeTicks(redisPid);
            long redisSystemBefore = systemTicks(redisPid);
            long sent = 0;
            long phaseStart = System.nanoTime();
            while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(delay + duration - 1)) {
                load(client, uri, batch / 4, connections);
                sent += batch / 4;
            }
            double seconds = (System.nanoTime() - phaseStart) / 1e9;
            long used = treeTicks(gateway.pid()) - before;
            Map<String, Double> split = threadSplit(threadsBefore, threadTicks(gateway.pid()), ticks, used);
            System.out.printf(
                    Locale.ROOT,
                    "Under the recording: %,d requests in %.1f s (%.0f/s); gateway CPU %.1f ms per 1,000 (kernel %.1f; stub %.1f;"
                            + " redis-server %.1f, of which kernel %.1f); by thread group, ms per 1,000: %s%n",
                    sent,
                    seconds,
                    sent / seconds,
                    millis(used, ticks) * 1000 / sent,
                    millis(systemTicks(gateway.pid()) - systemBefore, ticks) * 1000 / sent,
                    millis(treeTicks(stubPid) - stubBefore, ticks) * 1000 / sent,
                    millis(treeTicks(redisPid) - redisBefore, ticks) * 1000 / sent,
                    millis(systemTicks(redisPid) - redisSystemBefore, ticks) * 1000 / sent,
                    perThousandText(split, sent));
            // keep the load on until the recording has been written
            while (!Files.exists(recording)
                    && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(delay + duration + 60)) {
                load(client, uri, 1_000, connections);
            }
            Thread.sleep(2_000);
        } finally {
            GatewayOverhead.stop(gateway);
            if (redis != null) {
                redis.close();
            }
        }
        System.out.println(summarize(recording));
    }

    private static String perThousandText(Map<String, Double> split, long sent) {
        StringBuilder out = new StringBuilder();
        split.forEach((group, ms) -> out.append(group)
                .append(' ')
                .append(String.format(Locale.ROOT, "%.1f", ms * 1000 / sent))
                .append("; "));
        return out.toString();
    }

    /** Hot methods by self time, areas, hot gateway methods (inclusive), allocation sites. */
    static String summarize(Path recording) throws IOException {
        Map<String, Long> self = new HashMap<>();
        Map<String, Long> selfOutsideJdk = new HashMap<>();
        Map<String, Map<String, Long>> callers = new HashMap<>();
        Map<String, Long> areaByTopFrame = new HashMap<>();
        Map<String, Long> areaByCaller = new HashMap<>();
        Map<String, Long> gatewayInclusive = new HashMap<>();
        Map<String, Long> allocationSites = new HashMap<>();
        Map<String, Long> allocationAreas = new HashMap<>();
        long samples = 0;
        long allocated = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            String type = event.getEventType().getName();
            RecordedStackTrace stack = event.getStackTrace();
            if (stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            List<RecordedFrame> frames = stack.getFrames();
            if (type.equals("jdk.ExecutionSample")) {
                samples++;
                String top = method(frames.get(0));
                int caller = firstNonJdk(frames);
                String outside = caller < 0 ? "(JDK only)" : method(frames.get(caller));
                self.merge(top, 1L, Long::sum);
                selfOutsideJdk.merge(outside, 1L, Long::sum);
                callers.computeIfAbsent(top, t -> new HashMap<>()).merge(outside, 1L, Long::sum);
                areaByTopFrame.merge(area(frames, 0), 1L, Long::sum);
                areaByCaller.merge(area(frames, firstNonJdk(frames)), 1L, Long::sum);
                Set<String> seen = new HashSet<>();
                for (RecordedFrame frame : frames) {
                    String name = method(frame);
                    if (name.startsWith("dev.ratelimit.gateway.") && seen.add(name)) {
                        gatewayInclusive.merge(name, 1L, Long::sum);
                    }
                }
            } else if (type.equals("jdk.ObjectAllocationSample")) {
                long weight = event.getLong("weight");
                allocated += weight;
                int at = firstNonJdk(frames);
                allocationSites.merge(
                        method(frames.get(at < 0 ? 0 : at)) + " ("
                                + event.getClass("objectClass").getName() + ")",
                        weight,
                        Long::sum);
                allocationAreas.merge(area(frames, at), weight, Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("\nJFR ").append(recording).append(": ").append(samples).append(" execution samples\n");
        table(out, "Top 15 methods by self time (top frame)", self, samples, 15);
        out.append("\nTheir callers outside the JDK (the most frequent, with its share of the method's samples):\n");
        self.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(15)
                .forEach(entry -> callers.getOrDefault(entry.getKey(), Map.of()).entrySet().stream()
                        .max(Map.Entry.comparingByValue())
                        .ifPresent(caller -> out.append(String.format(
                                Locale.ROOT,
                                "  %s <- %s (%.0f %%)%n",
                                entry.getKey(),
                                caller.getKey(),
                                100.0 * caller.getValue() / entry.getValue()))));
        table(
                out,
                "Top 25 methods by self time, the JDK's charged to their first caller outside it",
                selfOutsideJdk,
                samples,
                25);
        table(out, "Share by area, top frame's package", areaByTopFrame, samples, 20);
        table(
                out,
                "Share by area, first frame outside the JDK (a HashMap.get under Jackson counts as Jackson)",
                areaByCaller,
                samples,
                20);
        table(out, "Top 25 gateway methods, inclusive (on the stack)", gatewayInclusive, samples, 25);
        table(out, "Allocation by area (sampled weight)", allocationAreas, allocated, 20);
        table(out, "Top 20 allocation sites (first frame outside the JDK, class)", allocationSites, allocated, 20);
        return out.toString();
    }

    private static void table(StringBuilder out, String title, Map<String, Long> counts, long total, int limit) {
        out.append("\n").append(title).append(":\n");
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(limit)
                .forEach(entry -> out.append(String.format(
                        Locale.ROOT, "  %5.1f %%  %s%n", 100.0 * entry.getValue() / total, entry.getKey())));
    }

    private static String method(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }

    private static boolean jdk(String name) {
        return name.startsWith("java.")
                || name.startsWith("javax.")
                || name.startsWith("jdk.")
                || name.startsWith("sun.")
                || name.startsWith("com.sun.");
    }

    private static int firstNonJdk(List<RecordedFrame> frames) {
        for (int i = 0; i < frames.size(); i++) {
            if (!jdk(method(frames.get(i)))) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The area a frame belongs to; a Jetty frame in neither the server's nor the client's packages
     * (io, util, http) goes to whichever of the two its stack reaches first below it.
     */
    private static String area(List<RecordedFrame> frames, int at) {
        if (at < 0) {
            return "JDK only (no caller outside the JDK)";
        }
        String name = method(frames.get(at));
        if (name.startsWith("dev.ratelimit.gateway.")) {
            return "gateway code";
        }
        if (name.startsWith("dev.ratelimit.")) {
            return "limiter/core";
        }
        if (name.startsWith("com.fasterxml.jackson.")) {
            return "Jackson";
        }
        if (name.startsWith("com.knuddels.jtokkit.")) {
            return "jtokkit";
        }
        if (name.startsWith("org.slf4j.")
                || name.startsWith("ch.qos.logback.")
                || name.startsWith("org.apache.logging.")) {
            return "logging";
        }
        if (name.startsWith("org.eclipse.jetty.")) {
            for (int i = at; i < frames.size(); i++) {
                String below = method(frames.get(i));
                if (below.startsWith("org.eclipse.jetty.client.")) {
                    return "Jetty client";
                }
                if (below.startsWith("org.eclipse.jetty.server.")
                        || below.startsWith("org.eclipse.jetty.ee10.")
                        || below.startsWith("jakarta.servlet.")) {
                    return "Jetty server";
                }
            }
            return "Jetty io/util (selector, thread pool)";
        }
        if (jdk(name)) {
            return "JDK";
        }
        return "other (" + name.substring(0, Math.max(0, name.indexOf('.', name.indexOf('.') + 1))) + ")";
    }

    private static String report(
            List<Phase> results, Machine machine, int requests, int warmup, int connections, long ticks) {
        StringBuilder out = new StringBuilder();
        out.append("\n# CPU per hop\n\n")
                .append(String.format(
                        Locale.ROOT,
                        "%,d plain chat completions per phase after %,d of warm-up, %d keep-alive connections"
                                + " (Jetty HttpClient in the benchmark JVM); utime+stime from /proc/PID/stat at %d"
                                + " ticks/s. Machine: %s; load %s before, %s after.%n%n",
                        requests,
                        warmup,
                        connections,
                        ticks,
                        machine.describe(),
                        machine.loadBefore(),
                        machine.loadAfter()));
        out.append(
                "| target | phase | hop CPU ms/1k req | of it kernel | hop excl. JIT | redis ms/1k | hop+redis ms/1k |"
                        + " stub ms/1k | client ms/1k | requests/s | failed |\n"
                        + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Phase p : results) {
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %d | %.1f | %.1f | %.1f | %s | %.1f | %.1f | %.1f | %,.0f | %d |%n",
                    label(p.target()),
                    p.phase(),
                    p.perThousand(p.hopMs()),
                    p.perThousand(p.hopSystemMs()),
                    p.perThousand(p.hopMs() - p.jitMs()),
                    p.target().equals("redis") ? String.format(Locale.ROOT, "%.1f", p.perThousand(p.redisMs())) : "–",
                    p.perThousand(p.hopMs() + p.redisMs()),
                    p.perThousand(p.stubMs()),
                    p.perThousand(p.clientMs()),
                    p.requests() / p.seconds(),
                    p.failed()));
        }
        out.append("\nThread groups of the JVM hops, ms per 1,000 requests (app = request threads and selectors):\n\n");
        for (Phase p : results) {
            if (p.hopThreads() != null) {
                out.append("- ")
                        .append(label(p.target()))
                        .append(", phase ")
                        .append(p.phase())
                        .append(": ")
                        .append(perThousandText(p.hopThreads(), p.requests()))
                        .append("\n");
            }
        }
        Map<String, Double> mean = average(results, p -> p.perThousand(p.hopMs() + p.redisMs()), false);
        Map<String, Double> last = average(results, p -> p.perThousand(p.hopMs() + p.redisMs()), true);
        Map<String, Double> noJit = average(results, p -> p.perThousand(p.hopMs() + p.redisMs() - p.jitMs()), false);
        out.append("\nHop (+ redis-server) CPU ms per 1,000 requests, mean over phases / last phase / mean excl. JIT:");
        mean.forEach((target, ms) -> out.append(String.format(
                Locale.ROOT,
                " %s %.1f / %.1f / %.1f;",
                target,
                ms,
                last.getOrDefault(target, 0.0),
                noJit.getOrDefault(target, 0.0))));
        out.append("\n\nRatios (mean over phases / last phase / mean excl. JIT threads):\n");
        for (String base : List.of(SERVLET_HOP, CORE_HOP, "nginx")) {
            if (!mean.containsKey(base)) {
                continue;
            }
            for (String gateway : List.of("memory", "redis")) {
                if (mean.containsKey(gateway)) {
                    out.append(String.format(
                            Locale.ROOT,
                            "- %s / %s: %.2f× / %.2f× / %.2f×%n",
                            label(gateway) + (gateway.equals("redis") ? " incl. redis-server" : ""),
                            label(base),
                            mean.getOrDefault(gateway, 0.0) / mean.getOrDefault(base, 1.0),
                            last.getOrDefault(gateway, 0.0) / last.getOrDefault(base, 1.0),
                            noJit.getOrDefault(gateway, 0.0) / noJit.getOrDefault(base, 1.0)));
                }
            }
        }
        return out.toString();
    }

    /** A figure per target: the mean over its phases, or its last phase's. */
    private static Map<String, Double> average(
            List<Phase> results, java.util.function.ToDoubleFunction<Phase> figure, boolean lastOnly) {
        Map<String, Double> sums = new LinkedHashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        for (Phase p : results) {
            if (lastOnly) {
                sums.put(p.target(), figure.applyAsDouble(p));
                counts.put(p.target(), 1);
            } else {
                sums.merge(p.target(), figure.applyAsDouble(p), Double::sum);
                counts.merge(p.target(), 1, Integer::sum);
            }
        }
        sums.replaceAll((target, sum) -> sum / counts.getOrDefault(target, 1));
        return sums;
    }

    private static String label(String target) {
        return switch (target) {
            case STUB -> "stub directly";
            case SERVLET_HOP -> "Jetty hop (ee10 AsyncProxyServlet.Transparent)";
            case CORE_HOP -> "Jetty hop (core ProxyHandler.Reverse)";
            case "nginx" -> "nginx (1 worker)";
            case "memory" -> "gateway, in memory";
            case "redis" -> "gateway, Redis";
            default -> target;
        };
    }

    /** utime+stime of a process and its descendants (nginx's workers), in clock ticks; 0 without one. */
    static long treeTicks(long pid) {
        return treeTicks(pid, false);
    }

    /** The kernel's share (stime) of {@link #treeTicks}. */
    static long systemTicks(long pid) {
        return treeTicks(pid, true);
    }

    private static long treeTicks(long pid, boolean systemOnly) {
        if (pid < 0) {
            return 0;
        }
        long total = statTicks(Path.of("/proc", Long.toString(pid), "stat"), systemOnly);
        List<Long> children = ProcessHandle.of(pid)
                .map(handle -> handle.descendants().map(ProcessHandle::pid).toList())
                .orElse(List.of());
        for (long child : children) {
            total += statTicks(Path.of("/proc", Long.toString(child), "stat"), systemOnly);
        }
        return total;
    }

    /** utime+stime (fields 14 and 15) of a {@code stat} file; the name, field 2, may hold spaces. */
    private static long statTicks(Path stat, boolean systemOnly) {
        return statFields(stat)
                .map(fields -> (systemOnly ? 0 : Long.parseLong(fields[11])) + Long.parseLong(fields[12]))
                .orElse(0L);
    }

    private static java.util.Optional<String[]> statFields(Path stat) {
        try {
            String line = Files.readString(stat);
            return java.util.Optional.of(
                    line.substring(line.lastIndexOf(')') + 2).split(" "));
        } catch (IOException gone) {
            return java.util.Optional.empty();
        }
    }

    /** Clock ticks per thread of a process, by thread id and name. */
    private static Map<String, Long> threadTicks(long pid) throws IOException {
        Map<String, Long> ticks = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String line = Files.readString(task.resolve("stat"));
                    String name = line.substring(line.indexOf('(') + 1, line.lastIndexOf(')'));
                    ticks.put(task.getFileName() + " " + name, statTicks(task.resolve("stat"), false));
                } catch (IOException gone) {
                    // the thread ended between the listing and the read
                }
            }
        }
        return ticks;
    }

    /**
     * CPU milliseconds of a JVM's threads between two snapshots, grouped: GC, JIT, other VM threads,
     * and the application's (Jetty's pools and selectors, the HTTP client's); threads that ended in
     * between are in the process's total only, listed as "ended threads".
     */
    private static Map<String, Double> threadSplit(
            Map<String, Long> before, Map<String, Long> after, long ticks, long processTicks) {
        Map<String, Double> groups = new LinkedHashMap<>();
        for (String group : List.of("app", "GC", "JIT", "VM other", "ended threads")) {
            groups.put(group, 0.0);
        }
        long counted = 0;
        for (Map.Entry<String, Long> thread : after.entrySet()) {
            long used = thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
            counted += used;
            String name = thread.getKey().substring(thread.getKey().indexOf(' ') + 1);
            String group = name.startsWith("GC Thread") || name.startsWith("G1 ")
                    ? "GC"
                    : name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")
                            ? "JIT"
                            : name.startsWith("VM ") || name.equals("java") || name.startsWith("JFR ")
                                    ? "VM other"
                                    : "app";
            groups.merge(group, millis(used, ticks), Double::sum);
        }
        groups.put("ended threads", millis(Math.max(0, processTicks - counted), ticks));
        return groups;
    }

    private static double millis(long ticks, long perSecond) {
        return ticks * 1000.0 / perSecond;
    }

    private static long clockTicks() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").start();
            try (InputStream out = getconf.getInputStream()) {
                return Long.parseLong(new String(out.readAllBytes(), StandardCharsets.US_ASCII).trim());
            }
        } catch (IOException | NumberFormatException e) {
            return 100;
        }
    }

    private static Server servletHop(String upstream) {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        ServletHolder proxy = new ServletHolder(AsyncProxyServlet.Transparent.class);
        proxy.setInitParameter("proxyTo", upstream);
        context.addServlet(proxy, "/*");
        server.setHandler(context);
        return server;
    }

    private static Server coreHop(String upstream) {
        URI to = URI.create(upstream);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new ProxyHandler.Reverse(request -> HttpURI.build(request.getHttpURI())
                .scheme(to.getScheme())
                .host(to.getHost())
                .port(to.getPort())));
        return server;
    }

    /** Starts a server if not started, prints the line {@link GatewayOverhead#listening} waits for, and waits. */
    private static void serve(Server server) throws Exception {
        if (!server.isStarted()) {
            server.start();
        }
        int port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
        System.out.println("listening on http://127.0.0.1:" + port);
        System.out.flush();
        server.join();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static @Nullable String option(String[] args, String name) {
        int at = List.of(args).indexOf(name);
        return at >= 0 && at + 1 < args.length ? args[at + 1] : null;
    }

    private static int intOption(String[] args, String name, int otherwise) {
        String value = option(args, name);
        return value == null
                ? otherwise
                : Integer.parseInt(value.replace("_", "").replace(",", ""));
    }

    private static void log(String message) {
        System.err.println("[hop-cpu] " + message);
        System.err.flush();
    }
}
