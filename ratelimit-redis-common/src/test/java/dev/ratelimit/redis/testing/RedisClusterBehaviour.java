package dev.ratelimit.redis.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only a real three-master Redis Cluster can show about a store, written once and run by each
 * adapter.
 */
public abstract class RedisClusterBehaviour {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** The cluster of the whole class. */
    @RegisterExtension
    protected static final RedisServerExtension<RedisCluster> cluster = RedisServerExtension.cluster();

    private final List<AutoCloseable> resources = new ArrayList<>();

    /**
     * Creates a store against the cluster; register clients with {@link #closeAfterTest}.
     *
     * @param cluster the running cluster
     * @return the store
     */
    protected abstract WindowStore createStore(RedisCluster cluster);

    /**
     * Closes a resource after the running test.
     *
     * @param resource a client
     * @param <T> the resource type
     * @return the resource
     */
    protected final <T extends AutoCloseable> T closeAfterTest(T resource) {
        resources.add(resource);
        return resource;
    }

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        resources.clear();
    }

    private RateLimiter limiter() {
        WindowStore store = createStore(cluster.get());
        if (store instanceof AutoCloseable closeable) {
            closeAfterTest(closeable);
        }
        return SlidingWindowRateLimiter.builder(store)
                .clock(MutableClock.at(START))
                .failOpen(false)
                .build();
    }

    private static String user(String name) {
        return "cb-" + UUID.randomUUID().toString().substring(0, 8) + "-" + name;
    }

    @Test
    @DisplayName("Y1 all windows of one user live in one slot, on the node that owns it")
    void oneUserOneSlot() {
        RateLimiter limiter = limiter();
        String user = user("slot");
        List<Window> windows = List.of(
                new Window("second", 5, Duration.ofSeconds(1)),
                new Window("minute", 5, Duration.ofMinutes(1)),
                new Window("day", 5, Duration.ofDays(1)));
        assertThat(limiter.check(user, windows).allowed()).isTrue();
        Set<Integer> slots = new HashSet<>();
        for (Window window : windows) {
            String key = TestKeys.requests(KeyLayout.CLUSTER, user, window.lengthSeconds());
            slots.add(cluster.get().slotOf(key));
            RedisServer owner = cluster.get().nodeOf(key);
            assertThat(owner.call("ZCARD", key)).as(key).isEqualTo(1L);
        }
        assertThat(slots).hasSize(1);
        assertThat(slots.iterator().next()).isEqualTo(cluster.get().slotOf(user)); // the tag is the whole id
    }

    @Test
    @DisplayName("Y2 many users spread over all three masters")
    void usersSpread() {
        RateLimiter limiter = limiter();
        String base = user("spread");
        int users = 120;
        for (int i = 0; i < users; i++) {
            assertThat(limiter.check(base + "-" + i, 1, Duration.ofMinutes(1)).allowed())
                    .isTrue();
        }
        int[] perNode = new int[RedisCluster.MASTERS];
        for (int i = 0; i < users; i++) {
            RedisServer owner = cluster.get().nodeOf(TestKeys.requests(KeyLayout.CLUSTER, base + "-" + i, 60));
            perNode[cluster.get().nodes().indexOf(owner)]++;
            assertThat(owner.call("EXISTS", TestKeys.requests(KeyLayout.CLUSTER, base + "-" + i, 60)))
                    .isEqualTo(1L);
        }
        for (int count : perNode) {
            assertThat(count).isPositive();
        }
    }

    @Test
    @DisplayName("Y3 odd user ids keep distinct budgets and a well-formed hash tag")
    void weirdIds() {
        RateLimiter limiter = limiter();
        List<String> ids = RedisStandaloneBehaviour.weirdIds(user("w"));
        for (String id : ids) {
            assertThat(limiter.check(
                                    id, List.of(Window.of(1, Duration.ofMinutes(1)), Window.of(5, Duration.ofHours(1))))
                            .allowed())
                    .as(id)
                    .isTrue();
        }
        for (String id : ids) {
            assertThat(limiter.check(id, 1, Duration.ofMinutes(1)).allowed())
                    .as(id)
                    .isFalse();
            String minute = TestKeys.requests(KeyLayout.CLUSTER, id, 60);
            String hour = TestKeys.requests(KeyLayout.CLUSTER, id, 3600);
            assertThat(cluster.get().slotOf(minute)).isEqualTo(cluster.get().slotOf(hour));
            assertThat(cluster.get().nodeOf(minute).call("ZCARD", minute)).isEqualTo(1L);
        }
    }

    @Test
    @DisplayName("Y4 SCRIPT FLUSH on every node is invisible to callers")
    void scriptFlush() {
        RateLimiter limiter = limiter();
        String base = user("flush");
        int allowed = 0;
        for (int round = 0; round < 5; round++) {
            for (RedisServer node : cluster.get().nodes()) {
                node.call("SCRIPT", "FLUSH");
            }
            for (int i = 0; i < 20; i++) {
                if (limiter.check(base + "-" + (i % 10), 7, Duration.ofMinutes(1))
                        .allowed()) {
                    allowed++;
                }
            }
        }
        assertThat(allowed).isEqualTo(10 * 7);
    }
}
