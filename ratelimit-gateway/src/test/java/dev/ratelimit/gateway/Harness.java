package dev.ratelimit.gateway;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.Sleeper;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One gateway for one test: on a free port, with the test configuration, a mutable clock for the
 * limiter, in-memory, on a private redis-server or on a private 3-master Redis Cluster, in front of
 * the built-in mock model or a {@link StubUpstream}.
 */
final class Harness implements AutoCloseable {

    /**
     * Where the budgets and slots live. Suites that run on {@code CLUSTER} too name it; the others
     * take {@code @EnumSource(value = Harness.Store.class, names = {"MEMORY", "REDIS"})}.
     */
    enum Store {
        MEMORY,
        REDIS,
        /** A Redis Cluster of three masters, where each level of a request is a scope of its own. */
        CLUSTER
    }

    static final String UPSTREAM_KEY = "sk-upstream-secret";
    private static @Nullable RedisServer redis;
    private static @Nullable RedisCluster cluster;

    final MutableClock clock;
    final GatewayServer server;
    final @Nullable StubUpstream stub;
    final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private Harness(MutableClock clock, GatewayServer server, @Nullable StubUpstream stub) {
        this.clock = clock;
        this.server = server;
        this.stub = stub;
    }

    /** The private redis-server of this test JVM, started on first use and emptied for each gateway. */
    static synchronized RedisServer redis() {
        if (redis == null || !redis.isRunning()) {
            redis = RedisServer.start();
        }
        return redis;
    }

    /**
     * The private Redis Cluster of this test JVM, started on first use (a few seconds: three
     * redis-server processes joined by {@code redis-cli --cluster create}) and emptied for each gateway.
     */
    static synchronized RedisCluster cluster() {
        if (cluster == null || !cluster.nodes().stream().allMatch(RedisServer::isRunning)) {
            if (cluster != null) {
                cluster.close();
            }
            cluster = RedisCluster.start();
        }
        return cluster;
    }

    static Path testConfig() throws Exception {
        return Path.of(Harness.class.getResource("gateway-test.yaml").toURI());
    }

    /**
     * A copy of the test configuration, in a temporary file, with each key of {@code replaced}
     * replaced by its value and {@code appended} (whole sections the test file does not have) after
     * it; for {@code GATEWAY_CONFIG} in {@link #start(Store, boolean, Map)}'s {@code extra}.
     */
    static Path config(Map<String, String> replaced, String appended) throws Exception {
        String text = java.nio.file.Files.readString(testConfig());
        for (Map.Entry<String, String> replacement : replaced.entrySet()) {
            if (!text.contains(replacement.getKey())) {
                throw new IllegalArgumentException("the test configuration has no '" + replacement.getKey() + "'");
            }
            text = text.replace(replacement.getKey(), replacement.getValue());
        }
        Path file = java.nio.file.Files.createTempFile("gateway-test", ".yaml");
        file.toFile().deleteOnExit();
        java.nio.file.Files.writeString(file, text + "\n" + appended);
        return file;
    }

    static Harness start(Store store, boolean withStub) throws Exception {
        return start(store, withStub, Map.of());
    }

    static Harness start(Store store, boolean withStub, Map<String, String> extra) throws Exception {
        return start(store, withStub, extra, true);
    }

    /**
     * Starts a gateway as {@link #start(Store, boolean, Map)} does, on the mutable clock or, without
     * {@code injectClock}, on the store's time as in production (Redis {@code TIME}); the harness's
     * {@link #clock} then only serves the test's own readers.
     */
    static Harness start(Store store, boolean withStub, Map<String, String> extra, boolean injectClock)
            throws Exception {
        Map<String, String> environment = new HashMap<>();
        environment.put("PORT", "0");
        environment.put("MANAGEMENT_PORT", "0");
        environment.put("GATEWAY_CONFIG", testConfig().toString());
        StubUpstream stub = withStub ? StubUpstream.start() : null;
        if (stub != null) {
            environment.put("UPSTREAM_URL", stub.baseUrl());
            environment.put("UPSTREAM_API_KEY", UPSTREAM_KEY);
        }
        if (store == Store.REDIS) {
            redis().call("FLUSHALL"); // our own private server, never the machine's
            environment.put("REDIS_URL", redis().uri());
        } else if (store == Store.CLUSTER) {
            for (RedisServer master : cluster().masters()) {
                master.call("FLUSHALL"); // each master holds its own slots' keys; our private cluster only
            }
            environment.put("REDIS_CLUSTER_URL", String.join(",", cluster().uris()));
        }
        environment.putAll(extra);
        MutableClock clock = MutableClock.at(Instant.parse("2030-01-01T00:00:00Z"));
        return new Harness(clock, GatewayServer.start(environment, injectClock ? clock : null), stub);
    }

