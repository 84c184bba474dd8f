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
import io.lettuce.core.api.StatefulRedisConnection;
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
    void asyncEvaluationsCompleteOnTheExecutorGivenAndNothingElseDoes() throws Exception {
        java.util.concurrent.ExecutorService completions =
                java.util.concurrent.Executors.newFixedThreadPool(2, task -> new Thread(task, "given-completions"));
        CloseableWindowStore store =
                LettuceWindowStore.builder(client).completeAsyncOn(completions).build();
        CloseableWindowStore plain = LettuceWindowStore.builder(client).build();
        try {
            String user = "handed-" + UUID.randomUUID();
            List<Window> windows = List.of(Window.of(1, Duration.ofMinutes(1)));
            StoreRequest request = new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME);
            // Redis holds each answer back a moment, so the stage below is chained before it completes
            assertThat(held(() -> store.evaluateAsync(request)
                            .thenApply(evaluation -> evaluation.isAllowed() + " on "
                                    + Thread.currentThread().getName())))
                    .isEqualTo("true on given-completions");
            assertThat(held(() -> store.evaluateAsync(request)
                            .thenApply(evaluation -> evaluation.isAllowed() + " on "
                                    + Thread.currentThread().getName())))
                    .as("a refusal too")
                    .isEqualTo("false on given-completions");
            dev.ratelimit.core.Settlement cancel =
                    new dev.ratelimit.core.Settlement(request.scopes(), request.entryId(), 0, 0, 0, 0, null);
            assertThat(held(() -> store.settleAsync(cancel)
                            .thenApply(done -> Thread.currentThread().getName())))
                    .as("a settlement completes where a blocking commit waiting for it cannot hold it up")
                    .contains("lettuce");
            assertThat(held(() -> plain.evaluateAsync(request)
                            .thenApply(evaluation -> Thread.currentThread().getName())))
                    .as("by default, Lettuce's I/O thread")
                    .contains("lettuce");
            StoreRequest blocking = new StoreRequest(user + "-blocking", windows, 0, StoreRequest.STORE_TIME);
            completions.shutdown();
            assertThat(store.evaluate(blocking).isAllowed())
                    .as("a blocking call answers without the executor")
                    .isTrue();
            assertThat(store.evaluate(blocking).isAllowed()).isFalse();
        } finally {
            store.close();
            plain.close();
            completions.shutdownNow();
        }
        assertThatThrownBy(() -> LettuceWindowStore.builder(client).completeAsyncOn(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("executor");
    }

    /** Runs {@code call} while Redis holds its answers back for 300 ms, and waits for its stage. */
    private static String held(java.util.function.Supplier<java.util.concurrent.CompletionStage<String>> call)
            throws Exception {
        redis.get().call("CLIENT", "PAUSE", "300", "ALL");
        return call.get().toCompletableFuture().get();
    }

    @Test
    void buildingAndClosingAStoreLeavesTheCallersClientAsItWas() {
        RedisClient fresh = RedisClient.create(redis.get().uri());
        try {
            ClientOptions before = fresh.getOptions();
            CloseableWindowStore store = LettuceWindowStore.create(fresh);
            assertThat(fresh.getOptions()).isSameAs(before);
            assertThat(fresh.getOptions().isAutoReconnect()).isTrue();
            assertThat(fresh.getOptions().getDisconnectedBehavior())
                    .isEqualTo(ClientOptions.DisconnectedBehavior.DEFAULT);
            store.close();
            assertThat(fresh.getOptions()).isSameAs(before);
            // closing the store closed its connection only: the client still opens connections
            try (StatefulRedisConnection<String, String> own = fresh.connect()) {
                assertThat(own.sync().ping()).isEqualTo("PONG");
            }
        } finally {
            fresh.shutdown();
        }
    }

    @Test
    void theCallersConnectionAndTheStoreBothRecoverAfterARestart() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            RedisClient shared = RedisClient.create(server.uri());
            try (StatefulRedisConnection<String, String> application = shared.connect();
                    CloseableWindowStore store = LettuceWindowStore.create(shared)) {
                application.sync().set("greeting", "hello");
                List<Window> windows = List.of(Window.of(3, Duration.ofMinutes(1)));
                String user = "restart-" + UUID.randomUUID();
                assertThat(store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME))
                                .isAllowed())
                        .isTrue();

                server.kill();
                server.startAgain(); // no persistence: the restarted server is empty

                // the application's own connection object comes back by Lettuce's auto-reconnect
                assertThat(eventually(() -> application.sync().set("greeting", "again")))
                        .isEqualTo("OK");
                assertThat(application.isOpen()).isTrue();
                // and the store decides exactly again: the limit of 3 counted from the empty server
                eventually(() -> store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME)));
                assertThat(store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME))
                                .isAllowed())
                        .isTrue();
                assertThat(store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME))
                                .isAllowed())
                        .isTrue();
                assertThat(store.evaluate(new StoreRequest(user, windows, 0, StoreRequest.STORE_TIME))
                                .isAllowed())
                        .isFalse();
                assertThat(shared.getOptions().isAutoReconnect()).isTrue();
            } finally {
                shared.shutdown();
            }
        }
    }

    /** Retries {@code action} until it succeeds: recovery after a restart is the point, not its speed. */
    private static <T> T eventually(java.util.concurrent.Callable<T> action) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                return action.call();
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
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
