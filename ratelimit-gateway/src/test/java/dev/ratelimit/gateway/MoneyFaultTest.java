package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Money and tokens under Redis faults, end to end through the gateway on a private redis-server with
 * the default 500 ms store timeout: settlements made while Redis is paused, and streams in flight
 * while it is killed and started again, all reach Redis once, so every level holds exactly what the
 * upstream reported.
 */
class MoneyFaultTest {

    /** $2 per million output tokens, nothing for input: a call costs 2 µ$ per output token. */
    private static final long MICROS_PER_OUTPUT_TOKEN = 2;

    private static final long RESERVED_OUTPUT_TOKENS = 50_000; // $0.10 reserved a call

    @TempDir
    Path directory;

    @Test
    @DisplayName("CLIENT PAUSE 1.5 s while a 60-call race on a team's $1 cap settles: team, org and members"
            + " hold exactly the real spend")
    void pausedRedisLosesNoSettlement() throws Exception {
        Path config = directory.resolve("money.yaml");
        Files.writeString(config, """
                keys:
                  - { key: alice-key, tenant: alice, tier: member, team: research }
                  - { key: bob-key, tenant: bob, tier: member, team: research }
                orgs:
                  acme: { windows: { spend-month: $3/30d@1h } }
                teams:
                  research: { org: acme, windows: { spend-month: $1/30d@1h } }
                tiers:
                  member:
                    max-concurrent: 100
                    windows: { minute: 1000/1m, spend-day: $0.60/1d@1m }
                prices:
                  metered: { input: 0, output: 2.00 }
                limits:
                  upstream-first-byte-timeout-ms: 30000
                """);
        try (RedisServer redis = RedisServer.start();
                Harness harness = Harness.start(
                        Harness.Store.MEMORY,
                        true,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            CountDownLatch answer = new CountDownLatch(1);
            AtomicInteger served = new AtomicInteger();
            harness.stub().answerByDefault((body, response) -> {
                int call = served.incrementAndGet();
                if (!answer.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the upstream answer");
                }
                // each call really uses less than it reserved, and a different amount
                StubUpstream.usage(9, 0, 1_000L * call + call).answer(body, response);
            });
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
                    .model("metered")
                    .addUserMessage("hi")
                    .maxCompletionTokens(RESERVED_OUTPUT_TOKENS)
                    .build();
            ExecutorService pool = Executors.newFixedThreadPool(60);
            AtomicLongArray spent = new AtomicLongArray(2); // alice, bob
            AtomicInteger refused = new AtomicInteger();
            List<Future<?>> calls = new ArrayList<>();
            try {
                CountDownLatch go = new CountDownLatch(1);
                for (int i = 0; i < 60; i++) {
                    int member = i % 2;
                    OpenAIClient client = harness.openAi(member == 0 ? "alice-key" : "bob-key");
                    calls.add(pool.submit(() -> {
                        go.await();
                        try {
                            HttpResponseFor<ChatCompletion> raw = client.chat()
                                    .completions()
                                    .withRawResponse()
                                    .create(params);
                            assertThat(raw.headers().values("X-RateLimit-Degraded"))
                                    .as("decided by the store")
                                    .isEmpty();
                            long output = raw.parse().usage().orElseThrow().completionTokens();
                            spent.addAndGet(member, output * MICROS_PER_OUTPUT_TOKEN);
                        } catch (RateLimitException e) {
                            refused.incrementAndGet();
                        }
                        return null;
                    }));
                }
                go.countDown();
                Harness.await("the ten calls the team's $1 admits reach the upstream", () -> served.get() == 10);
                Harness.await("the fifty others refused", () -> refused.get() == 50);
                try (RespClient raw = redis.connect()) {
                    raw.call("CLIENT", "PAUSE", "1500", "ALL");
                }
                answer.countDown(); // the ten answer and settle while Redis is paused
                for (Future<?> call : calls) {
                    call.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            long real = spent.get(0) + spent.get(1);
            SharedBudget team = harness.server
                    .gateway()
                    .config()
                    .spending()
                    .teams()
                    .get("research")
                    .budget();
            SharedBudget org = harness.server
                    .gateway()
                    .config()
                    .spending()
                    .orgs()
                    .get("acme")
                    .budget();
            Harness.await("the team's month holds the real spend", () -> {
                try {
                    return harness.used(team, "spend-month") == real;
                } catch (RateLimiterUnavailableException stillPaused) {
                    return false;
                }
            });
            assertThat(harness.used(org, "spend-month"))
                    .as("the organisation's")
                    .isEqualTo(real);
            assertThat(harness.used("alice", "spend-day")).as("alice's day").isEqualTo(spent.get(0));
            assertThat(harness.used("bob", "spend-day")).as("bob's day").isEqualTo(spent.get(1));
            assertThat(harness.metric("ratelimit_settle_failures_total"))
                    .as("none given up")
                    .isZero();
            System.out.println("gateway, Redis paused 1.5 s during settlements: 10 admitted of 60, team "
                    + harness.used(team, "spend-month") + " µ$ in Redis = " + real + " µ$ really spent");
        }
    }

    private static final int STREAMS = 10;

    @Test
    @DisplayName("kill -9 and restart of Redis under load with 10 streams in flight: tokens and slots in Redis"
            + " match the upstream's usage within 2 s of the last response")
    void restartUnderStreams() throws Exception {
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i < STREAMS; i++) {
            keys.append("  - { key: key-")
                    .append(i)
                    .append(", tenant: t")
                    .append(i)
                    .append(", tier: one }\n");
        }
        Path config = directory.resolve("streams.yaml");
        Files.writeString(config, "keys:\n" + keys + """
                tiers:
                  one:
                    max-concurrent: 5
                    windows: { minute: 100000/1m, tokens-minute: 10000000 tokens/1m }
                limits:
                  upstream-first-byte-timeout-ms: 10000
                """);
        String stream = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                + "\"max_tokens\":80,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"));
                Harness harness = Harness.start(
                        Harness.Store.MEMORY,
                        true,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            harness.stub().answerByDefault(StubUpstream.slowStream(5, 40));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLongArray requests = new AtomicLongArray(STREAMS);
            AtomicLong degraded = new AtomicLong();
            AtomicLong other = new AtomicLong();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                int tenant = i;
                Thread client = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            HttpResponse<String> response = harness.http.send(
                                    harness.chatRequest("key-" + tenant, stream), HttpResponse.BodyHandlers.ofString());
                            if (response.statusCode() != 200) {
                                other.incrementAndGet();
                                Thread.sleep(20);
                            } else if (response.headers()
                                    .firstValue("X-RateLimit-Degraded")
                                    .isPresent()) {
                                degraded.incrementAndGet();
                            } else {
                                assertThat(response.body()).contains("\"total_tokens\":" + TOTAL, "[DONE]");
                                requests.incrementAndGet(tenant);
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                client.start();
                clients.add(client);
            }
            Thread.sleep(1_000);
            redis.kill();
            Thread.sleep(1_000);
            redis.startAgain();
            Thread.sleep(2_000);
            stop.set(true);
            for (Thread client : clients) {
                client.join(30_000);
            }
            long last = System.nanoTime();
            assertThat(failures).isEmpty();
            List<String> mismatches = mismatches(harness, requests);
            while (!mismatches.isEmpty()
                    && System.nanoTime() - last < Duration.ofSeconds(2).toNanos()) {
                Thread.sleep(20);
                mismatches = mismatches(harness, requests);
            }
            long millis = Duration.ofNanos(System.nanoTime() - last).toMillis();
            long admitted = 0;
            for (int i = 0; i < STREAMS; i++) {
                admitted += requests.get(i);
            }
            System.out.println("gateway, Redis killed and restarted under " + STREAMS + " streams: " + admitted
                    + " streams decided by the store, " + degraded.get() + " degraded, " + other.get()
                    + " refused; Redis matched the upstream's usage " + millis + " ms after the last response"
                    + (mismatches.isEmpty() ? "" : ": NOT " + mismatches));
            assertThat(mismatches)
                    .as("tokens, requests and slots in Redis within 2 s")
                    .isEmpty();
            assertThat(harness.metric("ratelimit_settle_failures_total"))
                    .as("none given up")
                    .isZero();
        }
    }

    private static final int TOTAL = StubUpstream.PROMPT + StubUpstream.COMPLETION;

    private static List<String> mismatches(Harness harness, AtomicLongArray requests) {
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
            String tenant = "t" + i;
            long tokens = harness.used(tenant, "tokens-minute");
            long count = harness.used(tenant, "minute");
            int slots = harness.inFlight(tenant);
            if (tokens != requests.get(i) * TOTAL || count != requests.get(i) || slots != 0) {
                mismatches.add(tenant + ": tokens " + tokens + " (real " + requests.get(i) * TOTAL + "), requests "
                        + count + " (real " + requests.get(i) + "), slots " + slots);
            }
        }
        return mismatches;
    }
}
