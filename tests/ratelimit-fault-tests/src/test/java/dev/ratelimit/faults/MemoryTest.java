package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Redis out of memory, and eviction policies that can drop counts, with both drivers. */
class MemoryTest {

    private static final Window MINUTE = Window.of(100, Duration.ofMinutes(1));

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("over maxmemory with noeviction: checks fail loudly (OOM, gauges) and write nothing, then recover")
    void outOfMemoryIsAFailureNotASilentAllow(Driver driver) {
        try (RedisServer redis = RedisServer.start(List.of("--maxmemory-policy", "noeviction"));
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter open = SlidingWindowRateLimiter.builder(store)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();
            assertThat(open.check("before", MINUTE.limit(), MINUTE.length()).degraded())
                    .isFalse();
            Faults.exhaustMemory(redis);
            long keysBefore = (Long) redis.call("DBSIZE");

            assertThatThrownBy(
                            () -> store.evaluate(new StoreRequest("oom", List.of(MINUTE), 0, StoreRequest.STORE_TIME)))
                    .isInstanceOf(RateLimiterUnavailableException.class)
                    .hasMessageContaining("OOM");
            Decision degraded = open.check("oom", MINUTE.limit(), MINUTE.length());
            assertThat(degraded.degraded())
                    .as("fail-open lets it through, marked")
                    .isTrue();
            assertThat(registry.get("ratelimit.fail.open").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("ratelimit.store.unavailable").gauge().value())
                    .isEqualTo(1.0);
            RateLimiter closed = SlidingWindowRateLimiter.builder(store)
                    .failOpen(false)
                    .name("closed")
                    .build();
            assertThatThrownBy(() -> closed.check("oom", MINUTE.limit(), MINUTE.length()))
                    .isInstanceOf(RateLimiterUnavailableException.class);
            assertThat((Long) redis.call("DBSIZE"))
                    .as("no rate-limit key written")
                    .isEqualTo(keysBefore);
            assertThat(redis.call("EXISTS", "ratelimit:oom:60")).isEqualTo(0L);

            Faults.restoreMemory(redis);
            Decision back = OutageTest.awaitExact(closed, "oom");
            assertThat(back.allowed()).isTrue();
            assertThat(redis.call("ZCARD", "ratelimit:oom:60")).isEqualTo(1L);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("an eviction policy that can drop rate-limit keys is reported when the store is built")
    void evictionPolicyWarns(Driver driver) {
        List<String> warnings = new ArrayList<>();
        Logger logger = Logger.getLogger("dev.ratelimit.redis");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    synchronized (warnings) {
                        warnings.add(new java.util.logging.SimpleFormatter().formatMessage(record));
                    }
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.addHandler(handler);
        try {
            try (RedisServer lru = RedisServer.start(List.of("--maxmemory-policy", "allkeys-lru"));
                    CloseableWindowStore store = driver.standalone(lru)) {
                assertThat(store).isNotNull();
            }
            synchronized (warnings) {
                assertThat(warnings)
                        .anySatisfy(w -> assertThat(w)
                                .contains("maxmemory-policy allkeys-lru")
                                .contains("under-counted"));
                warnings.clear();
            }
            try (RedisServer safe = RedisServer.start(List.of("--maxmemory-policy", "noeviction"));
                    CloseableWindowStore store = driver.standalone(safe)) {
                assertThat(store).isNotNull();
            }
            synchronized (warnings) {
                assertThat(warnings).noneMatch(w -> w.contains("maxmemory-policy"));
            }
        } finally {
            logger.removeHandler(handler);
        }
    }
}
