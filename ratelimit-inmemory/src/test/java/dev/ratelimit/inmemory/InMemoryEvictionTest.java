package dev.ratelimit.inmemory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class InMemoryEvictionTest {

    @Test
    @DisplayName("idle state is evicted on the time that stamped it: the limiter's injected clock, not the system's")
    void evictionFollowsTheInjectedClock() {
        // far from the system clock in both directions: eviction must follow neither real time nor the store's clock
        MutableClock clock = MutableClock.at(Instant.parse("2001-01-01T00:00:00Z"));
        InMemoryWindowStore store = InMemoryWindowStore.create();
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).clock(clock).build();
        Tier tier = Tier.of("t", Window.of(5, Duration.ofMinutes(1)));

        limiter.check("alice", tier);
        clock.advance(Duration.ofSeconds(60));
        limiter.check("bob", tier);
        assertThat(store.holdsStateFor("alice"))
                .as("alice's entry has just left its window: kept until one second later")
                .isTrue();

        clock.advance(Duration.ofMillis(1_001));
        limiter.check("bob", tier);
        assertThat(store.holdsStateFor("alice"))
                .as("one second after alice's last entry left, on the injected clock")
                .isFalse();
        assertThat(store.holdsStateFor("bob")).as("bob is active").isTrue();
    }

    @Test
    @DisplayName("a precision window keeps its state until its last step has left, then drops it")
    void precisionStateLeavesWithItsLastStep() {
        MutableClock clock = MutableClock.at(Instant.parse("2030-01-01T00:00:00Z"));
        InMemoryWindowStore store = InMemoryWindowStore.create(clock);
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).clock(clock).build();
        Tier tier = Tier.of("t", Window.of(5, Duration.ofMinutes(1)).withPrecision(Duration.ofSeconds(10)));

        clock.advance(Duration.ofSeconds(2)); // step [0 s, 10 s): counted at 10 s, leaves at 70 s
        limiter.check("carol", tier);
        clock.advance(Duration.ofSeconds(68)); // at 70 s
        limiter.check("dave", tier); // the store learns the time from the requests it sees
        assertThat(store.holdsStateFor("carol"))
                .as("at 70 s: left, kept one more second")
                .isTrue();
        clock.advance(Duration.ofMillis(1_001));
        limiter.check("dave", tier);
        assertThat(store.holdsStateFor("carol")).as("at 71.001 s").isFalse();
    }
}
