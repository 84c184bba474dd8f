package dev.ratelimit.faults;

import static dev.ratelimit.faults.SettlementFaultTest.race;
import static dev.ratelimit.faults.SettlementFaultTest.used;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A dollar budget tried in shadow, under a race and a paused Redis: it names exactly the calls its
 * enforcing twin refuses, and once the settlements Redis could not take at once have landed it holds
 * exactly what the twin holds, the real spend.
 */
class ShadowFaultTest {

    private static final Window.Unit USD = Window.Unit.USD_MICROS;
    private static final int CALLS = 60;
    private static final long ESTIMATE_MICROS = 1_000;
    private static final long CAP_MICROS = 30_000;

    private static final Window MINUTE = Window.of("minute", 1_000, Duration.ofMinutes(1), Window.Unit.REQUESTS);
    private static final Window CAP =
            Window.of("spend-month", CAP_MICROS, Duration.ofDays(30), USD).withPrecision(Duration.ofHours(1));

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("60 calls at once on a $0.03 cap in shadow and on its enforcing twin, settled while Redis is"
            + " paused 1.5 s: 30 named, 30 refused, and both caps hold the real spend")
    void shadowCapMatchesItsTwinThroughAPause(Driver driver) throws Exception {
        try (RedisServer redis = RedisServer.start();
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .failOpen(false)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();
            Tier enforced = Tier.of("enforced", MINUTE, CAP);
            Tier shadow = Tier.of("shadow", MINUTE, CAP.withMode(Window.Mode.SHADOW));
            String twin = "twin-" + UUID.randomUUID();
            String watched = "watched-" + UUID.randomUUID();
            Amounts estimate = Amounts.of(USD, ESTIMATE_MICROS);

            List<Reservation> hard = race(CALLS, i -> limiter.reserve(twin, enforced, estimate, List.of()));
            List<Reservation> soft = race(CALLS, i -> limiter.reserve(watched, shadow, estimate, List.of()));
            long refused = hard.stream().filter(r -> !r.decision().allowed()).count();
            long named = soft.stream()
                    .filter(r -> !r.decision().shadowRefusals().isEmpty())
                    .count();
            assertThat(refused)
                    .as("the enforced cap refuses all but 30")
                    .isEqualTo(CALLS - CAP_MICROS / ESTIMATE_MICROS);
            assertThat(soft)
                    .as("the shadow cap refuses none")
                    .allMatch(r -> r.decision().allowed());
            assertThat(named)
                    .as("the shadow cap names as many as its twin refused")
                    .isEqualTo(refused);
            assertThat(registry.get("ratelimit.shadow.refusals")
                            .tag("tier", "shadow")
                            .tag("window", "spend-month")
                            .tag("level", "user")
                            .counter()
                            .count())
                    .isEqualTo(refused);

            List<Reservation> admittedHard = new ArrayList<>(hard);
            admittedHard.removeIf(r -> !r.decision().allowed());
            try (RespClient raw = redis.connect()) {
                raw.call("CLIENT", "PAUSE", "1500", "ALL");
            }
            // the twin's admitted calls and every shadow call settle to 100 + i µ$, while Redis is paused
            race(admittedHard.size(), i -> {
                admittedHard
                        .get(i)
                        .commit(Amounts.of(USD, 100 + i))
                        .toCompletableFuture()
                        .join();
                return i;
            });
            List<Reservation> countedSoft = new ArrayList<>(soft);
            countedSoft.removeIf(r -> !r.decision().shadowRefusals().isEmpty());
            race(soft.size(), i -> {
                // a call the shadow cap named spent nothing in it; the others spend as their twins do
                int counted = countedSoft.indexOf(soft.get(i));
                soft.get(i)
                        .commit(Amounts.of(USD, counted < 0 ? 0 : 100 + counted))
                        .toCompletableFuture()
                        .join();
                return i;
            });
            assertThat(limiter.awaitSettlements(Duration.ofSeconds(20)))
                    .as("every settlement applied once Redis answers again")
                    .isTrue();
            assertThat(registry.find("ratelimit.settle.failures").counters())
                    .as("no settlement given up")
                    .isEmpty();
            long real = 0;
            for (int i = 0; i < admittedHard.size(); i++) {
                real += 100 + i;
            }
            assertThat(used(limiter.usage(twin, enforced), "spend-month"))
                    .as("the enforced cap holds the real spend")
                    .isEqualTo(real);
            assertThat(used(limiter.usage(watched, shadow), "spend-month"))
                    .as("the shadow cap holds what its twin holds")
                    .isEqualTo(real);
        }
    }
}
