package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;

/** The limiter alone, on the in-memory store at a fixed instant: budget keys, tiers and shadow mode. */
class TieredRateLimiterTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

    private final TierPolicy policy = TierPolicy.builder()
            .tier("free", new Window("minute", 2, Duration.ofMinutes(1)))
            .tier("pro", new Window("minute", 4, Duration.ofMinutes(1)))
            .defaultTier("free")
            .build();

    private final List<String> resolved = new ArrayList<>();

    private TieredRateLimiter.Builder limiter() {
        return TieredRateLimiter.builder(
                        SlidingWindowRateLimiter.builder(InMemoryWindowStore.create(CLOCK))
                                .clock(CLOCK)
                                .build(),
                        policy)
                .tierResolver(key -> {
                    resolved.add(key.getName());
                    return key.getName().startsWith("pro-") ? "pro" : null;
                })
                .offload(false);
    }

    private static Principal caller(String name) {
        return () -> name;
    }

    @Test
    void keysAreEscapedAsTheWebFiltersEscapeUserIdsAndNamedBudgetsStayApart() {
        assertThat(TieredRateLimiter.key(null, "alice")).isEqualTo("alice");
        assertThat(TieredRateLimiter.key(null, "ip:10.0.0.5")).isEqualTo("\\ip:10.0.0.5");
        assertThat(TieredRateLimiter.key(null, "")).isEqualTo(TieredRateLimiter.EMPTY_KEY);
        assertThat(TieredRateLimiter.key(new TieredRateLimiter.Config(), "alice"))
                .isEqualTo("alice");
        String ab = TieredRateLimiter.key(new TieredRateLimiter.Config().setBudget("a:b"), "c");
        String a = TieredRateLimiter.key(new TieredRateLimiter.Config().setBudget("a"), "b:c");
        assertThat(ab).isNotEqualTo(a).startsWith("\\budget:");
        assertThat(a).isNotEqualTo(TieredRateLimiter.key(null, "b:c"));
    }

    @Test
    void theRoutesTierWinsElseTheResolverNamesItFromTheKeyElseTheDefault() {
        TieredRateLimiter limiter = limiter().build();
        assertThat(limiter.tier(new TieredRateLimiter.Config().setTier("pro"), caller("free-key"))
                        .name())
                .isEqualTo("pro");
        assertThat(resolved).isEmpty();
        assertThat(limiter.tier(null, caller("pro-key")).name()).isEqualTo("pro");
        assertThat(limiter.tier(new TieredRateLimiter.Config(), caller("someone"))
                        .name())
                .isEqualTo("free");
        assertThat(limiter.tier(new TieredRateLimiter.Config().setTier("no-such-tier"), caller("pro-key"))
                        .name())
                .isEqualTo("free");
        assertThat(resolved).containsExactly("pro-key", "someone");
    }

    @Test
    void aRouteWithoutArgumentsChecksTheKeyAndRefusesPastTheLimitWithRetryAfter() {
        TieredRateLimiter limiter = limiter().build();
        Response first = limiter.isAllowed("route", "bob").block();
        Response second = limiter.isAllowed("route", "bob").block();
        Response third = limiter.isAllowed("other-route", "bob").block();
        assertThat(first.isAllowed()).isTrue();
        assertThat(first.getHeaders()).containsEntry("X-RateLimit-Remaining", "1");
        assertThat(second.isAllowed()).isTrue();
        assertThat(third.isAllowed()).isFalse();
        assertThat(third.getHeaders())
                .containsEntry("X-RateLimit-Remaining", "0")
                .containsEntry("Retry-After", "60")
                .containsEntry("RateLimit-Policy", "\"minute\";q=2;w=60");
    }

    @Test
    void inShadowModeARefusalIsLetThroughWithoutHeaders() {
        TieredRateLimiter limiter = limiter().shadowMode(true).build();
        limiter.isAllowed("route", "carol").block();
        limiter.isAllowed("route", "carol").block();
        Response third = limiter.isAllowed("route", "carol").block();
        assertThat(third.isAllowed()).isTrue();
        assertThat(third.getHeaders()).isEmpty();
    }
}
