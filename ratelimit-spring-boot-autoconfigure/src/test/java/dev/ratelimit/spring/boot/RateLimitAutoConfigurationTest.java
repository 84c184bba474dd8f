package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import redis.clients.jedis.UnifiedJedis;

/** Every condition of the core auto-configuration: which store, what backs off, tiers, kill switch, metrics. */
class RateLimitAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

    private ApplicationContextRunner withRedis() {
        return runner.withPropertyValues(
                "spring.data.redis.host=" + REDIS.get().host(),
                "spring.data.redis.port=" + REDIS.get().port());
    }

    /**
     * A fresh user's first request on a limit of one: allowed, from the store (not degraded). The
     * store connects in the background, and a loaded machine can make the first handshake or script
     * load slower than the command timeout (the limiter then fails open for a moment): the store must
     * decide within ten seconds.
     */
    private static void allowsOnce(org.springframework.context.ApplicationContext context) throws InterruptedException {
        RateLimiter limiter = context.getBean(RateLimiter.class);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        Decision decision = limiter.check(java.util.UUID.randomUUID().toString(), 1, Duration.ofMinutes(1));
        while (decision.degraded() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            decision = limiter.check(java.util.UUID.randomUUID().toString(), 1, Duration.ofMinutes(1));
        }
        assertThat(decision.allowed()).as("%s", decision).isTrue();
        assertThat(decision.degraded()).as("%s", decision).isFalse();
    }

    private static String storeType(org.springframework.context.ApplicationContext context) {
        return context.getBean(RateLimitStoreInfo.class).type();
    }

    @Test
    void closingTheApplicationWaitsForQueuedSettlementsBeforeTheStoreCloses() {
        AtomicBoolean storeDown = new AtomicBoolean();
        List<Settlement> applied = new CopyOnWriteArrayList<>();
        InMemoryWindowStore memory = InMemoryWindowStore.create();
        WindowStore flaky = new WindowStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                return memory.evaluate(request);
            }

            @Override
            public Evaluation peek(StoreRequest request) {
                return memory.peek(request);
            }

            @Override
            public void settle(Settlement settlement) {
                if (storeDown.get()) {
                    throw new RateLimiterUnavailableException("store down (test)");
                }
                memory.settle(settlement);
                applied.add(settlement);
            }
        };
        runner.withBean(WindowStore.class, () -> flaky).run(context -> {
            Reservation reservation = context.getBean(RateLimiter.class).reserve("drain", TIER_OF_TOKENS, 500);
            assertThat(reservation.decision().allowed()).isTrue();
            storeDown.set(true);
            reservation.commit(100).toCompletableFuture().join();
            assertThat(applied).as("queued, not applied, while the store fails").isEmpty();
            // the store comes back while the application is stopping
            new Thread(() -> {
                        sleep(300);
                        storeDown.set(false);
                    })
                    .start();
        });
        assertThat(applied).as("applied before the context finished closing").hasSize(1);
        assertThat(applied.get(0).actualTokens()).isEqualTo(100);
    }

    @Test
    void aWindowMarkedFailLocalAdmitsThisInstancesShareWhileTheStoreIsDown() {
        WindowStore down = new WindowStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                throw new RateLimiterUnavailableException("store down (test)");
            }

            @Override
            public Evaluation peek(StoreRequest request) {
                throw new RateLimiterUnavailableException("store down (test)");
            }

            @Override
            public void settle(Settlement settlement) {
                throw new RateLimiterUnavailableException("store down (test)");
            }
        };
        runner.withBean(WindowStore.class, () -> down)
                .withPropertyValues(
                        "ratelimit.tiers.team.minute=6/1m fail-local",
                        "ratelimit.tiers.team.tokens-minute=10000 tokens/1m",
                        "ratelimit.expected-instances=3")
                .run(context -> {
                    Tier team = context.getBean(TierPolicy.class).resolve("team");
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    List<Boolean> allowed = new java.util.ArrayList<>();
                    for (int i = 0; i < 4; i++) {
                        Decision decision = limiter.reserve("u", team, 10).decision();
                        allowed.add(decision.allowed());
                        if (decision.allowed()) {
                            assertThat(decision.unchecked())
                                    .extracting(Window::name)
                                    .containsExactly("tokens-minute");
                        }
                    }
                    assertThat(allowed).as("6 / 3 instances").containsExactly(true, true, false, false);
                });
        runner.withPropertyValues("ratelimit.expected-instances=0")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasStackTraceContaining("ratelimit.expected-instances must be at least 1"));
    }

    private static final Tier TIER_OF_TOKENS = Tier.of("tokens", Window.tokens(10_000, Duration.ofMinutes(1)));

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void withoutRedisSettingsTheStoreIsInMemory() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(RateLimiter.class).hasSingleBean(TierPolicy.class);
            assertThat(context.getBean(WindowStore.class)).isInstanceOf(InMemoryWindowStore.class);
            assertThat(storeType(context)).isEqualTo("in-memory");
        });
    }

    @Test
    void withRedisSettingsAndLettuceTheStoreReusesSpringBootsLettuceClient() {
        withRedis()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
                .run(context -> {
                    assertThat(storeType(context)).isEqualTo("lettuce");
                    assertThat(context).hasSingleBean(LettuceConnectionFactory.class);
                    assertThat(context).doesNotHaveBean("rateLimitLettuceClient");
                    allowsOnce(context);
                });
    }

    @Test
    void withRedisSettingsAndNoBootConnectionFactoryTheLettuceStoreBuildsItsOwnClient() {
        withRedis().run(context -> {
            assertThat(storeType(context)).isEqualTo("lettuce");
            assertThat(context).hasBean("rateLimitLettuceClient");
            allowsOnce(context);
        });
    }

    @Test
    void withLettuceMissingTheStoreIsJedis() {
        withRedis().withClassLoader(new FilteredClassLoader("io.lettuce")).run(context -> {
            assertThat(storeType(context)).isEqualTo("jedis");
            assertThat(context).hasSingleBean(UnifiedJedis.class);
            allowsOnce(context);
        });
    }

    @Test
    void withNeitherDriverTheStoreIsInMemoryEvenWithRedisSettings() {
        withRedis()
                .withClassLoader(new FilteredClassLoader("io.lettuce", "redis.clients"))
                .run(context -> assertThat(storeType(context)).isEqualTo("in-memory"));
    }

    @Test
    void withoutSpringBootDataRedisTheStoreIsInMemory() {
        withRedis()
                .withClassLoader(new FilteredClassLoader(DataRedisProperties.class))
                .run(context -> assertThat(storeType(context)).isEqualTo("in-memory"));
    }

    @Test
    void ratelimitStoreChoosesOverTheDefault() {
        withRedis()
                .withPropertyValues("ratelimit.store=in-memory")
                .run(context -> assertThat(storeType(context)).isEqualTo("in-memory"));
        withRedis()
                .withPropertyValues("ratelimit.store=jedis")
                .run(context -> assertThat(storeType(context)).isEqualTo("jedis"));
    }

    @Test
    void aChosenStoreWhoseModuleIsMissingFailsNamingWhatToAdd() {
        withRedis()
                .withPropertyValues("ratelimit.store=lettuce")
                .withClassLoader(new FilteredClassLoader("io.lettuce"))
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("No rate-limit store: ratelimit.store=LETTUCE")
                        .hasMessageContaining("io.lettuce:lettuce-core"));
        runner.withClassLoader(new FilteredClassLoader(InMemoryWindowStore.class))
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("dev.ratelimit:ratelimit-inmemory"));
    }

    @Test
    void anUnknownStoreIsRefusedByName() {
        runner.withPropertyValues("ratelimit.store=memcached")
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining(
                                "ratelimit.store must be in-memory, lettuce or jedis, was 'memcached'"));
    }

    @Test
    void theApplicationsStoreLimiterAndPolicyWin() {
        runner.withUserConfiguration(OwnStore.class).run(context -> {
            assertThat(context.getBean(WindowStore.class)).isSameAs(OwnStore.STORE);
            assertThat(context).doesNotHaveBean(RateLimitStoreInfo.class);
            assertThat(context).hasSingleBean(RateLimiter.class);
        });
        runner.withUserConfiguration(OwnLimiterAndPolicy.class).run(context -> {
            assertThat(context.getBean(RateLimiter.class)).isSameAs(OwnLimiterAndPolicy.LIMITER);
            assertThat(context.getBean(TierPolicy.class)).isSameAs(TierPolicy.defaults());
        });
    }

    @Test
    void tiersComeFromPropertiesInTheTierFileSyntax() {
        runner.withPropertyValues(
                        "ratelimit.tiers.free.minute=5/1m",
                        "ratelimit.tiers.free.day=100/1d",
                        "ratelimit.tiers.pro.minute=60/60s",
                        "ratelimit.tiers.pro.tokens-day=100000 tokens/1d@1m",
                        "ratelimit.default-tier=pro")
                .run(context -> {
                    TierPolicy policy = context.getBean(TierPolicy.class);
                    assertThat(policy.tiers()).containsOnlyKeys("free", "pro");
                    assertThat(policy.defaultTier().name()).isEqualTo("pro");
                    Tier pro = policy.tiers().get("pro");
                    assertThat(pro.windows())
                            .containsExactly(
                                    new Window("minute", 60, Duration.ofMinutes(1)),
                                    new Window(
                                            "tokens-day",
                                            100_000,
                                            Duration.ofDays(1),
                                            Window.Unit.TOKENS,
                                            Duration.ofMinutes(1)));
                });
        runner.run(context -> assertThat(context.getBean(TierPolicy.class)).isSameAs(TierPolicy.defaults()));
        runner.withPropertyValues("ratelimit.default-tier=pro")
                .run(context -> assertThat(
                                context.getBean(TierPolicy.class).defaultTier().name())
                        .isEqualTo("pro"));
    }

    @Test
    void calendarWindowsComeFromPropertiesAndCountTheRedisServersMonth() {
        withRedis()
                .withPropertyValues(
                        "ratelimit.tiers.finance.minute=100/1m",
                        "ratelimit.tiers.finance.spend-month=$500/month",
                        "ratelimit.tiers.finance.tokens-day=1000000 tokens/day@calendar(Europe/Paris)")
                .run(context -> {
                    Tier finance = context.getBean(TierPolicy.class).tiers().get("finance");
                    Window month =
                            Window.calendar("spend-month", 500_000_000, Window.Unit.USD_MICROS, CalendarPeriod.MONTH);
                    assertThat(finance.windows())
                            .containsExactlyInAnyOrder(
                                    new Window("minute", 100, Duration.ofMinutes(1)),
                                    month,
                                    Window.calendar(
                                            "tokens-day",
                                            1_000_000,
                                            Window.Unit.TOKENS,
                                            CalendarPeriod.DAY,
                                            ZoneId.of("Europe/Paris")));
                    allowsOnce(context);
                    // the auto-configured limiter has no clock: Redis's TIME picks the month
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    String user = java.util.UUID.randomUUID().toString();
                    long before = System.currentTimeMillis();
                    assertThat(limiter.reserve(
                                            user, finance, Amounts.of(Window.Unit.USD_MICROS, 500_000_000), List.of())
                                    .decision()
                                    .allowed())
                            .isTrue();
                    Decision spent = limiter.reserve(user, finance, Amounts.of(Window.Unit.USD_MICROS, 1), List.of())
                            .decision();
                    long after = System.currentTimeMillis();
                    long end = CalendarPeriod.MONTH.endMillis(before, ZoneOffset.UTC);
                    assumeTrue(
                            end == CalendarPeriod.MONTH.endMillis(after, ZoneOffset.UTC), "ran across a month's end");
                    assertThat(spent.allowed()).isFalse();
                    assertThat(spent.window()).isEqualTo(month);
                    assertThat(spent.retryAfter().toMillis())
                            .as("the next 1st, midnight UTC (the test's redis-server shares this machine's clock)")
                            .isBetween(end - after, end - before);
                });
    }

    @Test
    void aBadTierEntryFailsStartupNamingIt() {
        runner.withPropertyValues("ratelimit.tiers.free.minute=five per minute")
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining("Invalid ratelimit.tiers")
                        .hasStackTraceContaining("'tier.free.minute' = 'five per minute'"));
        runner.withPropertyValues("ratelimit.tiers.free.minute=5/1m", "ratelimit.default-tier=gold")
                .run(context ->
                        assertThat(context).getFailure().hasStackTraceContaining("'default-tier' names 'gold'"));
    }

    @Test
    void theKillSwitchAllowsEverythingAndCountsNothing() {
        runner.withPropertyValues("ratelimit.enabled=false", "ratelimit.tiers.free.minute=1/1m")
                .run(context -> {
                    RateLimiter limiter = context.getBean(RateLimiter.class);
                    Tier free = context.getBean(TierPolicy.class).defaultTier();
                    for (int i = 0; i < 5; i++) {
                        assertThat(limiter.check("u", free).allowed()).isTrue();
                    }
                    assertThat(limiter.usage("u", free)).isEmpty();
                });
        runner.withPropertyValues("ratelimit.tiers.free.minute=1/1m").run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            Tier free = context.getBean(TierPolicy.class).defaultTier();
            assertThat(limiter.check("u", free).allowed()).isTrue();
            assertThat(limiter.check("u", free).allowed()).isFalse();
        });
    }

    @Test
    void metricsGoToTheApplicationsMeterRegistry() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            Decision decision = context.getBean(RateLimiter.class)
                    .check("u", context.getBean(TierPolicy.class).defaultTier());
            assertThat(decision.allowed()).isTrue();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("ratelimit.decisions")
                            .tags("limiter", "default", "outcome", "allowed")
                            .counter())
                    .isNotNull();
        });
    }

    @Test
    void rejectionCacheOnByDefaultAndSwitchable() {
        runner.withUserConfiguration(Registry.class)
                .run(context -> assertThat(context.getBean(MeterRegistry.class)
                                .find("ratelimit.rejection.cache.size")
                                .gauge())
                        .isNotNull());
        runner.withUserConfiguration(Registry.class)
                .withPropertyValues("ratelimit.rejection-cache=false")
                .run(context -> assertThat(context.getBean(MeterRegistry.class)
                                .find("ratelimit.rejection.cache.size")
                                .gauge())
                        .isNull());
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnStore {
        static final WindowStore STORE = InMemoryWindowStore.create();

        @Bean
        WindowStore myStore() {
            return STORE;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLimiterAndPolicy {
        static final RateLimiter LIMITER =
                SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();

        @Bean
        RateLimiter myLimiter() {
            return LIMITER;
        }

        @Bean
        TierPolicy myPolicy() {
            return TierPolicy.defaults();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}
