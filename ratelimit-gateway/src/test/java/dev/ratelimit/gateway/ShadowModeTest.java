package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Shadow mode end to end ({@code gateway-shadow.yaml}): each limit in shadow runs beside its
 * enforcing twin of the same shape, both sent the same requests on the same clock, and the shadow
 * one admits exactly the requests its twin refuses, marking each ({@code X-RateLimit-Shadow}, the
 * access log's {@code shadow}, {@code ratelimit_shadow_refusals_total}, {@code /status.json}), while
 * counting what its twin counts. In memory and on a private redis-server.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class ShadowModeTest {

    private static final long DIME = 100_000; // $0.10 in micro-dollars
    private static final String SHADOW = "X-RateLimit-Shadow";

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    private Path log() {
        return directory.resolve("access.log");
    }

    private void start(boolean withStub) throws Exception {
        Path config =
                Path.of(ShadowModeTest.class.getResource("gateway-shadow.yaml").toURI());
        harness = Harness.start(
                store, withStub, Map.of("GATEWAY_CONFIG", config.toString(), "ACCESS_LOG", log().toString()));
    }

    /** One request of the kind {@code step} picks: OpenAI plain or streamed, Anthropic plain or streamed, a pass-through. */
    private HttpResponse<String> send(int step, String key) throws Exception {
        String openAi = "{\"model\":\"gpt-4o-mini\",\"max_completion_tokens\":16,%s\"messages\":[{\"role\":\"user\","
                + "\"content\":\"hi\"}]}";
        String anthropic = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":16,%s\"messages\":[{\"role\":\"user\","
                + "\"content\":\"hi\"}]}";
        return switch (step % 5) {
            case 0 -> harness.chat(key, openAi.formatted(""));
            case 1 -> harness.chat(key, openAi.formatted("\"stream\":true,"));
            case 2 -> messages(key, anthropic.formatted(""));
            case 3 -> messages(key, anthropic.formatted("\"stream\":true,"));
            default -> harness.get("/v1/models", key);
        };
    }

    private HttpResponse<String> messages(String key, String body) throws Exception {
        return harness.http.send(
                HttpRequest.newBuilder(URI.create(harness.base() + "/v1/messages"))
                        .timeout(Duration.ofSeconds(30))
                        .header("x-api-key", key)
                        .header("anthropic-version", "2023-06-01")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode status() throws Exception {
        HttpResponse<String> response = harness.admin("/status.json");
        assertThat(response.statusCode()).isEqualTo(200);
        return OpenAi.JSON.readTree(response.body());
    }

    private static JsonNode entry(JsonNode array, String field, String value) {
        for (JsonNode entry : array) {
            if (entry.path(field).asText().equals(value)) {
                return entry;
            }
        }
        throw new AssertionError("no " + field + " " + value + " in " + array);
    }

    private static JsonNode window(JsonNode owner, String name) {
        return entry(owner.path("windows"), "name", name);
    }

    private List<JsonNode> lines(String tenant) throws Exception {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(log())) {
            JsonNode json = OpenAi.JSON.readTree(line);
            if (json.path("tenant").asText().equals(tenant)) {
                lines.add(json);
            }
        }
        return lines;
    }

    /** Waits until the access log has {@code count} lines of {@code tenant}: a line is written as its answer ends. */
    private void awaitLines(String tenant, int count) throws InterruptedException {
        Harness.await(count + " lines of " + tenant, () -> {
            try {
                return lines(tenant).size() == count;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    @DisplayName("a tier in shadow and a key in shadow admit exactly the requests their enforcing twin refuses, on"
            + " every endpoint kind, and mark each: header, access log, metric and status page")
    void twins() throws Exception {
        start(false);
        List<Integer> refused = new ArrayList<>();
        Map<String, List<Integer>> marked = new HashMap<>();
        int steps = 15;
        for (int step = 0; step < steps; step++) {
            HttpResponse<String> enforced = send(step, "enforced-key");
            assertThat(enforced.headers().firstValue(SHADOW)).isEmpty();
            if (enforced.statusCode() == 429) {
                refused.add(step);
            } else {
                assertThat(enforced.statusCode()).as("step %d", step).isEqualTo(200);
            }
            for (String key : List.of("shadow-key", "key-shadow-key")) {
                HttpResponse<String> shadow = send(step, key);
                assertThat(shadow.statusCode()).as("%s, step %d", key, step).isEqualTo(200);
                if (shadow.headers().firstValue(SHADOW).isPresent()) {
                    assertThat(shadow.headers().firstValue(SHADOW)).hasValue("rpm");
                    marked.computeIfAbsent(key, k -> new ArrayList<>()).add(step);
                }
            }
            harness.clock.advance(Duration.ofSeconds(7));
        }
        assertThat(refused)
                .as("the enforcing twin refuses some and admits some after its refusals")
                .isNotEmpty()
                .hasSizeLessThan(steps - 3);
        assertThat(refused.stream().map(step -> step % 5).distinct())
                .as("every kind of request is among them: OpenAI and Anthropic, plain and streamed, pass-through")
                .hasSize(5);
        assertThat(marked.get("shadow-key")).as("the tier in shadow").isEqualTo(refused);
        assertThat(marked.get("key-shadow-key")).as("the key in shadow").isEqualTo(refused);
        assertThat(harness.used("shadowed", "rpm")).isEqualTo(harness.used("enforced", "rpm"));
        assertThat(harness.used("key-shadowed", "rpm")).isEqualTo(harness.used("enforced", "rpm"));

        int count = refused.size();
        assertThat(harness.metric("ratelimit_shadow_refusals_total", "tier", "trial", "window", "rpm", "level", "user"))
                .isEqualTo(count);
        assertThat(harness.metric(
                        "ratelimit_shadow_refusals_total", "tier", "strict.shadow", "window", "rpm", "level", "user"))
                .isEqualTo(count);
        assertThat(harness.metric("ratelimit_shadow_refusals_total", "tier", "strict"))
                .isZero();

        JsonNode status = status();
        JsonNode shadowed = window(entry(status.path("tenants"), "tenant", "shadowed"), "rpm");
        JsonNode keyShadowed = window(entry(status.path("tenants"), "tenant", "key-shadowed"), "rpm");
        JsonNode enforced = window(entry(status.path("tenants"), "tenant", "enforced"), "rpm");
        assertThat(enforced.path("mode").asText()).isEqualTo("enforce");
        assertThat(enforced.has("shadowRefusals")).isFalse();
        for (JsonNode shadow : List.of(shadowed, keyShadowed)) {
            assertThat(shadow.path("mode").asText()).isEqualTo("shadow");
            assertThat(shadow.path("shadowRefusals").asLong()).isEqualTo(count);
            assertThat(shadow.path("used").asLong())
                    .isEqualTo(enforced.path("used").asLong());
        }

        awaitLines("key-shadowed", steps);
        for (String tenant : List.of("shadowed", "key-shadowed")) {
            List<JsonNode> lines = lines(tenant);
            assertThat(lines).hasSize(steps);
            List<Integer> logged = new ArrayList<>();
            for (int step = 0; step < steps; step++) {
                JsonNode line = lines.get(step);
                assertThat(line.path("status").asInt()).isEqualTo(200);
                if (line.has("shadow")) {
                    assertThat(line.path("shadow").toString()).isEqualTo("[\"rpm\"]");
                    assertThat(line.path("decision").asText()).isEqualTo("allowed");
                    logged.add(step);
                }
            }
            assertThat(logged).as(tenant + "'s access log").isEqualTo(refused);
        }
        assertThat(lines("enforced")).noneMatch(line -> line.has("shadow"));
    }

    @Test
    @DisplayName("a team in shadow admits what its enforcing twin refuses, marked with level team")
    void team() throws Exception {
        start(false);
        String body = "{\"model\":\"gpt-4o-mini\",\"max_completion_tokens\":16,\"messages\":[{\"role\":\"user\","
                + "\"content\":\"hi\"}]}";
        int refused = 0;
        int marked = 0;
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> enforced = harness.chat("team-enforced-key", body);
            HttpResponse<String> shadow = harness.chat("team-shadow-key", body);
            assertThat(shadow.statusCode()).isEqualTo(200);
            if (enforced.statusCode() == 429) {
                assertThat(enforced.body()).contains("team 'enforcing'");
                refused++;
                assertThat(shadow.headers().firstValue(SHADOW)).hasValue("rpm");
                marked++;
            } else {
                assertThat(shadow.headers().firstValue(SHADOW)).isEmpty();
            }
        }
        assertThat(refused).isEqualTo(3);
        assertThat(marked).isEqualTo(refused);
        assertThat(harness.metric("ratelimit_shadow_refusals_total", "window", "rpm", "level", "team"))
                .isEqualTo(refused);
        assertThat(harness.metric("ratelimit_shadow_refusals_total", "level", "user"))
                .isZero();

        JsonNode teams = status().path("teams");
        JsonNode trying = window(entry(teams, "team", "trying"), "rpm");
        JsonNode enforcing = window(entry(teams, "team", "enforcing"), "rpm");
        assertThat(trying.path("mode").asText()).isEqualTo("shadow");
        assertThat(trying.path("shadowRefusals").asLong()).isEqualTo(refused);
        assertThat(trying.path("used").asLong())
                .isEqualTo(enforcing.path("used").asLong());
        assertThat(enforcing.path("used").asLong()).isEqualTo(2);
    }

    @Test
    @DisplayName("a dollar window in shadow admits the call over it, marked, and its settlements count the actual"
            + " cost exactly as its enforcing twin's do")
    void spend() throws Exception {
        start(true);
        // each call reserves $0.10 (50,000 output tokens at most) and settles at $0.05 (25,000 used)
        harness.stub().answerByDefault(StubUpstream.usage(9, 0, 25_000));
        String body = "{\"model\":\"metered\",\"max_completion_tokens\":50000,\"messages\":[{\"role\":\"user\","
                + "\"content\":\"hi\"}]}";
        List<Integer> refused = new ArrayList<>();
        List<Integer> marked = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> enforced = harness.chat("spend-enforced-key", body);
            HttpResponse<String> shadow = harness.chat("spend-shadow-key", body);
            assertThat(shadow.statusCode()).isEqualTo(200);
            if (enforced.statusCode() == 429) {
                assertThat(enforced.body()).contains("insufficient_quota");
                refused.add(i);
            }
            if (shadow.headers().firstValue(SHADOW).isPresent()) {
                assertThat(shadow.headers().firstValue(SHADOW)).hasValue("spend-day");
                marked.add(i);
            }
        }
        // $0.05 settled per call: the fifth would hold $0.20 + $0.10 of $0.25
        assertThat(refused).containsExactly(4, 5);
        assertThat(marked).isEqualTo(refused);
        assertThat(harness.used("spend-enforced", "spend-day")).isEqualTo(2 * DIME);
        assertThat(harness.used("spend-shadowed", "spend-day"))
                .as("what the enforcing twin holds: the calls it would have refused are not counted")
                .isEqualTo(2 * DIME);
        assertThat(harness.metric(
                        "ratelimit_shadow_refusals_total",
                        "tier",
                        "spend-trial",
                        "window",
                        "spend-day",
                        "level",
                        "user"))
                .isEqualTo(2);

        JsonNode tenants = status().path("tenants");
        JsonNode shadow = window(entry(tenants, "tenant", "spend-shadowed"), "spend-day");
        assertThat(shadow.path("mode").asText()).isEqualTo("shadow");
        assertThat(shadow.path("used").asLong()).isEqualTo(2 * DIME);
        assertThat(shadow.path("shadowRefusals").asLong()).isEqualTo(2);
        assertThat(shadow.has("alert"))
                .as("shadow windows raise no budget alerts")
                .isFalse();
        assertThat(window(entry(tenants, "tenant", "spend-enforced"), "spend-day")
                        .path("used")
                        .asLong())
                .isEqualTo(2 * DIME);
        awaitLines("spend-shadowed", 6);
        List<JsonNode> lines = lines("spend-shadowed");
        assertThat(lines.get(4).path("shadow").toString()).isEqualTo("[\"spend-day\"]");
        assertThat(lines.get(4).path("settledUsd").asText()).isEqualTo("0.05");
    }

    private static GatewayConfig parse(String yaml) throws Exception {
        return GatewayConfig.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "test.yaml");
    }

    private static final String LEVELS = """
            keys:
              - { key: sk-alice-123, tenant: alice, tier: pro, team: research }
              - { key: sk-bob-123, tenant: bob, tier: pro, mode: shadow }
            orgs:
              acme: { mode: shadow, windows: { spend-month: $5000/30d@1h } }
            teams:
              research:
                org: acme
                windows: { spend-month: $500/30d@1h, rpm: 100/1m shadow }
                models: { gpt-4o: { spend-day: $20/1d@1m } }
            tiers:
              pro:
                max-concurrent: 10
                windows: { minute: 60/1m, spend-day: $5/1d@1m fail-closed shadow }
                models: { gpt-4o: { minute: 10/1m shadow } }
            """;

    @Test
    @DisplayName("mode: shadow on a tier, team, org and key, and a window's shadow suffix wherever windows are"
            + " written; a bad mode is an error naming its entry")
    void config() throws Exception {
        GatewayConfig config = parse(LEVELS);
        GatewayConfig.TierConfig pro = config.tiers().get("pro");
        assertThat(pro.tier().windows())
                .as("the suffix puts its window alone in shadow")
                .extracting(Window::name, Window::inShadow)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("minute", false),
                        org.assertj.core.groups.Tuple.tuple("spend-day", true));
        assertThat(pro.models().get("gpt-4o")).allMatch(Window::inShadow);
        GatewayConfig.ApiKey alice = config.keys().get(0);
        GatewayConfig.ApiKey bob = config.keys().get(1);
        assertThat(alice.tier().tier().name()).isEqualTo("pro");
        assertThat(bob.tier().name()).isEqualTo("pro");
        assertThat(bob.tier().tier().name())
                .as("the key's own copy of its tier")
                .isEqualTo("pro.shadow");
        assertThat(bob.tier().tier().windows()).allMatch(Window::inShadow);
        assertThat(bob.tier().requests().windows()).allMatch(Window::inShadow);
        assertThat(bob.tier().models().get("gpt-4o")).allMatch(Window::inShadow);
        SharedBudget team = Objects.requireNonNull(alice.team().budget());
        assertThat(team.windows())
                .extracting(Window::name, Window::inShadow)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("spend-month", false),
                        org.assertj.core.groups.Tuple.tuple("rpm", true));
        assertThat(alice.team().models().get("gpt-4o").windows()).noneMatch(Window::inShadow);
        assertThat(Objects.requireNonNull(alice.team().org().budget()).windows())
                .as("the org in shadow")
                .allMatch(Window::inShadow);
        assertThat(parse(LEVELS.replace("org: acme\n", "org: acme\n    mode: shadow\n"))
                        .spending()
                        .teams()
                        .get("research")
                        .models()
                        .get("gpt-4o")
                        .windows())
                .as("a team in shadow: its per-model windows too")
                .allMatch(Window::inShadow);
        assertThat(parse(LEVELS.replace("max-concurrent: 10", "max-concurrent: 10\n    mode: shadow"))
                        .tiers()
                        .get("pro")
                        .tier()
                        .windows())
                .allMatch(Window::inShadow);

        String bad = LEVELS.replace("org: acme\n", "org: acme\n    mode: Shadowy\n")
                .replace("acme: { mode: shadow", "acme: { mode: warn")
                .replace("tier: pro, mode: shadow", "tier: pro, mode: audit");
        assertThatThrownBy(() -> parse(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("teams.research.mode: must be enforce or shadow, was 'Shadowy'")
                .hasMessageContaining("orgs.acme.mode: must be enforce or shadow, was 'warn'")
                .hasMessageContaining("keys[1].mode: must be enforce or shadow, was 'audit'");
        assertThatThrownBy(() -> parse(LEVELS.replace("max-concurrent: 10", "max-concurrent: 10\n    mode: dry-run")))
                .hasMessageContaining("tiers.pro.mode: must be enforce or shadow, was 'dry-run'");
        assertThatThrownBy(() -> parse(LEVELS.replace(
                        "tenant: bob, tier: pro, mode: shadow }",
                        "tenant: bob, tier: pro, mode: shadow }\n  - { key: sk-bob-456, tenant: bob, tier: pro }")))
                .hasMessageContaining("keys[2].mode: tenant 'bob' is in shadow by keys[1]");
        assertThatThrownBy(() -> parse(LEVELS.replace("minute: 60/1m, ", "")))
                .as("a tier still needs a request window; one in shadow counts")
                .hasMessageContaining("tiers.pro.windows: define at least one request window");
        assertThat(parse(LEVELS.replace("minute: 60/1m,", "minute: 60/1m shadow,"))
                        .tiers()
                        .get("pro")
                        .requests()
                        .windows())
                .singleElement()
                .matches(Window::inShadow);
    }
}
