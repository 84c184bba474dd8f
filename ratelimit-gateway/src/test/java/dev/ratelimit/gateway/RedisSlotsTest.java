package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisURI;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The concurrency slots on a real redis-server: shared by gateway processes, exact under a burst,
 * renewed while held, gone on their own when their holder dies, and failing open with Redis.
 */
class RedisSlotsTest {

    private final RedisServer redis = RedisServer.start();
    private final List<RedisSlots> opened = new ArrayList<>();

    @AfterEach
    void stop() {
        opened.forEach(RedisSlots::close);
        redis.close();
    }

    private RedisSlots slots(Duration lease) {
        RedisSlots slots = new RedisSlots(RedisURI.create(redis.uri()), lease, true, new SimpleMeterRegistry());
        opened.add(slots);
        return slots;
    }

    @Test
    @DisplayName("two gateway processes share one cap; a release frees the slot for the other")
    void shared() {
        RedisSlots first = slots(Duration.ofSeconds(60));
        RedisSlots second = slots(Duration.ofSeconds(60));

        Slots.Slot a = first.tryAcquire("t", 2);
        Slots.Slot b = second.tryAcquire("t", 2);

        assertThat(a).isNotNull();
        assertThat(b).isNotNull();
        assertThat(first.tryAcquire("t", 2)).isNull();
        assertThat(second.inFlight("t")).isEqualTo(2);
        b.release();
        b.release(); // a second release does nothing
        assertThat(first.inFlight("t")).isEqualTo(1);
        assertThat(first.tryAcquire("t", 2)).isNotNull();
        assertThat((Long) redis.call("PTTL", RedisSlots.key("t"))).isBetween(1L, 61_000L);
    }

    @Test
    @DisplayName("under a burst of 16 acquisitions released at once, exactly the cap of 5 succeed")
    void burst() throws Exception {
        RedisSlots slots = slots(Duration.ofSeconds(60));
        assertThat(slots.inFlight("burst"))
                .as("connected and the script loaded before the burst")
                .isZero();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Boolean>> taken = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                taken.add(pool.submit(() -> {
                    go.await();
                    return slots.tryAcquire("burst", 5) != null;
                }));
            }
            go.countDown();
            int count = 0;
            for (Future<Boolean> future : taken) {
                count += future.get(20, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(count).isEqualTo(5);
            assertThat(slots.inFlight("burst")).isEqualTo(5);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a held slot is renewed past its lease; a dead holder's slot expires after it (real time)")
    void leases() throws Exception {
        RedisSlots living = slots(Duration.ofMillis(900));
        RedisSlots dying = slots(Duration.ofMillis(900));
        assertThat(living.tryAcquire("lease", 5)).isNotNull();
        assertThat(dying.tryAcquire("lease", 5)).isNotNull();
        dying.close(); // the process "dies": no release, no more renewals

        Thread.sleep(2_000); // more than two leases

        assertThat(living.inFlight("lease"))
                .as("the renewed slot lives, the dead one is gone")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("with Redis down, slots fail open and are counted; they work again when it is back")
    void failOpen() {
        RedisSlots slots = slots(Duration.ofSeconds(60));
        assertThat(slots.tryAcquire("down", 1)).isNotNull();
        redis.stop();

        assertThat(slots.tryAcquire("down", 1)).as("admitted without a slot").isNotNull();
        assertThat(slots.inFlight("down")).isEqualTo(-1);

        redis.restart();
        Slots.Slot again = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline && slots.inFlight("down") != 0) {
            Thread.onSpinWait(); // the slots replace their closed connection themselves
        }
        again = slots.tryAcquire("down", 1);
        assertThat(again).isNotNull();
        assertThat(slots.tryAcquire("down", 1)).isNull();
    }

    @Test
    @DisplayName("the gateway on Redis fails open when Redis stops: requests pass, degraded and loud")
    void gatewayFailsOpen() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.REDIS, false)) {
            String hello = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            assertThat(harness.chat("demo-free", hello).statusCode()).isEqualTo(200);
            Harness.redis().stop();
            try {
                for (int i = 0; i < 8; i++) {
                    HttpResponse<String> degraded = harness.chat("demo-free", hello);
                    assertThat(degraded.statusCode()).isEqualTo(200);
                    assertThat(degraded.headers().firstValue("X-RateLimit-Degraded"))
                            .contains("true");
                }
                assertThat(harness.admin("/metrics").body())
                        .contains("ratelimit_fail_open{limiter=\"gateway\"} 1.0")
                        .contains("gateway_slot_failures_total");
            } finally {
                Harness.redis().restart();
            }
        }
    }
}
