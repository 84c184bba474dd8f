package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The queue of settlements the store did not take: retried with backoff, at once when the store is back. */
class SettleQueueTest {

    private static final StoreRequest.Scope SCOPE =
            new StoreRequest.Scope("u", List.of(Window.tokens(1_000, Duration.ofMinutes(1))), false);

    /** A store whose settlements fail while it is down, reporting every attempt's time. */
    private static final class DownStore extends TestStore {
        final AtomicBoolean down = new AtomicBoolean(true);
        final BlockingQueue<Long> attempts = new LinkedBlockingQueue<>();

        @Override
        public Evaluation evaluate(StoreRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void settle(Settlement settlement) {
            attempts.add(System.nanoTime());
            if (down.get()) {
                throw new IllegalStateException("Connection refused");
            }
        }
    }

    @Test
    @DisplayName("a settlement waiting out a backoff is retried as soon as another store call answers")
    void retriedWhenTheStoreAnswersAgain() throws Exception {
        DownStore store = new DownStore();
        SettleQueue queue = new SettleQueue(store, "test", new Recorder(null, "test", true), 100, System::nanoTime);
        queue.add(new Settlement(List.of(SCOPE), "e1", 1_000, 100, 40, StoreRequest.STORE_TIME, null));

        // failed rounds wait 50, 100, 200, 400, 800 ms: after the sixth the next waits 1.6 s
        long lastFailure = 0;
        for (int i = 0; i < 6; i++) {
            Long attempt = store.attempts.poll(10, TimeUnit.SECONDS);
            assertThat(attempt).as("failed attempt %d", i + 1).isNotNull();
            lastFailure = attempt;
        }
        while (!queue.backingOff()) {
            Thread.onSpinWait(); // the sixth round is putting the settlement back and scheduling the next
        }
        store.down.set(false);
        queue.storeAnswered(); // as the guard does when any store call answers
        Long retried = store.attempts.poll(10, TimeUnit.SECONDS);

        assertThat(retried).isNotNull();
        assertThat(queue.awaitEmpty(Duration.ofSeconds(10))).isTrue();
        assertThat(store.attempts).as("applied once").isEmpty();
        assertThat(Duration.ofNanos(retried - lastFailure))
                .as("retried at the answer, not after the 1.6 s backoff")
                .isLessThan(Duration.ofMillis(1_600));
    }

    @Test
    @DisplayName("an answer while nothing waits changes nothing")
    void answerWithNothingWaiting() throws Exception {
        DownStore store = new DownStore();
        store.down.set(false);
        SettleQueue queue = new SettleQueue(store, "test", new Recorder(null, "test", true), 100, System::nanoTime);
        queue.storeAnswered();
        assertThat(queue.size()).isZero();
        queue.add(new Settlement(List.of(SCOPE), "e1", 1_000, 100, 40, StoreRequest.STORE_TIME, null));
        assertThat(queue.awaitEmpty(Duration.ofSeconds(10))).isTrue();
        queue.storeAnswered();
        assertThat(store.attempts).hasSize(1);
    }
}
