package dev.ratelimit.redis.lettuce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LettuceWindowStoreTest {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private static RedisClient client;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(redis.get().uri());
    }

    @AfterAll
    static void disconnect() {
        client.shutdown();
    }

    private static long storeConnections() {
        String list = (String) redis.get().call("CLIENT", "LIST");
        // every line but the one of the raw connection asking
        return Arrays.stream(list.split("\n")).filter(line -> !line.isBlank()).count() - 1;
    }

    @Test
    void asyncChecksShareOneConnection() throws Exception {
        long before = storeConnections();
        WindowStore store = LettuceWindowStore.create(client);
        try {
            String user = "shared-" + UUID.randomUUID();
            List<Window> windows = List.of(Window.of(100, Duration.ofMinutes(1)));
            List<CompletableFuture<Evaluation>> inFlight = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                StoreRequest request = new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME);
                inFlight.add(store.evaluateAsync(request).toCompletableFuture());
            }
            long allowed = 0;
            for (CompletableFuture<Evaluation> evaluation : inFlight) {
                if (evaluation.get().isAllowed()) {
                    allowed++;
                }
            }
            assertThat(allowed).isEqualTo(100);
            assertThat(store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME))
                            .isAllowed())
                    .isFalse();
            assertThat(storeConnections() - before).isEqualTo(1);
        } finally {
            ((AutoCloseable) store).close();
        }
    }

    @Test
    void buildingAStoreSetsFailFastOptions() {
        RedisClient fresh = RedisClient.create(redis.get().uri());
        try {
            LettuceWindowStore.create(fresh);
            ClientOptions options = fresh.getOptions();
            assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            assertThat(options.isAutoReconnect())
                    .as("the store replaces a closed connection itself, without Lettuce's back-off")
                    .isFalse();
            assertThat(options.getTimeoutOptions().isTimeoutCommands()).isTrue();
        } finally {
            fresh.shutdown();
        }
    }

    @Test
    void argumentsAreValidated() {
        assertThatThrownBy(() -> LettuceWindowStore.create((RedisClient) null)).hasMessageContaining("client");
        assertThatThrownBy(() -> LettuceWindowStore.builder(client).commandTimeout(Duration.ZERO))
                .hasMessageContaining("commandTimeout");
    }

    @Test
    void aClosedStoreFailsAsUnavailable() throws Exception {
        WindowStore store = LettuceWindowStore.create(client);
        ((AutoCloseable) store).close();
        assertThatThrownBy(() -> store.evaluate(new StoreRequest(
                        "closed", List.of(Window.of(1, Duration.ofMinutes(1))), 1, StoreRequest.STORE_TIME)))
                .isInstanceOf(dev.ratelimit.api.RateLimiterUnavailableException.class);
    }

    @Test
    void keyPrefixesKeepBudgetsApart() {
        try (CloseableWindowStore tenantA =
                        LettuceWindowStore.builder(client).keyPrefix("svc-a").build();
                CloseableWindowStore tenantB =
                        LettuceWindowStore.builder(client).keyPrefix("svc-b").build()) {
            String user = "prefix-" + UUID.randomUUID();
            StoreRequest request =
                    new StoreRequest(user, List.of(Window.of(1, Duration.ofMinutes(1))), 1, StoreRequest.STORE_TIME);
            assertThat(tenantA.evaluate(request).isAllowed()).isTrue();
            assertThat(tenantA.evaluate(request).isAllowed()).isFalse();
            assertThat(tenantB.evaluate(request).isAllowed())
                    .as("another prefix, another budget")
                    .isTrue();
            assertThat(redis.get().call("EXISTS", "svc-a:" + user + ":60")).isEqualTo(1L);
            assertThat(redis.get().call("EXISTS", "svc-b:" + user + ":60")).isEqualTo(1L);
            assertThat(redis.get().call("EXISTS", "ratelimit:" + user + ":60")).isEqualTo(0L);
        }
        assertThatThrownBy(() -> LettuceWindowStore.builder(client).keyPrefix("a{b}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix");
    }

    @Test
    void checksWaitingForTheConnectionAreSentInArrivalOrder() throws Exception {
        // With an injected clock, a later check sent first would count as "in the window" of the earlier
        // ones: 100 checks spread over a day against 5/minute + 100/day must all pass only in order.
        RedisClient fresh = RedisClient.create(redis.get().uri());
        try (CloseableWindowStore store = LettuceWindowStore.create(fresh)) {
            String user = "order-" + UUID.randomUUID();
            List<Window> windows =
                    List.of(new Window("minute", 5, Duration.ofMinutes(1)), new Window("day", 100, Duration.ofDays(1)));
            long start = 1_767_225_600_000L;
            List<CompletableFuture<Evaluation>> checks = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                StoreRequest request = new StoreRequest(user, windows, 1, start + i * 600_000L);
                checks.add(store.evaluateAsync(request).toCompletableFuture());
            }
            long allowed = 0;
            for (CompletableFuture<Evaluation> check : checks) {
                if (check.get().isAllowed()) {
                    allowed++;
                }
            }
            assertThat(allowed).isEqualTo(100);
        } finally {
            fresh.shutdown();
        }
    }
}
