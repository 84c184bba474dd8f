package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Section E: optional, real expiry of idle state. */
interface RealExpiryRules extends ConformanceSection {

    @Test
    @DisplayName("E1 an idle user's state outlives its window, and is dropped after its longest window plus one second")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    default void idleStateExpires() throws InterruptedException {
        assumeTrue(kit().supportsRealExpiry(), "the store does not declare real expiry");
        RateLimiter ownTime =
                SlidingWindowRateLimiter.builder(store()).failOpen(false).build();
        String user = user("e1");
        Duration second = Duration.ofSeconds(1);
        assertThat(ownTime.check(user, 1, second).allowed()).isTrue();
        assertThat(kit().holdsStateFor(store(), user, second))
                .as("[E1] state right after a check")
                .isTrue();
        Thread.sleep(700);
        assertThat(kit().holdsStateFor(store(), user, second))
                .as("[E1] state 0.7 s after a check: it must outlive its window")
                .isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (kit().holdsStateFor(store(), user, second) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(kit().holdsStateFor(store(), user, second))
                .as("[E1] state 10 s after the last check of a 1 s window")
                .isFalse();
        assertThat(ownTime.check(user, 1, second).allowed())
                .as("[E1] allowed again")
                .isTrue();
    }
}
