package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisTarget;
import dev.ratelimit.gateway.upstream.Cooldowns;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The gateway on a private 3-master Redis Cluster ({@code REDIS_CLUSTER_URL}): it answers and
 * meters, says where its budgets are, checks every master for {@code /health}, and shares cooldowns
 * whose keys lie on every master.
 */
class RedisClusterTest {

    private static ChatCompletionCreateParams hello() {
        return ChatCompletionCreateParams.builder()
                .model("gpt-4o-mini")
                .addUserMessage("Hello there")
                .build();
    }

    @Test
    @DisplayName("on a cluster the gateway answers, charges the tenant and the model's cap, and refuses the 6th"
            + " demo-free call within a minute")
    void answersAndMeters() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.CLUSTER, false)) {
            OpenAIClient client = harness.openAi("demo-free");
            long total = 0;
            for (int i = 0; i < 5; i++) {
                ChatCompletion completion = client.chat().completions().create(hello());
                total += completion.usage().orElseThrow().totalTokens();
            }
            long tokens = total;
            Harness.await("settled", () -> harness.inFlight("demo-user-free") == 0);
            assertThat(harness.used("demo-user-free", "minute")).isEqualTo(5);
            assertThat(harness.used("demo-user-free", "tokens-minute")).isEqualTo(tokens);
            GatewayConfig.ModelCap cap =
                    harness.server.gateway().config().models().get("gpt-4o-mini");
            assertThat(harness.used(cap.budget(), "rpm"))
                    .as("the model's upstream cap, a scope of its own")
                    .isEqualTo(5);

            harness.clock.advance(Duration.ofSeconds(10));
            assertThatThrownBy(() -> client.chat().completions().create(hello()))
                    .isInstanceOfSatisfying(RateLimitException.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(429);
                        assertThat(e.getMessage()).contains("the limit of 5 requests per minute (window 'minute')");
                        assertThat(e.headers().values("retry-after")).containsExactly("50");
                        assertThat(e.headers().values("x-ratelimit-window")).containsExactly("minute");
                    });
            assertThat(harness.used(cap.budget(), "rpm"))
                    .as("the refused call holds nothing in the cap")
                    .isEqualTo(5);

            assertThat(harness.get("/health", null).body())
                    .isEqualTo("{\"status\":\"UP\",\"store\":{\"kind\":\"redis-cluster\",\"status\":\"UP\"},"
                            + "\"slots\":{\"kind\":\"redis-cluster\",\"status\":\"UP\"},\"failOpen\":true,"
                            + "\"limiter\":\"enabled\"}");
            JsonNode status = OpenAi.JSON.readTree(harness.admin("/status.json").body());
            assertThat(status.path("store").asText())
                    .startsWith("redis cluster seeded by "
                            + Harness.cluster().uris().get(0).substring(8))
                    .endsWith("reachable, 3 masters");
        }
    }

    @Test
    @DisplayName("/health PINGs every master: one that is down makes the gateway DEGRADED, naming it, although the"
            + " master of the tenant the store check reads still answers")
    void healthChecksEveryMaster() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(); // its own: one of its masters dies
                Harness harness = Harness.start(
                        Harness.Store.MEMORY, false, Map.of("REDIS_CLUSTER_URL", String.join(",", cluster.uris())))) {
            assertThat(harness.get("/health", null).body()).startsWith("{\"status\":\"UP\"");
            RedisServer tenants = cluster.nodeOf("{demo-user-free}"); // the first tenant's slot, read by the check
            RedisServer victim = cluster.masters().stream()
                    .filter(master -> master.port() != tenants.port())
                    .findFirst()
                    .orElseThrow();
            victim.kill();
            Harness.await("/health notices", () -> {
                try {
                    return harness.get("/health", null).body().contains("DEGRADED");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            JsonNode health = OpenAi.JSON.readTree(harness.get("/health", null).body());
            assertThat(health.path("store").path("status").asText()).isEqualTo("UNREACHABLE");
            assertThat(health.path("store").path("reason").asText())
                    .contains("cluster masters not answering PING", "127.0.0.1:" + victim.port());
        }
    }

    @Test
    @DisplayName("REDIS_URL and REDIS_CLUSTER_URL together: the gateway refuses to start, naming both")
    void bothVariables() {
        assertThatThrownBy(
                        () -> Harness.start(Harness.Store.CLUSTER, false, Map.of("REDIS_URL", "redis://127.0.0.1:1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("REDIS_URL and REDIS_CLUSTER_URL are both set");
        assertThatThrownBy(() -> RedisTarget.of(null, "redis://127.0.0.1:7000/2"))
                .hasMessageContaining("database 0 only");
        assertThat(RedisTarget.of(null, " redis://127.0.0.1:7000, redis://127.0.0.1:7001 ,"))
                .isEqualTo(new RedisTarget(
                        java.util.List.of(
                                io.lettuce.core.RedisURI.create("redis://127.0.0.1:7000"),
                                io.lettuce.core.RedisURI.create("redis://127.0.0.1:7001")),
                        true));
    }

    @Test
    @DisplayName("cooldown hashes on every master: a process that starts later reads its upstreams' (no scan),"
            + " and an end announced by one process reaches the other")
    void cooldownsOnEveryMaster() throws Exception {
        RedisCluster cluster = Harness.cluster();
        for (RedisServer master : cluster.masters()) {
            master.call("FLUSHALL");
        }
        // upstream names whose cooldown keys hash to each of the three masters (the upstream is the hash tag)
        Map<String, RedisServer> upstreams = new LinkedHashMap<>();
        Set<Integer> covered = new HashSet<>();
        for (int i = 0; covered.size() < RedisCluster.MASTERS; i++) {
            String upstream = "upstream-" + i;
            RedisServer master = cluster.nodeOf(GatewayKeys.DEFAULT.cooldowns(upstream));
            if (covered.add(master.port())) {
                upstreams.put(upstream, master);
            }
        }
        RedisTarget target = RedisTarget.of(null, String.join(",", cluster.uris()));
        Clock clock = Clock.systemUTC();
        Instant until = clock.instant().plus(Duration.ofMinutes(5));
        try (Cooldowns first =
                new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), upstreams.keySet())) {
            for (String upstream : upstreams.keySet()) {
                first.start(upstream, "m", until, Duration.ofSeconds(5));
            }
            for (Map.Entry<String, RedisServer> entry : upstreams.entrySet()) {
                assertThat(entry.getValue().call("HEXISTS", GatewayKeys.DEFAULT.cooldowns(entry.getKey()), "m"))
                        .as("the key of %s on its master", entry.getKey())
                        .isEqualTo(1L);
            }
            try (Cooldowns later =
                    new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), upstreams.keySet())) {
                for (String upstream : upstreams.keySet()) {
                    assertThat(later.until(upstream, "m"))
                            .as("read at its start from the master of %s", upstream)
                            .isNotNull();
                }
                String ended = upstreams.keySet().iterator().next();
                first.end(ended, "m");
                Harness.await("the end announced reaches the other process", () -> later.until(ended, "m") == null);
            }
        }
    }
}
