package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisTarget;
import dev.ratelimit.gateway.upstream.Cooldowns;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Upstream cooldowns across a Redis restart: a gateway whose subscription was cut by the restart
 * learns a cooldown another gateway set while it was away (its announcement reached no one) by
 * reading its upstreams' hashes when it subscribes again, one {@code HGETALL} per upstream and never a
 * scan of the keyspace.
 */
class CooldownRestartTest {

    private static final String UPSTREAM = "openai";
    private static final GatewayKeys KEYS = GatewayKeys.DEFAULT;

    @Test
    @DisplayName("a cooldown set while a gateway's subscription is down is read from the hash when it is back")
    void cooldownSetWhileAwayIsRead() throws Exception {
        Clock clock = Clock.systemUTC();
        Instant before = clock.instant().plus(Duration.ofMinutes(5)).truncatedTo(ChronoUnit.MILLIS);
        Instant whileAway = before.plusMillis(1);
        try (RedisServer redis = RedisServer.start();
                Cooldowns gateway = new Cooldowns(
                        clock, RedisTarget.of(redis.uri(), null), KEYS, new SimpleMeterRegistry(), List.of(UPSTREAM))) {
            gateway.start(UPSTREAM, "gpt-4o", before, Duration.ofSeconds(5));
            assertThat(gateway.until(UPSTREAM, "gpt-4o")).isEqualTo(before);

            boolean setWhileAway = false;
            for (int attempt = 0; attempt < 5 && !setWhileAway; attempt++) {
                redis.kill();
                Thread.sleep(1_000); // the subscription's reconnect attempts back off meanwhile
                redis.startAgain();
                // another gateway's cooldown, written and announced as Cooldowns does, before this
                // gateway's subscription is back (checked: no subscriber heard the announcement)
                redis.call("HSET", KEYS.cooldowns(UPSTREAM), "gpt-4o-mini", Long.toString(whileAway.toEpochMilli()));
                Object heard = redis.call(
                        "PUBLISH", KEYS.cooldownChannel(), UPSTREAM + " gpt-4o-mini " + whileAway.toEpochMilli());
                setWhileAway = Long.valueOf(0).equals(heard);
            }
            assertThat(setWhileAway)
                    .as("the cooldown was set while the gateway's subscription was down")
                    .isTrue();

            Harness.await(
                    "the gateway reads the cooldown set while it was away",
                    () -> whileAway.equals(gateway.until(UPSTREAM, "gpt-4o-mini")));
            String stats = String.valueOf(redis.call("INFO", "commandstats"));
            assertThat(stats).as("the hash read again").contains("cmdstat_hgetall:");
            assertThat(stats).as("no scan of the keyspace").doesNotContain("cmdstat_scan:", "cmdstat_keys:");
        }
    }
}
