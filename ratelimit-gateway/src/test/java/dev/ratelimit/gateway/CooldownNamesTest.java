package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisTarget;
import dev.ratelimit.gateway.upstream.Cooldowns;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Any model and upstream name has a cooldown of its own, shared by two gateway processes on one
 * redis-server and on a Redis Cluster: names with spaces, braces (which would move a cluster hash
 * tag), colons (which separate a key's parts) and non-ASCII text, each written through the library's
 * key codec.
 */
class CooldownNamesTest {

    private static final List<String> MODELS =
            List.of("my fine tuned model", "ft:gpt-4o-mini:acme:{x}:1", "}{", "~claude", "模型 ä ✓", "a:b", "a");

    private static RedisTarget target(Harness.Store store) {
        return store == Harness.Store.CLUSTER
                ? RedisTarget.of(null, String.join(",", Harness.cluster().uris()))
                : RedisTarget.of(Harness.redis().uri(), null);
    }

    @ParameterizedTest
    @EnumSource(
            value = Harness.Store.class,
            names = {"REDIS", "CLUSTER"})
    @DisplayName("two processes share the cooldown of every odd name, each apart from the others")
    void everyNameIsSharedApart(Harness.Store store) throws Exception {
        RedisTarget target = target(store);
        String upstream = "up {" + store + "} é"; // braces in the upstream's name: the hash tag is its token
        Clock clock = Clock.systemUTC();
        Instant until = clock.instant().plus(Duration.ofMinutes(5)).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        try (Cooldowns first = new Cooldowns(
                        clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of(upstream));
                Cooldowns second = new Cooldowns(
                        clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of(upstream))) {
            for (int i = 0; i < MODELS.size(); i++) {
                String model = MODELS.get(i);
                Instant end = until.plusMillis(i);
                Harness.await("the second process knows the cooldown of '" + model + "'", () -> {
                    first.start(upstream, model, end, Duration.ofSeconds(5));
                    return end.equals(second.until(upstream, model));
                });
            }
            for (int i = 0; i < MODELS.size(); i++) {
                assertThat(second.until(upstream, MODELS.get(i)))
                        .as("'%s' has its own end", MODELS.get(i))
                        .isEqualTo(until.plusMillis(i));
            }
            assertThat(second.until(upstream, "my"))
                    .as("no model named by a part of another")
                    .isNull();
            assertThat(second.until(upstream, "ft:gpt-4o-mini")).isNull();

            try (Cooldowns later =
                    new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of(upstream))) {
                for (String model : MODELS) {
                    assertThat(later.until(upstream, model))
                            .as("a process that starts later reads '%s' from the upstream's hash", model)
                            .isNotNull();
                }
            }
            first.end(upstream, "}{");
            Harness.await("the end reaches the other process", () -> second.until(upstream, "}{") == null);
            assertThat(second.until(upstream, "a:b")).as("the other names stay").isNotNull();
            for (String model : MODELS) {
                first.end(upstream, model);
            }
        }
    }

    @org.junit.jupiter.api.Test
    @DisplayName("names are written through the library's key codec: a brace never moves the hash tag")
    void keysUseTheCodec() {
        GatewayKeys keys = GatewayKeys.DEFAULT;
        assertThat(keys.cooldowns("openai")).isEqualTo("ratelimit:cooldowns:{openai}");
        assertThat(keys.cooldowns("a}b")).startsWith("ratelimit:cooldowns:{~").endsWith("}");
        assertThat(keys.cooldowns("a}b").chars().filter(c -> c == '}').count()).isEqualTo(1);
        assertThat(keys.cooldownProbe("openai", "x}y", 7)).doesNotContain("x}y");
        assertThat(keys.alert("team", "r}d", "spend", 80, 0)).isNotEqualTo(keys.alert("team", "r", "d}:spend", 80, 0));
        assertThat(new GatewayKeys("gw1").cooldownChannel()).isEqualTo("gw1:cooldowns");
    }
}
