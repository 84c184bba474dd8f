package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
        try (Cooldowns startedWhileDown = new Cooldowns(clock, target, new SimpleMeterRegistry())) {
            redis.get().startAgain();
            try (Cooldowns other = new Cooldowns(clock, target, new SimpleMeterRegistry())) {
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
        try (Cooldowns first = new Cooldowns(clock, target, new SimpleMeterRegistry());
                Cooldowns second = new Cooldowns(clock, target, new SimpleMeterRegistry())) {
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
}
