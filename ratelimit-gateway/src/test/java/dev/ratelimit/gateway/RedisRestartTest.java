package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway on a private redis-server that is killed and started again on the same port: the
 * concurrency cap refuses again within {@link #RECOVERY_BOUND} of Redis answering (measured and
 * printed), a slot whose release was missed during the outage passes when its lease ends, and {@code /health} and the status page say what is wrong meanwhile.
 */
class RedisRestartTest {

    /**
     * How soon the cap must refuse again once the restarted Redis answers: the slots are leases in
     * the limiter's store, so they recover with it, within about half a second (the breaker's 0.5 s
     * open time plus one probe, docs/reliability.md); four times that leaves room for a loaded
     * build machine.
     */
    static final Duration RECOVERY_BOUND = Duration.ofSeconds(2);

    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAM =
            "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path directory;

    @Test
    @DisplayName("Redis killed and restarted: the cap refuses again, in flight returns to 0, health tells meanwhile")
    void slotsRecoverAfterRestart() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-solo, tenant: solo, tier: one }
                  - { key: k-other, tenant: other, tier: one }
                tiers:
                  one:
                    max-concurrent: 1
                    windows: { minute: 100000/1m }
                limits:
                  slot-lease-seconds: 10
                  upstream-first-byte-timeout-ms: 5000
                  upstream-idle-timeout-ms: 60000
                """);
        // the append-only file keeps the slots across the kill, as a persistent production Redis would
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"));
                Harness harness = Harness.start(
                        Harness.Store.MEMORY, // the private server below, not the harness's shared one
                        true,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            CountDownLatch releaseSolo = new CountDownLatch(1);
            CountDownLatch releaseOther = new CountDownLatch(1);
            harness.stub()
                    .enqueue(StubUpstream.stream(1, releaseSolo, StubUpstream.Then.FINISH, new CountDownLatch(1)));
            HttpResponse<InputStream> solo =
                    harness.http.send(harness.chatRequest("k-solo", STREAM), HttpResponse.BodyHandlers.ofInputStream());
            harness.stub()
                    .enqueue(StubUpstream.stream(1, releaseOther, StubUpstream.Then.FINISH, new CountDownLatch(1)));
            HttpResponse<InputStream> other = harness.http.send(
                    harness.chatRequest("k-other", STREAM), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(solo.statusCode()).isEqualTo(200);
            assertThat(other.statusCode()).isEqualTo(200);
            assertThat(concurrencyRefused(harness.chat("k-solo", PLAIN))).isTrue();

            redis.kill();

            releaseOther.countDown(); // ends while Redis is away: its release fails, its lease runs out
            other.body().readAllBytes();
            HttpResponse<String> degraded = harness.chat("k-solo", PLAIN);
            assertThat(degraded.statusCode())
                    .as("fail-open: passes without a slot")
                    .isEqualTo(200);
            HttpResponse<String> health = harness.get("/health", null);
            assertThat(health.statusCode()).isEqualTo(200);
            JsonNode report = OpenAi.JSON.readTree(health.body());
            assertThat(report.path("status").asText()).isEqualTo("DEGRADED");
            assertThat(report.path("store").path("status").asText()).isEqualTo("UNREACHABLE");
            assertThat(report.path("slots").path("status").asText()).isEqualTo("UNREACHABLE");
            assertThat(report.path("slots").path("reason").asText()).contains(redis.host() + ":" + redis.port());
            assertThat(harness.get("/health/ready", null).statusCode()).isEqualTo(200);
            JsonNode card = OpenAi.JSON
                    .readTree(harness.admin("/status.json").body())
                    .path("tenants")
                    .get(0);
            assertThat(card.path("inFlight").asInt()).isEqualTo(-1);
            assertThat(card.path("slotsError").asText()).startsWith("concurrency cap NOT enforced");

            redis.startAgain(); // returns once the restarted server answers PING: the clock starts
            long answering = System.nanoTime();
            int passedMeanwhile = 0;
            long deadline = answering + RECOVERY_BOUND.toNanos();
            while (!concurrencyRefused(harness.chat("k-solo", PLAIN))) {
                passedMeanwhile++;
                assertThat(System.nanoTime())
                        .as("the cap refuses again within %d ms of Redis answering", RECOVERY_BOUND.toMillis())
                        .isLessThan(deadline);
            }
            long recoveredMillis =
                    Duration.ofNanos(System.nanoTime() - answering).toMillis();
            System.out.println("gateway slots: the concurrency cap refused again " + recoveredMillis
                    + " ms after the restarted Redis answered PING (" + passedMeanwhile + " requests passed first)");
            assertThat(recoveredMillis).isLessThan(RECOVERY_BOUND.toMillis());

            Harness.await(
                    "the slot whose release was missed passes with its lease", () -> harness.inFlight("other") == 0);
            releaseSolo.countDown();
            solo.body().readAllBytes();
            Harness.await("in flight back to 0", () -> harness.inFlight("solo") == 0);
            Harness.await("health is UP again", () -> {
                try {
                    return harness.get("/health", null).body().startsWith("{\"status\":\"UP\"");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
    }

    @Test
    @DisplayName("limits.fail-open: false with Redis down: metered requests 503, /health DOWN 503, not ready, live")
    void failClosed() throws Exception {
        Path config = directory.resolve("closed.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-solo, tenant: solo, tier: one }
                tiers:
                  one:
                    max-concurrent: 1
                    windows: { minute: 100000/1m }
                limits:
                  fail-open: false
                """);
        try (RedisServer redis = RedisServer.start();
                Harness harness = Harness.start(
                        Harness.Store.MEMORY,
                        true,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            assertThat(harness.chat("k-solo", PLAIN).statusCode()).isEqualTo(200);
            redis.stop();
            HttpResponse<String> refused = harness.chat("k-solo", PLAIN);
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.body()).contains("rate_limiter_unavailable");
            HttpResponse<String> health = harness.get("/health", null);
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(OpenAi.JSON.readTree(health.body()).path("status").asText())
                    .isEqualTo("DOWN");
            assertThat(harness.get("/health/ready", null).statusCode()).isEqualTo(503);
            assertThat(harness.get("/health/live", null).statusCode()).isEqualTo(200);
        }
    }

    private static boolean concurrencyRefused(HttpResponse<String> response) {
        if (response.statusCode() == 429) {
            assertThat(response.body()).contains("concurrency_limit_exceeded");
            return true;
        }
        assertThat(response.statusCode()).isEqualTo(200);
        return false;
    }
}
