package dev.ratelimit.redis.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a cluster store shares with the application's client and what it owns. */
class LettuceClusterClientsTest {

    @RegisterExtension
    static final RedisServerExtension<RedisCluster> cluster = RedisServerExtension.cluster();

    private static List<RedisURI> seeds() {
        return cluster.get().uris().stream().map(RedisURI::create).toList();
    }

    private static boolean decides(CloseableWindowStore store) {
        List<Window> windows = List.of(Window.of(5, Duration.ofMinutes(1)));
        return store.evaluate(new StoreRequest("u-" + UUID.randomUUID(), windows, 0, StoreRequest.STORE_TIME))
                .isAllowed();
    }

    @Test
    void aStoreOnTheCallersClusterClientLeavesItAsItWas() {
        RedisClusterClient application = RedisClusterClient.create(seeds());
        try {
            ClusterClientOptions before = (ClusterClientOptions) application.getOptions();
            CloseableWindowStore store = LettuceWindowStore.builder(application)
                    .connectTimeout(Duration.ofSeconds(10))
                    .build();
            assertThat(decides(store)).isTrue();
            assertThat(application.getOptions()).isSameAs(before);
            store.close();
            assertThat(application.getOptions()).isSameAs(before);
            assertStillConnects(application);
        } finally {
            application.shutdown();
        }
    }

    @Test
    void aStoreWithItsOwnClientSharesOnlyTheResourcesAndShutsDownOnlyItsClient() {
        RedisClusterClient application = RedisClusterClient.create(seeds());
        try {
            ClusterClientOptions before = (ClusterClientOptions) application.getOptions();
            ClientResources resources = application.getResources();
            CloseableWindowStore store = LettuceWindowStore.clusterBuilder(resources, seeds())
                    .connectTimeout(Duration.ofSeconds(10))
                    .build();
            assertThat(decides(store)).isTrue();
            store.close();
            assertThat(application.getOptions()).isSameAs(before);
            // the application's client runs on the same resources: it still connects after the store is gone
            assertStillConnects(application);
        } finally {
            application.shutdown();
        }
    }

    /** The application's own client still opens working connections. */
    private static void assertStillConnects(RedisClusterClient application) {
        try (StatefulRedisClusterConnection<String, String> own = application.connect()) {
            assertThat(own.sync().set("still", "mine")).isEqualTo("OK");
        }
    }

    @Test
    void clusterBuilderArgumentsAreValidated() {
        RedisClusterClient application = RedisClusterClient.create(seeds());
        ClientResources resources = application.getResources();
        try {
            assertThatThrownBy(() -> LettuceWindowStore.clusterBuilder(null, seeds()))
                    .hasMessageContaining("resources");
            assertThatThrownBy(() -> LettuceWindowStore.clusterBuilder(resources, null))
                    .hasMessageContaining("seeds");
            assertThatThrownBy(() -> LettuceWindowStore.clusterBuilder(resources, List.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("seeds");
        } finally {
            application.shutdown();
        }
    }
}
