package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisTarget;
import dev.ratelimit.gateway.upstream.Cooldowns;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gateway process that starts while Redis is unreachable learns the other processes' cooldowns
 * once Redis answers: its subscription to the announcements is tried again until it is made.
 */
class CooldownsSubscriptionTest {

    @RegisterExtension
    final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    @Test
    void subscribesOnceRedisAnswers() throws Exception {
        RedisTarget target = RedisTarget.of(redis.get().uri(), null);
        redis.get().stop();
        Clock clock = Clock.systemUTC();
        try (Cooldowns startedWhileDown =
                new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"))) {
            redis.get().startAgain();
            try (Cooldowns other =
                    new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"))) {
                Instant until = clock.instant().plusSeconds(60);
                // announced again until the first process has subscribed and heard one
                Harness.await("the process started while Redis was down knows the other's cooldown", () -> {
                    other.start("openai", "gpt-4o", until, Duration.ofSeconds(5));
                    return startedWhileDown.until("openai", "gpt-4o") != null;
                });
            }
        }
    }

    @Test
    void aModelNameWithSpacesIsSharedWhole() throws Exception {
        RedisTarget target = RedisTarget.of(redis.get().uri(), null);
        Clock clock = Clock.systemUTC();
        try (Cooldowns first = new Cooldowns(
                        clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"));
                Cooldowns second = new Cooldowns(
                        clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"))) {
            Instant until = clock.instant().plusSeconds(60);
            Harness.await("the other process knows the cooldown of 'my fine tuned model'", () -> {
                first.start("openai", "my fine tuned model", until, Duration.ofSeconds(5));
                return second.until("openai", "my fine tuned model") != null;
            });
            assertThat(second.until("openai", "my"))
                    .as("not a model named after the first word")
                    .isNull();
            first.end("openai", "my fine tuned model");
            Harness.await("its end too", () -> second.until("openai", "my fine tuned model") == null);
        }
    }

    @Test
    void aProcessStartedLaterReadsTheUpstreamsHashWhateverTheModelsName() throws Exception {
        RedisTarget target = RedisTarget.of(redis.get().uri(), null);
        Clock clock = Clock.systemUTC();
        String model = "my {fine} tuned * model";
        try (Cooldowns first =
                new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"))) {
            Instant until = clock.instant().plusSeconds(60);
            first.start("openai", model, until, Duration.ofSeconds(5));
            assertThat(redis.get().call("HEXISTS", GatewayKeys.DEFAULT.cooldowns("openai"), model))
                    .as("one field of the upstream's hash")
                    .isEqualTo(1L);
            try (Cooldowns later =
                    new Cooldowns(clock, target, GatewayKeys.DEFAULT, new SimpleMeterRegistry(), List.of("openai"))) {
                Harness.await("read from the hash at subscription", () -> later.until("openai", model) != null);
                assertThat(later.until("openai", model).toEpochMilli()).isEqualTo(until.toEpochMilli());
                first.end("openai", model);
                Harness.await("its end announced", () -> later.until("openai", model) == null);
                assertThat(redis.get().call("HEXISTS", GatewayKeys.DEFAULT.cooldowns("openai"), model))
                        .isEqualTo(0L);
            }
        }
    }
}
