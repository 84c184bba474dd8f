package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.text.MessageFormat;
import java.time.Duration;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The throttled warning shared by the limiter and the gateway. */
class ThrottledWarningTest {

    /** Records the lines logged. */
    static final class Recording implements System.Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + MessageFormat.format(format, params));
        }
    }

    @Test
    @DisplayName("the first call logs at WARNING; calls within the interval do not")
    void oncePerInterval() {
        Recording logger = new Recording();
        ThrottledWarning warning = new ThrottledWarning(logger, Duration.ofDays(1));

        assertThat(warning.warn("store failed: {0}", "timeout")).isTrue();
        assertThat(warning.warn("store failed: {0}", "again")).isFalse();

        assertThat(logger.lines).containsExactly("WARNING store failed: timeout");
    }

    @Test
    @DisplayName("of 16 threads released at once, exactly one logs")
    void oneOfManyThreads() throws Exception {
        Recording logger = new Recording();
        ThrottledWarning warning = new ThrottledWarning(logger, Duration.ofDays(1));
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Boolean>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 16; i++) {
                calls.add(pool.submit(() -> {
                    start.await();
                    return warning.warn("failed");
                }));
            }
            start.countDown();
            int logged = 0;
            for (Future<Boolean> call : calls) {
                logged += call.get() ? 1 : 0;
            }
            assertThat(logged).isEqualTo(1);
            assertThat(logger.lines).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a zero interval logs every call; a negative one is refused, naming the argument")
    void intervals() {
        Recording logger = new Recording();
        ThrottledWarning everyTime = new ThrottledWarning(logger, Duration.ZERO);
        assertThat(everyTime.warn("a")).isTrue();
        assertThat(everyTime.warn("b")).isTrue();
        assertThat(logger.lines).containsExactly("WARNING a", "WARNING b");
        assertThatThrownBy(() -> new ThrottledWarning(logger, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("interval");
    }
}
