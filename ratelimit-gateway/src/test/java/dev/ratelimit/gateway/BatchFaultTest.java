package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.models.batches.Batch;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batch outstanding while Redis is paused or killed, end to end through the gateway on a private
 * redis-server with the default 500 ms store timeout: its settlement is not lost, is applied once,
 * and never fails open (the reservation stays charged while Redis cannot settle it). Prices as in
 * {@link BatchTest}: a line that may take 100,000 output tokens reserves $0.10.
 */
class BatchFaultTest {

    private static final String RESERVATIONS = "ratelimit:batch-reservations";

    @TempDir
    Path directory;

    private Path config() throws Exception {
        Path config = directory.resolve("batches.yaml");
        Files.writeString(config, """
                keys:
                  - { key: alice-key, tenant: alice, tier: member }
                tiers:
                  member:
                    max-concurrent: 10
                    windows: { minute: 1000/1m, spend-day: $0.60/1d@1m }
                prices:
                  metered: { input: 0, output: 2.00 }
                limits:
                  batch-poll-interval-seconds: 3600
                """);
        return config;
    }

    private Harness gateway(RedisServer redis) throws Exception {
        return Harness.start(
                Harness.Store.MEMORY, true, Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config().toString()));
    }

    /** A batch of two lines that reserved $0.20, completed upstream with 3,000 output tokens a line ($0.006). */
    private static Batch completedBatch(Harness harness, OpenAIClient alice) {
        Batch batch = BatchTest.batch(alice, 2, 100_000);
        assertThat(spent(harness)).isEqualTo(200_000);
        harness.stub().batches().complete(batch.id(), 10, 3_000);
        return batch;
    }

    private static long spent(Harness harness) {
        try {
            return harness.used("alice", "spend-day");
        } catch (RateLimiterUnavailableException stillDown) {
            return -1;
        }
    }

    @Test
    @DisplayName("CLIENT PAUSE WRITE while the owner's GET would settle an ended batch: nothing is given back while"
            + " Redis takes no writes (the attempt cannot be recorded), and the next GET settles it once")
    void pausedWhileSettling() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Harness harness = gateway(redis)) {
            OpenAIClient alice = harness.openAi("alice-key");
            Batch batch = completedBatch(harness, alice);

            try (RespClient raw = redis.connect()) {
                raw.call("CLIENT", "PAUSE", "2000", "WRITE"); // reads answer; the attempt's SET and HSET wait
            }
            assertThat(alice.batches().retrieve(batch.id()).status()).isEqualTo(Batch.Status.COMPLETED);
            Harness.await("Redis takes writes again", () -> "OK".equals(redis.call("SET", "probe", "1")));
            assertThat(spent(harness)).as("nothing given back while paused").isEqualTo(200_000);

            // the paused writes ran late: the attempt is recorded with its guard, and this GET settles within it
            alice.batches().retrieve(batch.id());
            assertThat(spent(harness)).isEqualTo(6_000);
            alice.batches().retrieve(batch.id());
            assertThat(spent(harness)).isEqualTo(6_000);
            assertThat(redis.call("HEXISTS", RESERVATIONS, batch.id())).isEqualTo(0L);
            assertThat(harness.metric("ratelimit_settle_failures_total"))
                    .as("none given up")
                    .isZero();
        }
    }

    @Test
    @DisplayName("Redis killed while a batch is outstanding: the owner's GET is 404 and settles nothing while it is"
            + " down (fails closed); after a restart from its append-only file the next GET settles it once")
    void killedAndRestarted() throws Exception {
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"));
                Harness harness = gateway(redis)) {
            OpenAIClient alice = harness.openAi("alice-key");
            Batch batch = completedBatch(harness, alice);

            redis.kill();
            HttpResponse<String> down = harness.get("/v1/batches/" + batch.id(), "alice-key");
            assertThat(down.statusCode())
                    .as("ownership cannot be checked: 404, never another tenant's batch")
                    .isEqualTo(404);
            redis.startAgain();
            Harness.await("Redis answers again", () -> spent(harness) >= 0);
            assertThat(spent(harness))
                    .as("nothing was given back while Redis was down")
                    .isEqualTo(200_000);

            Harness.await("the owner's GET settles the batch", () -> {
                try {
                    return harness.get("/v1/batches/" + batch.id(), "alice-key").statusCode() == 200
                            && spent(harness) == 6_000;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            alice.batches().retrieve(batch.id());
            assertThat(spent(harness)).isEqualTo(6_000);
            assertThat(redis.call("HEXISTS", RESERVATIONS, batch.id())).isEqualTo(0L);
        }
    }

    @Test
    @DisplayName("a batch whose settlement was attempted longer ago than the guard (it may have been applied, and the"
            + " store no longer remembers) is not settled again: it keeps what it was charged, never twice refunded")
    void attemptedTooLongAgo() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Harness harness = gateway(redis)) {
            OpenAIClient alice = harness.openAi("alice-key");
            Batch late = completedBatch(harness, alice);
            redis.call("HSET", "ratelimit:batch-settling", late.id(), "1"); // attempted, its guard long gone
            alice.batches().retrieve(late.id());
            assertThat(spent(harness)).isEqualTo(200_000);
            assertThat(redis.call("HEXISTS", RESERVATIONS, late.id()))
                    .as("forgotten: nobody settles it later")
                    .isEqualTo(0L);

            Batch recent = BatchTest.batch(alice, 2, 100_000);
            harness.stub().batches().complete(recent.id(), 10, 3_000);
            redis.call("HSET", "ratelimit:batch-settling", recent.id(), "1"); // attempted within its guard
            redis.call("SET", "ratelimit:batch-settle-guard:" + recent.id(), "1", "PX", "600000");
            alice.batches().retrieve(recent.id());
            assertThat(spent(harness))
                    .as("the second batch settled again, within its guard")
                    .isEqualTo(206_000);
        }
    }
}