    /**
     * Starts {@code count} gateways on the private redis-server (each start empties it, so the store
     * is empty before the first request), their clocks at one instant.
     */
    static List<Harness> fleet(int count, Map<String, String> extra) throws Exception {
        List<Harness> fleet = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                fleet.add(start(Store.REDIS, false, extra));
                fleet.get(i).clock.set(fleet.get(0).clock.instant());
            }
        } catch (Exception | Error e) {
            fleet.forEach(Harness::close);
            throw e;
        }
        return fleet;
    }

    /** Moves every gateway's clock of {@code fleet} forward by {@code by}. */
    static void advance(List<Harness> fleet, Duration by) {
        fleet.forEach(harness -> harness.clock.advance(by));
    }

    /**
     * Sends every call at once: one thread each, all released together once all are ready.
     *
     * @return the answers, in the order of {@code calls}
     */
    static List<HttpResponse<String>> race(List<Callable<HttpResponse<String>>> calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(calls.size());
        CountDownLatch ready = new CountDownLatch(calls.size());
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<HttpResponse<String>>> sent = new ArrayList<>();
            for (Callable<HttpResponse<String>> call : calls) {
                sent.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return call.call();
                }));
            }
            if (!ready.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the racing threads did not start");
            }
            go.countDown();
            List<HttpResponse<String>> answers = new ArrayList<>();
            for (Future<HttpResponse<String>> answer : sent) {
                answers.add(answer.get(60, TimeUnit.SECONDS));
            }
            return answers;
        } finally {
            pool.shutdownNow();
        }
    }

    String base() {
        return server.baseUrl();
    }

    StubUpstream stub() {
        if (stub == null) {
            throw new IllegalStateException("this harness has no stub upstream");
        }
        return stub;
    }

    HttpResponse<String> chat(String key, String json) throws Exception {
        return http.send(chatRequest(key, json), HttpResponse.BodyHandlers.ofString());
    }

    /** A chat completion request, for tests that read the answer their own way (streamed, or later). */
    HttpRequest chatRequest(String key, String json) {
        return request("/v1/chat/completions", key, "application/json", json);
    }

    HttpResponse<String> post(String path, @Nullable String key, @Nullable String contentType, String body)
            throws Exception {
        return http.send(request(path, key, contentType, body), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path, @Nullable String key, @Nullable String contentType, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return request.build();
    }

    /** A GET on the management listener, the only one that serves the status page and the metrics. */
    HttpResponse<String> admin(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.managementUrl() + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path, @Nullable String key) throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(30));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    OpenAIClient openAi(String key) {
        return OpenAIOkHttpClient.builder()
                .baseUrl(base() + "/v1")
                .apiKey(key)
                .maxRetries(0)
                .build();
    }

    /** anthropic-java on this gateway with {@code key}, without retries. */
    AnthropicClient anthropic(String key) {
        return AnthropicOkHttpClient.builder()
                .baseUrl(base())
                .apiKey(key)
                .maxRetries(0)
                .build();
    }

    OpenAIClient openAi(String key, int maxRetries, Sleeper sleeper) {
        return OpenAIOkHttpClient.builder()
                .baseUrl(base() + "/v1")
                .apiKey(key)
                .maxRetries(maxRetries)
                .sleeper(sleeper)
                .build();
    }

    /** The value of one Prometheus sample whose labels include {@code labels}; 0 when absent. */
    double metric(String name, String... labels) throws Exception {
        String body = admin("/metrics").body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean matches = true;
            for (int i = 0; i + 1 < labels.length; i += 2) {
                matches &= line.contains(labels[i] + "=\"" + labels[i + 1] + "\"");
            }
            if (matches) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /**
     * What {@code RateLimiter.usage} reports for one window of a tenant's tier: read live from the
     * gateway's store by a limiter of the test's own on the gateway's clock (the status page's
     * figures may be up to a second old).
     */
    long used(String tenant, String window) {
        GatewayConfig config = server.gateway().config();
        Tier tier = config.tenants().get(tenant).tier();
        RateLimiter reader = SlidingWindowRateLimiter.builder(server.windowStore())
                .clock(clock)
                .build();
        return reader.usage(tenant, tier).stream()
                .filter(usage -> usage.window().name().equals(window))
                .mapToLong(Decision.Usage::used)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no window " + window + " of " + tenant));
    }

    /** What {@code RateLimiter.usage} reports for one window of a shared budget, read live from the store. */
    long used(dev.ratelimit.api.SharedBudget budget, String window) {
        RateLimiter reader = SlidingWindowRateLimiter.builder(server.windowStore())
                .clock(clock)
                .build();
        return reader.usage(budget).stream()
                .filter(usage -> usage.window().name().equals(window))
                .mapToLong(Decision.Usage::used)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no window " + window + " of " + budget.name()));
    }

    /** Waits until exactly one request has settled with {@code outcome} and {@code ending}, and its slot is free. */
    void awaitSettled(String outcome, String ending, String tenant) throws InterruptedException {
        await(outcome + " " + ending, () -> {
            try {
                return settlements(outcome, ending) == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await("the slot is free", () -> inFlight(tenant) == 0);
    }

    /** Sends a JSON POST on a raw socket, for tests that read a stream line by line or walk away from it. */
    Socket openStream(String path, String key, String body) throws Exception {
        Socket socket = new Socket("127.0.0.1", server.port());
        socket.setSoTimeout(20_000);
        RawHttp.post(socket, path, key, body);
        return socket;
    }

    double settlements(String outcome, String ending) throws Exception {
        return metric("gateway_settlements_total", "outcome", outcome, "ending", ending);
    }

    double tokens(String tenant) throws Exception {
        return metric("gateway_tokens_total", "tenant", tenant);
    }

    /** Whether this gateway process knows that {@code model} is cooling down at an upstream. */
    boolean cooling(String model) {
        return server.gateway().upstream().cooldowns().active().stream()
                .anyMatch(active -> active.model().equals(model));
    }

    int inFlight(String tenant) {
        return server.gateway().slots().inFlight(tenant);
    }

    /** The names of the threads alive now, each with its id (names repeat), for tests of what a gateway starts. */
    static java.util.Set<String> liveThreads() {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.isAlive()) {
                names.add(thread.getName() + "#" + thread.getId());
            }
        }
        return names;
    }

    /** Waits for something the server does after the client's part is over, such as a settlement. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() {
        server.close();
        if (stub != null) {
            stub.close();
        }
    }
}
