package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Budgets in money, end to end with openai-java against a stub upstream whose usage the test
 * chooses: spend windows of a tenant, its team and its organisation, per-model limits and a tier's
 * share of a model's cap, all charged in one reservation. Prices ({@code gateway-money.yaml}) make
 * costs round: {@code metered} costs $2 per million output tokens and nothing for input, so a call
 * reserving 50,000 output tokens reserves exactly $0.10.
 *
 * <p>In memory, on a redis-server and on a Redis Cluster, with the same assertions. On the cluster
 * each level (the tenant, its team, its organisation, a per-model limit, a cap, a share) is a scope
 * of its own, reserved one after another from the tenant's own, and a scope that refuses cancels
 * the earlier ones before the caller hears: the counts stay exact because a level refuses only when
 * what it has admitted fills it (see {@link #teamCapUnderRace}).
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class SpendTest {

    private static final long DIME = 100_000; // $0.10 in micro-dollars

    @Parameter
    Harness.Store store;

    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        Path config = Path.of(SpendTest.class.getResource("gateway-money.yaml").toURI());
        harness = Harness.start(store, true, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static ChatCompletionCreateParams ask(String model, long maxTokens) {
        return ChatCompletionCreateParams.builder()
                .model(model)
                .addUserMessage("hi")
                .maxCompletionTokens(maxTokens)
                .build();
    }

    private SharedBudget team(String name) {
        return harness.server.gateway().config().spending().teams().get(name).budget();
    }

    private SharedBudget org(String name) {
        return harness.server.gateway().config().spending().orgs().get(name).budget();
    }

    /** Races {@code calls} requests, alternating between the keys, and counts those admitted. */
    private int race(int calls, List<String> keys, ChatCompletionCreateParams params) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(calls);
        try {
            CountDownLatch go = new CountDownLatch(1);
            AtomicInteger admitted = new AtomicInteger();
            List<Future<?>> done = new java.util.ArrayList<>();
            for (int i = 0; i < calls; i++) {
                OpenAIClient client = harness.openAi(keys.get(i % keys.size()));
                done.add(pool.submit(() -> {
                    go.await();
                    try {
                        client.chat().completions().create(params);
                        admitted.incrementAndGet();
                    } catch (RateLimitException refused) {
                        // counted by what was admitted
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> future : done) {
                future.get(60, TimeUnit.SECONDS);
            }
            return admitted.get();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a team's monthly cap admits exactly what fits while its members race for it, then refuses each of"
            + " them with insufficient_quota naming the team")
    void teamCapUnderRace() throws Exception {
        // the stub reports the whole reservation as used: nothing is refunded during the race. On a
        // cluster a call the team refuses holds a dime of its member's own window until its cancel (one
        // round trip), and may meanwhile have another call of that member refused by the member's own
        // window (the scope-by-scope protocol's brief false rejection at the edge of a member's limit);
        // the team still admits exactly ten, since it refuses only when ten admitted calls fill it and
        // nothing after it (the organisation's $3) ever refuses here
        harness.stub().answerByDefault(StubUpstream.usage(9, 0, 50_000));

        int admitted = race(20, List.of("alice-key", "bob-key"), ask("metered", 50_000));

        assertThat(admitted).as("$0.10 each against the team's $1.00").isEqualTo(10);
        assertThat(harness.used(team("research"), "spend-month")).isEqualTo(10 * DIME);
        assertThat(harness.used(org("acme"), "spend-month"))
                .as("the organisation pays too")
                .isEqualTo(10 * DIME);
        assertThat(harness.used("alice", "spend-day") + harness.used("bob", "spend-day"))
                .as("and the members, exactly what was admitted")
                .isEqualTo(10 * DIME);
        assertThat(harness.stub().received())
                .as("refused calls never reached the upstream")
                .hasSize(10);

        // erin, of the same team, has spent nothing of her own: the team's window refuses her
        HttpResponse<String> refused = harness.chat("erin-key", body("metered", 1));
        assertThat(refused.statusCode()).isEqualTo(429);
        JsonNode error = OpenAi.JSON.readTree(refused.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("insufficient_quota");
        assertThat(error.path("type").asText()).isEqualTo("insufficient_quota");
        assertThat(error.path("window").asText()).isEqualTo("spend-month");
        assertThat(error.path("message").asText())
                .contains("Spend limit reached", "$1.00", "spend-month", "team 'research'", "retry in");
        assertThat(refused.headers().firstValue("retry-after")).isPresent();
        assertThat(harness.metric("gateway_spend_usd_micros_total", "tenant", "alice", "team", "research")
                        + harness.metric("gateway_spend_usd_micros_total", "tenant", "bob", "team", "research"))
                .isEqualTo(10.0 * DIME);
    }

    @Test
    @DisplayName("usage above the reservation is charged in full, never refused, and counted as an overrun")
    void overrunIsChargedAndCounted() throws Exception {
        harness.stub().enqueue(StubUpstream.usage(9, 0, 60_000)); // 10,000 output tokens more than max_tokens
        HttpResponse<String> answer = harness.chat("alice-key", body("metered", 50_000));
        assertThat(answer.statusCode()).isEqualTo(200);
        Harness.await("the overrun is counted", () -> {
            try {
                return harness.metric("gateway_settlement_overrun_total", "unit", "tokens") == 1.0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(harness.metric("gateway_settlement_overrun_total", "unit", "usd_micros"))
                .isEqualTo(1.0);
        assertThat(harness.metric("gateway_settlement_overrun_amount_total", "unit", "tokens"))
                .as("tokens above the reservation: 60,000 output against 50,000 reserved (the prompt as counted)")
                .isGreaterThanOrEqualTo(10_000.0);
        assertThat(harness.metric("gateway_spend_usd_micros_total", "tenant", "alice"))
                .as("charged in full: 60,000 output tokens")
                .isGreaterThan(0.0);
    }

    @Test
    @DisplayName(
            "the worst case is reserved before the call and the real cost settled after: a refund gives money back")
    void refundOnCommit() throws Exception {
        harness.stub().enqueue(StubUpstream.usage(9, 0, 5_000)); // $0.01 of the $0.10 reserved
        HttpResponse<String> answer = harness.chat("alice-key", body("metered", 50_000));
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("x-ratelimit-remaining-spend"))
                .as("the tenant's spend-day after the worst case was reserved")
                .contains("0.5");
        assertThat(answer.headers().firstValue("x-ratelimit-limit-spend")).contains("0.6");
        assertThat(harness.used("alice", "spend-day"))
                .as("settled to the real cost")
                .isEqualTo(DIME / 10);
        assertThat(harness.used(team("research"), "spend-month")).isEqualTo(DIME / 10);
    }

    @Test
    @DisplayName("cached input is charged at its own price")
    void cachedInput() throws Exception {
        // cached-model: input $1, cached input $0.50, output $2 per million: 1,000 fresh, 2,000 cached, 500 out
        harness.stub().enqueue(StubUpstream.usage(3_000, 2_000, 500));
        assertThat(harness.chat("dave-key", body("cached-model", 1_000)).statusCode())
                .isEqualTo(200);
        assertThat(harness.used("dave", "spend-day")).isEqualTo(1_000 + 1_000 + 1_000);
    }

    @Test
    @DisplayName("a member refused by their own cap leaves the team's budget untouched")
    void ownCapFirst() throws Exception {
        harness.stub().answerByDefault(StubUpstream.usage(9, 0, 50_000));
        OpenAIClient alice = harness.openAi("alice-key");
        for (int i = 0; i < 6; i++) {
            alice.chat().completions().create(ask("metered", 50_000));
        }
        assertThatThrownBy(() -> alice.chat().completions().create(ask("metered", 50_000)))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("tenant 'alice'")
                .hasMessageContaining("spend-day");
        assertThat(harness.used(team("research"), "spend-month"))
                .as("her refused call cost the team nothing")
                .isEqualTo(6 * DIME);
        assertThat(harness.openAi("bob-key")
                        .chat()
                        .completions()
                        .create(ask("metered", 50_000))
                        .choices())
                .as("the team still has room for bob")
                .isNotEmpty();
    }

    @Test
    @DisplayName("per-model limits: a tier's and a team's limits for one model refuse it while other models pass")
    void perModelLimits() throws Exception {
        // member tier: metered-large 3 a minute; team design: metered-large 2 a minute (carol is in design)
        OpenAIClient dave = harness.openAi("dave-key");
        for (int i = 0; i < 3; i++) {
            dave.chat().completions().create(ask("metered-large", 10));
        }
        assertThatThrownBy(() -> dave.chat().completions().create(ask("metered-large", 10)))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("the metered-large limit of tier member");
        assertThat(dave.chat().completions().create(ask("metered", 10)).choices())
                .as("another model under the same tier")
                .isNotEmpty();

        OpenAIClient carol = harness.openAi("carol-key");
        for (int i = 0; i < 2; i++) {
            carol.chat().completions().create(ask("metered-large", 10));
        }
        assertThatThrownBy(() -> carol.chat().completions().create(ask("metered-large", 10)))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("the metered-large limit of team 'design'");
    }

    @Test
    @DisplayName("a tier's share of a cap: free keys together never take more than 20 % of it, pro keys take the rest")
    void freeShare() throws Exception {
        // shared-model: 10 a minute for everyone, free keys at most 20 % of it: 2
        int free = race(8, List.of("free-key-1", "free-key-2"), ask("shared-model", 10));
        assertThat(free).as("free keys: their share").isEqualTo(2);
        HttpResponse<String> share = harness.chat("free-key-1", body("shared-model", 10));
        assertThat(OpenAi.JSON
                        .readTree(share.body())
                        .path("error")
                        .path("message")
                        .asText())
                .contains("tier free's 20% share of the upstream cap of shared-model");
        int pro = race(12, List.of("pro-key-1", "pro-key-2"), ask("shared-model", 10));
        assertThat(pro).as("pro keys find the rest of the cap").isEqualTo(8);
    }

    @Test
    @DisplayName("a model without a price is refused where a spend window applies, naming it, charging nothing")
    void unpricedModel() throws Exception {
        HttpResponse<String> refused = harness.chat("alice-key", body("unpriced-model", 10));
        assertThat(refused.statusCode()).isEqualTo(400);
        JsonNode error = OpenAi.JSON.readTree(refused.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("model_not_priced");
        assertThat(error.path("param").asText()).isEqualTo("model");
        assertThat(error.path("message").asText()).contains("'unpriced-model'", "spend-day");
        assertThat(harness.stub().received()).isEmpty();
        assertThat(harness.used("alice", "minute")).as("nothing charged").isZero();
        assertThat(harness.chat("free-key-1", body("unpriced-model", 10)).statusCode())
                .as("a key under no spend window may use it")
                .isEqualTo(200);
    }

    @Test
    @DisplayName("the status page reports spend in every level and the top spenders")
    void statusReport() throws Exception {
        harness.stub().enqueue(StubUpstream.usage(9, 0, 50_000));
        assertThat(harness.chat("bob-key", body("metered", 50_000)).statusCode())
                .isEqualTo(200);
        // the first report of this gateway is taken now, after the call
        JsonNode status = OpenAi.JSON.readTree(harness.admin("/status.json").body());
        JsonNode top = status.path("topSpenders").get(0);
        assertThat(top.path("tenant").asText()).isEqualTo("bob");
        assertThat(top.path("used").asLong()).isEqualTo(DIME);
        JsonNode research = status.path("teams").get(0);
        assertThat(research.path("team").asText()).isEqualTo("research");
        assertThat(research.path("windows").get(0).path("unit").asText()).isEqualTo("usd_micros");
        assertThat(research.path("windows").get(0).path("used").asLong()).isEqualTo(DIME);
        assertThat(status.path("orgs")
                        .get(0)
                        .path("windows")
                        .get(0)
                        .path("used")
                        .asLong())
                .isEqualTo(DIME);
    }

    private static String body(String model, long maxTokens) {
        return "{\"model\":\"" + model + "\",\"max_completion_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    }
}
