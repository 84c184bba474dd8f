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

/**
 * Section E: optional, real expiry of idle state. A store declaring {@code supportsRealExpiry()}
 * keeps a user's state while any of its entries can still count, and drops it once the longest
 * window plus one second has passed since the last recorded check.
 */
interface RealExpiryRules extends ConformanceSection {

    @Test
    @DisplayName("E1 an idle user's state outlives its window, and is dropped after its longest window plus one second")
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    default void idleStateExpires() throws InterruptedException {
        assumeTrue(kit().supportsRealExpiry(), "[E1] the store does not declare real expiry");
        RateLimiter ownTime =
                SlidingWindowRateLimiter.builder(store()).failOpen(false).build();
        String user = user("e1");
        Duration window = Duration.ofSeconds(1);
        long windowNanos = window.toNanos();
        long before = System.nanoTime();
        assertThat(ownTime.check(user, 1, window).allowed())
                .as("[E1] the first check of an idle user")
                .isTrue();
        // The store stamped the check between `before` and `after`, on its own clock: its window ends
        // by after + 1 s, and its state may go from before + 2 s, no earlier.
        long after = System.nanoTime();
        assertThat(kit().holdsStateFor(store(), user, window))
                .as("[E1] state right after a check")
                .isTrue();

        sleepUntil(after + windowNanos + windowNanos / 2);
        boolean heldPastItsWindow = kit().holdsStateFor(store(), user, window);
        assumeTrue(
                System.nanoTime() - before < 2 * windowNanos,
                "[E1] this machine stalled past the check's window + 1 s before the store could be asked:"
                        + " the rule cannot be judged on this run");
        assertThat(heldPastItsWindow)
                .as("[E1] state 1.5 s after a check of a 1 s window: it must outlive its window and be kept"
                        + " until window + 1 s")
                .isTrue();

        sleepUntil(after + 2 * windowNanos + TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(kit().holdsStateFor(store(), user, window))
                .as("[E1] state 2.05 s after the last check of a 1 s window: it must be dropped once the longest"
                        + " window plus one second has passed")
                .isFalse();
        assertThat(ownTime.check(user, 1, window).allowed())
                .as("[E1] a user whose state was dropped starts afresh")
                .isTrue();
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(Math.max(0, nanoTime - System.nanoTime()));
    }
}
