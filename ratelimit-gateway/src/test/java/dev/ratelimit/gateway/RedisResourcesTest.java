package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every Lettuce client of a gateway (the store's, the cooldowns', the managed keys' and the
 * batches') runs on one set of client resources: one group of event-loop threads and one of
 * computation threads, not one per client, and none left once the gateway has closed.
 */
class RedisResourcesTest {

    /** Lettuce's thread names: {@code lettuce-<kind>-<group>-<thread>}. */
    private static final Pattern LETTUCE = Pattern.compile("lettuce-(\\w+)-(\\d+)-\\d+#\\d+");

    private static Set<String> groups() {
        Set<String> groups = new HashSet<>();
        for (String thread : Harness.liveThreads()) {
            Matcher matcher = LETTUCE.matcher(thread);
            if (matcher.matches()) {
                groups.add(matcher.group(1) + "-" + matcher.group(2));
            }
        }
        return groups;
    }

    @ParameterizedTest
    @EnumSource(
            value = Harness.Store.class,
            names = {"REDIS", "CLUSTER"})
    void oneSetOfClientResources(Harness.Store store) throws Exception {
        Set<String> before = groups();
        Set<String> started = new HashSet<>();
        try (Harness harness = Harness.start(store, true)) {
            // the store, the cooldowns' and the managed keys' subscriptions, and the batches' link in use
            assertThat(harness.chat("demo-free", GatewayServerTest.HELLO).statusCode())
                    .isEqualTo(200);
            assertThat(harness.get("/v1/batches/batch_none", "demo-free").statusCode())
                    .isEqualTo(404);
            started.addAll(groups());
            started.removeAll(before);
        }
        Set<String> kinds = new HashSet<>();
        for (String group : started) {
            kinds.add(group.substring(0, group.lastIndexOf('-')));
        }
        assertThat(started)
                .as("one group of threads of each kind for every client of the gateway: %s", started)
                .hasSameSizeAs(kinds)
                .isNotEmpty();
        Harness.await("the gateway's Lettuce threads end with it", () -> {
            Set<String> left = groups();
            left.retainAll(started);
            return left.isEmpty();
        });
    }
}
