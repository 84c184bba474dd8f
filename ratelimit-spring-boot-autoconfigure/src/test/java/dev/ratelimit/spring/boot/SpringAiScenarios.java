package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.springai.RateLimitAdvisor;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Spring AI application with the starter, on each stack and store: its {@code /chat} endpoint calls
 * Spring AI's OpenAI model through a {@code ChatClient} from Spring AI's auto-configured builder,
 * against the {@link FakeModel}, over real HTTP with real JWTs. The web filter does not cover {@code
 * /chat} (application.yml limits {@code /api/*}): what refuses there is the advisor.
 */
public abstract class SpringAiScenarios {

    /** The model cap application.yml would set as {@code ratelimit.spring-ai.models.gpt-4o-mini.tpm}. */
    static final SharedBudget MODEL_CAP =
            SharedBudget.of("spring-ai/gpt-4o-mini", Window.tokens("tpm", 300_000, Duration.ofMinutes(1)));

    private static final FakeModel STUB = start();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    TierPolicy tiers;

    @Autowired
    RateLimitAdvisor advisor;

    private static FakeModel start() {
        FakeModel fake = FakeModel.start(); // one for every application of the run: Spring caches them
        Runtime.getRuntime().addShutdownHook(new Thread(fake::close));
        return fake;
    }

    @DynamicPropertySource
    static void stub(DynamicPropertyRegistry registry) {
        registry.add("stub.base-url", STUB::baseUrl);
        registry.add("ratelimit.spring-ai.models.gpt-4o-mini.tpm", () -> "300000");
        registry.add("ratelimit.headers.families", () -> "x-ratelimit, ietf, openai");
    }

    private Http http() {
        return new Http(port);
    }

    @Test
    void theSixthCallOfAFreeUserWithinAMinuteGets429WithTheContractsHeaders() {
        String user = "ai-free-" + UUID.randomUUID();
        String token = TestJwts.token(user, null);
        int before = STUB.calls().size();
        long capBefore = limiter.usage(MODEL_CAP).get(0).used();
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> answered = http().get("/chat?q=hi", token);
            assertThat(answered.statusCode()).as("call %d", i).isEqualTo(200);
            assertThat(answered.body()).isEqualTo(FakeModel.DEFAULT_TEXT);
        }

        HttpResponse<String> refused = http().get("/chat?q=hi", token);

        assertThat(refused.statusCode()).isEqualTo(429);
        long retryAfter =
                Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 60L);
        assertThat(refused.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
        assertThat(refused.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(refused.headers().firstValue("X-RateLimit-Window")).hasValue("minute");
        assertThat(refused.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"minute\";q=5;w=60, \"day\";q=100;w=86400");
        assertThat(refused.headers().firstValue("x-ratelimit-limit-requests")).hasValue("5");
        assertThat(refused.headers().firstValue("x-ratelimit-remaining-requests"))
                .hasValue("0");
        assertThat(refused.body()).contains("\"window\":\"minute\"");
        // the model was called five times, and the principal's windows hold them, settled to the usage
        assertThat(STUB.calls().size() - before).isEqualTo(5);
        Tier free = tiers.resolve("free");
        assertThat(limiter.usage(user, free).get(0).used()).isEqualTo(5);
        assertThat(limiter.usage(MODEL_CAP).get(0).used() - capBefore).isEqualTo(5L * FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    void theTierComesFromThePrincipalsPlanClaim() {
        String user = "ai-pro-" + UUID.randomUUID();
        String token = TestJwts.token(user, "pro");
        for (int i = 1; i <= 6; i++) {
            assertThat(http().get("/chat?q=hi", token).statusCode())
                    .as("call %d", i)
                    .isEqualTo(200);
        }
        Tier pro = tiers.resolve("pro");
        assertThat(limiter.usage(user, pro).get(0).used()).isEqualTo(6);
        // pro has a token window: each call settled to the stub's usage
        assertThat(limiter.usage(user, pro).stream()
                        .filter(usage -> usage.window().isTokens())
                        .findFirst()
                        .orElseThrow()
                        .used())
                .isEqualTo(6L * FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    void theTiersSpendWindowIsChargedAtThePricesOfTheProperties() {
        String user = "ai-metered-" + UUID.randomUUID();
        String token = TestJwts.token(user, "metered");

        assertThat(http().get("/chat?q=hi", token).statusCode()).isEqualTo(200);
        assertThat(http().get("/chat?q=hi", token).statusCode()).isEqualTo(200);

        Tier metered = tiers.resolve("metered");
        Window spendDay = metered.windows().stream()
                .filter(window -> window.unit().equals(Window.Unit.USD_MICROS))
                .findFirst()
                .orElseThrow();
        assertThat(spendDay.limit()).isEqualTo(1_000_000); // $1
        // application.yml prices gpt-4o-mini at $3 input and $10 output per million tokens: the stub's
        // 11 prompt and 7 completion tokens cost 11 * 3 + 7 * 10 = 103 micro-dollars a call
        assertThat(limiter.usage(user, metered).stream()
                        .filter(usage -> usage.window().equals(spendDay))
                        .findFirst()
                        .orElseThrow()
                        .used())
                .isEqualTo(2 * 103);
    }
}
