package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cold gateway (a JVM of its own, a redis-server that has never seen the script) on a machine kept
 * busy by spinning threads (four per core; a load average of 8 to 14 on two cores): the first 60 calls, released together as soon as {@code /health/ready}
 * says 200, are all decided by the store (with the default 500 ms store timeout): exactly the
 * tier's 30 a minute admitted, none degraded, none refused with 503.
 */
class ColdStartTest {

    private static final int CALLS = 60;
    private static final int LIMIT = 30;
    /** Threads kept spinning through the test: four per core unless {@code -Dcoldstart.spinners} says. */
    private static final int SPINNERS =
            Integer.getInteger("coldstart.spinners", 4 * Runtime.getRuntime().availableProcessors());

    private static final String PRICED =
            "{\"model\":\"gpt-4o\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path directory;

    @Test
    @DisplayName("a cold gateway's first 60-call burst on a loaded machine is decided by the store")
    void firstBurstIsDecidedByTheStore() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-team, tenant: team, tier: paying }
                tiers:
                  paying:
                    max-concurrent: 1000
                    windows: { minute: %d/1m, spend-day: $5/1d@1m }
                prices:
                  gpt-4o: { input: 2.50, cached-input: 1.25, output: 10.00 }
                """.formatted(LIMIT));
        AtomicBoolean loaded = new AtomicBoolean(true);
        List<Thread> load = new ArrayList<>();
        for (int i = 0; i < SPINNERS; i++) {
            Thread spinner = new Thread(() -> {
                long x = 0;
                while (loaded.get()) {
                    x += System.nanoTime() % 7;
                }
                if (x == 42) {
                    System.out.print("");
                }
            });
            spinner.setDaemon(true);
            spinner.start();
            load.add(spinner);
        }
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        try (RedisServer redis = RedisServer.start();
                GatewayProcess gateway = GatewayProcess.onClassPath(
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            String base = gateway.base();
            long ready = awaitReady(http, base);
            long readyMillis = TimeUnit.NANOSECONDS.toMillis(ready - gateway.startedNanos);

            ExecutorService pool = Executors.newFixedThreadPool(CALLS);
            List<HttpResponse<String>> responses = new ArrayList<>();
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<HttpResponse<String>>> calls = new ArrayList<>();
                for (int i = 0; i < CALLS; i++) {
                    calls.add(pool.submit(() -> {
                        go.await();
                        return http.send(
                                HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                                        .header("Authorization", "Bearer k-team")
                                        .header("Content-Type", "application/json")
                                        .timeout(Duration.ofSeconds(60))
                                        .POST(HttpRequest.BodyPublishers.ofString(PRICED))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                    }));
                }
                go.countDown();
                for (Future<HttpResponse<String>> call : calls) {
                    responses.add(call.get(90, TimeUnit.SECONDS));
                }
            } finally {
                pool.shutdownNow();
            }
            int admitted = 0;
            int limited = 0;
            int unavailable = 0;
            int degraded = 0;
            for (HttpResponse<String> response : responses) {
                if (response.headers().firstValue("X-RateLimit-Degraded").isPresent()) {
                    degraded++;
                }
                switch (response.statusCode()) {
                    case 200 -> admitted++;
                    case 429 -> limited++;
                    case 503 -> unavailable++;
                    default -> throw new AssertionError(response.statusCode() + " " + response.body());
                }
            }
            String metrics = http.send(
                            HttpRequest.newBuilder(URI.create(gateway.managementBase() + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            double storeFailures = sum(metrics, "ratelimit_store_failures_total");
            double slowest = max(metrics, "ratelimit_check_seconds_max");
            System.out.println("cold start under load (" + SPINNERS + " spinning threads): ready " + readyMillis
                    + " ms after launch; first burst of "
                    + CALLS + ": " + admitted + " admitted, " + limited + " refused 429, " + unavailable + " 503, "
                    + degraded + " degraded; store failures " + (long) storeFailures + "; slowest decision "
                    + Math.round(slowest * 1000) + " ms; "
                    + gateway.output()
                            .lines()
                            .filter(line -> line.contains("warm"))
                            .toList());
            assertThat(degraded).as("none passed unchecked").isZero();
            assertThat(unavailable).as("none refused for want of the store").isZero();
            assertThat(admitted).as("exactly the tier's %d a minute", LIMIT).isEqualTo(LIMIT);
            assertThat(limited).isEqualTo(CALLS - LIMIT);
            assertThat(storeFailures).as("no store call failed").isZero();
        } finally {
            loaded.set(false);
            for (Thread spinner : load) {
                spinner.join(5_000);
            }
        }
    }

    @Test
    @DisplayName("a gateway started while Redis is down is not ready until Redis answers, then ready")
    void notReadyBeforeTheStoreHasAnswered() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            redis.stop();
            try (Harness harness = Harness.start(Harness.Store.MEMORY, false, Map.of("REDIS_URL", redis.uri()))) {
                assertThat(harness.get("/health/ready", null).statusCode())
                        .as("failing open, but the store has never answered")
                        .isEqualTo(503);
                assertThat(harness.get("/health/live", null).statusCode()).isEqualTo(200);
                redis.startAgain();
                Harness.await("ready once Redis answers", () -> {
                    try {
                        return harness.get("/health/ready", null).statusCode() == 200;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                redis.stop();
                Harness.await("degraded after an outage, and still ready (fail-open)", () -> {
                    try {
                        return harness.get("/health", null).body().contains("\"DEGRADED\"");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(harness.get("/health/ready", null).statusCode()).isEqualTo(200);
            }
        }
    }

    /** Polls readiness every 10 ms until it answers 200; returns when it did. */
    private static long awaitReady(HttpClient http, String base) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> ready = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/health/ready"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (ready.statusCode() == 200) {
                    return System.nanoTime();
                }
            } catch (java.io.IOException e) {
                // not listening yet
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the gateway never said ready");
    }

    private static double max(String metrics, String name) {
        double max = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                max = Math.max(max, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        return max;
    }

    private static double sum(String metrics, String name) {
        double sum = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
