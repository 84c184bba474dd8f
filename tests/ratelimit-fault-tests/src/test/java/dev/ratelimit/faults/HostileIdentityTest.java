package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hostile user ids and budget names, on a standalone server and on a cluster, with both drivers:
 * each gets a budget of its own (never shared with another id, another window, or a shared budget
 * of the same name), no check fails (no CROSSSLOT), and no key leaves the prefix.
 */
class HostileIdentityTest {

    private static RedisServer standalone;
    private static RedisCluster cluster;

    @BeforeAll
    static void start() {
        standalone = RedisServer.start();
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void stop() {
        standalone.close();
        cluster.close();
    }

    /** Ids crafted against the key codec: each starts with {@code base}, except those that must not. */
    static List<String> hostile(String base) {
        List<String> ids = new ArrayList<>(List.of(
                base,
                base + ":60",
                base + ":60t",
                base + ":60t#",
                base + ":86400@60",
                base + "}:60",
                base + "{a}b}",
                "{" + base + "}",
                base + "}",
                base + "{",
                "~" + base,
                "~~" + base,
                "~~" + base + "-upstream",
                "{~~" + base + "-upstream}",
                base + "\n",
                base + "\r\n*1\r\n$4\r\nPING",
                base + "\t",
                base + " ",
                base + "\uD800",
                base + "\uDC00x",
                base + "\uD83D\uDE00",
                base + "ユーザー",
                base + "\u0000",
                base + "x".repeat(64 * 1024)));
        return ids;
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("hostile ids and budget names on a standalone server: own budgets, keys inside the prefix")
    void standalone(Driver driver) {
        try (CloseableWindowStore store = driver.standalone(standalone)) {
            everyIdIsItsOwnBudget(store);
        }
        assertKeysInsidePrefix(standalone);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("hostile ids and budget names on a cluster: own budgets, no CROSSSLOT, keys inside the prefix")
    void cluster(Driver driver) {
        try (CloseableWindowStore store = driver.cluster(cluster)) {
            everyIdIsItsOwnBudget(store);
        }
        for (RedisServer node : cluster.nodes()) {
            assertKeysInsidePrefix(node);
        }
    }

    private static void everyIdIsItsOwnBudget(CloseableWindowStore store) {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .clock(MutableClock.at(Instant.parse("2026-05-01T00:00:00Z")))
                .failOpen(false) // a CROSSSLOT or any other store error fails the test
                .build();
        String base = "h" + UUID.randomUUID().toString().substring(0, 6);
        List<String> ids = hostile(base);
        Tier tier = Tier.of(
                "t",
                Window.of(1, Duration.ofMinutes(1)),
                Window.tokens(10, Duration.ofMinutes(1)),
                Window.tokens(10, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1)));
        for (String id : ids) {
            assertThat(limiter.reserve(id, tier, 10).decision().allowed())
                    .as("first reservation of %s", shortly(id))
                    .isTrue();
        }
        for (String id : ids) {
            assertThat(limiter.reserve(id, tier, 0).decision().allowed())
                    .as("second reservation of %s: its own budget is used up", shortly(id))
                    .isFalse();
        }
        // a shared budget named like any id is a budget of its own, used by a fresh user
        for (String id : ids) {
            SharedBudget budget = SharedBudget.of(id, Window.of(1, Duration.ofMinutes(1)));
            String user = "fresh-" + UUID.randomUUID();
            assertThat(limiter.reserve(user, tier, 1, List.of(budget))
                            .decision()
                            .allowed())
                    .as("budget %s", shortly(id))
                    .isTrue();
            assertThat(limiter.reserve(user + "-2", tier, 1, List.of(budget))
                            .decision()
                            .budget())
                    .as("budget %s rejects the next user", shortly(id))
                    .isEqualTo(id);
        }
    }

    private static void assertKeysInsidePrefix(RedisServer server) {
        Object keys = server.call("KEYS", "*");
        assertThat(keys).isInstanceOf(List.class);
        for (Object key : (List<?>) keys) {
            assertThat(String.valueOf(key)).startsWith("ratelimit:");
        }
    }

    private static String shortly(String id) {
        String shown = id.length() > 40 ? id.substring(0, 40) + "…(" + id.length() + " chars)" : id;
        return shown.replace("\n", "\\n").replace("\r", "\\r");
    }
}
