package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Section C: exact under concurrency. */
interface ConcurrencyRules extends ConformanceSection {

    @Test
    @DisplayName("C1 20 simultaneous checks on a limit of 10 allow exactly 10, and 10 more a window later")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void twentyThreads() throws Exception {
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            String user = user("c1-" + trial);
            assertThat(allowedOfRace(
                            20, thread -> limiter().check(user, 10, MINUTE).allowed()))
                    .as("[C1] trial %d: allowed of 20 simultaneous checks, limit 10", trial)
                    .isEqualTo(10);
            clock().advance(Duration.ofSeconds(61));
            assertThat(allowedOfRace(
                            20, thread -> limiter().check(user, 10, MINUTE).allowed()))
                    .as("[C1] trial %d: allowed of 20 simultaneous checks 61 s later", trial)
                    .isEqualTo(10);
        }
    }

    @Test
    @DisplayName("C2 200 simultaneous checks on a limit of 50 allow exactly 50")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void twoHundredThreads() throws Exception {
        String user = user("c2");
        assertThat(allowedOfRace(
                        200, thread -> limiter().check(user, 50, MINUTE).allowed()))
                .as("[C2] allowed of 200 simultaneous checks, limit 50")
                .isEqualTo(50);
    }

    @Test
    @DisplayName("C3 500 asynchronous checks in flight on a limit of 100 allow exactly 100")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void fiveHundredAsync() {
        String user = user("c3");
        List<CompletableFuture<Decision>> futures = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            futures.add(limiter().checkAsync(user, 100, MINUTE).toCompletableFuture());
        }
        long allowed = futures.stream()
                .map(CompletableFuture::join)
                .filter(Decision::allowed)
                .count();
        assertThat(allowed)
                .as("[C3] allowed of 500 asynchronous checks, limit 100")
                .isEqualTo(100);
    }

    @Test
    @DisplayName("C4 all or nothing holds under contention across two windows")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void allOrNothingUnderContention() throws Exception {
        String user = user("c4");
        List<Window> windows = List.of(new Window("minute", 10, MINUTE), new Window("day", 15, DAY));
        assertThat(allowedOfRace(50, thread -> limiter().check(user, windows).allowed()))
                .as("[C4] first minute: the minute window caps")
                .isEqualTo(10);
        clock().advance(Duration.ofSeconds(61));
        assertThat(allowedOfRace(50, thread -> limiter().check(user, windows).allowed()))
                .as("[C4] second minute: the day window caps at 15 in all")
                .isEqualTo(5);
        assertThat(allowedOf(20, user, 10, MINUTE))
                .as("[C4] free room left in the minute window: it holds only this minute's 5 allowed requests,"
                        + " so 5 of its 10 slots are free. A store that records in the minute window when the day"
                        + " window rejects leaves fewer")
                .isEqualTo(5);
    }
}
