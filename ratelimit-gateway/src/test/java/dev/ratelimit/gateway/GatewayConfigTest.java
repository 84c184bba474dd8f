package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.gateway.config.GatewayConfig;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The configuration file: the built-in default, and errors that name the bad entry. */
class GatewayConfigTest {

    private static final String VALID = """
            keys:
              - { key: sk-alpha-123, tenant: alpha, tier: basic }
            tiers:
              basic:
                max-concurrent: 3
                windows: { minute: 5/1m, day: 100/1d@1m, tokens-minute: 20000 tokens/1m }
            models:
              gpt-4o: { rpm: 500, tpm: 30000 }
            """;

    private static GatewayConfig parse(String yaml) throws Exception {
        return GatewayConfig.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "test.yaml");
    }

    @Test
    @DisplayName("the built-in default keeps the demo keys and today's request budgets, and adds caps")
    void builtInDefault() throws Exception {
        GatewayConfig config = GatewayConfig.load(null, Map.of());

        assertThat(config.tenants()).containsOnlyKeys("demo-user-free", "demo-user-pro", "demo-user-enterprise");
        assertThat(config.tiers().get("free").tier().windows())
                .extracting(w -> w.name() + "=" + w.limit() + (w.isTokens() ? " tokens" : "") + "/" + w.lengthSeconds()
                        + (w.isExact() ? "" : "@" + w.precision().toSeconds()))
                .containsExactlyInAnyOrder(
                        "minute=5/60",
                        "day=100/86400@60",
                        "tokens-minute=20000 tokens/60",
                        "tokens-day=200000 tokens/86400@60");
        assertThat(config.tiers().get("free").requests().windows())
                .extracting(w -> w.name())
                .containsExactly("minute", "day");
        assertThat(config.tiers().get("pro").requests().windows())
                .extracting(w -> w.limit())
                .containsExactlyInAnyOrder(60L, 5000L);
        assertThat(config.tiers().get("enterprise").requests().windows())
                .extracting(w -> w.limit())
                .containsExactlyInAnyOrder(600L, 100000L);
        assertThat(config.tiers().keySet()).containsExactly("free", "pro", "enterprise");
        assertThat(config.tiers().values())
                .extracting(GatewayConfig.TierConfig::maxConcurrent)
                .containsExactly(2, 10, 50);
        GatewayConfig.ModelCap mini = config.models().get("gpt-4o-mini");
        assertThat(mini.budget().name()).isEqualTo("model:gpt-4o-mini");
        assertThat(mini.budget().windows())
                .extracting(w -> w.name() + "=" + w.limit() + (w.isTokens() ? " tokens" : "") + "/" + w.lengthSeconds())
                .containsExactly("rpm=5000/60", "tpm=2000000 tokens/60");
        assertThat(config.limits().slotLease()).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    @DisplayName("a valid file is read; limits not given take their defaults")
    void valid() throws Exception {
        GatewayConfig config = parse(VALID);

        assertThat(config.keys()).singleElement().satisfies(key -> {
            assertThat(key.tenant()).isEqualTo("alpha");
            assertThat(key.sha256()).isEqualTo(GatewayConfig.sha256("sk-alpha-123"));
        });
        assertThat(config.tiers().get("basic").maxConcurrent()).isEqualTo(3);
        assertThat(config.limits().maxBodyBytes()).isEqualTo(1_048_576);
        assertThat(config.limits().defaultMaxCompletionTokens()).isEqualTo(1_024);
    }

    @Test
    @DisplayName("limits.breaker.*: the library's defaults, each setting read, bad values refused by name")
    void breaker() throws Exception {
        assertThat(parse(VALID).limits().breaker()).isEqualTo(GatewayConfig.Breaker.DEFAULTS);
        GatewayConfig.Breaker breaker = parse(VALID
                        + "limits:\n  breaker:\n    sliding-window-size: 40\n    minimum-number-of-calls: 20\n"
                        + "    failure-rate-threshold: 80\n    slow-call-duration-ms: 3000\n"
                        + "    slow-call-rate-threshold: 90\n    wait-in-open-state-ms: 250\n"
                        + "    permitted-calls-in-half-open: 5\n")
                .limits()
                .breaker();
        assertThat(breaker)
                .isEqualTo(new GatewayConfig.Breaker(
                        40, 20, 80, java.time.Duration.ofSeconds(3), 90, java.time.Duration.ofMillis(250), 5));
        assertThatThrownBy(() -> parse(VALID
                        + "limits:\n  breaker:\n    failure-rate-threshold: 150\n    minimum-number-of-calls: 50\n"
                        + "    slow-call-duration: 3\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "limits.breaker.failure-rate-threshold must be a percentage from 1 to 100, was 150")
                .hasMessageContaining("limits.breaker.minimum-number-of-calls (50) must not exceed")
                .hasMessageContaining("unknown entry 'slow-call-duration'");
    }

    @Test
    @DisplayName("limits.fail-open: true by default, false when set, anything but a boolean refused by name")
    void failOpen() throws Exception {
        assertThat(parse(VALID).limits().failOpen()).isTrue();
        assertThat(parse(VALID + "limits:\n  fail-open: false\n").limits().failOpen())
                .isFalse();
        assertThatThrownBy(() -> parse(VALID + "limits:\n  fail-open: sometimes\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("test.yaml: limits.fail-open: ");
    }

    @Test
    @DisplayName("the relay's settings: defaults, each read, a pool too small to serve refused by name")
    void relaySettings() throws Exception {
        GatewayConfig defaults = parse(VALID);
        assertThat(defaults.limits().streamBufferBytes()).isEqualTo(64 * 1024);
        assertThat(defaults.server().maxThreads()).isEqualTo(200);
        assertThat(defaults.server().maxConnections()).isEqualTo(10_000);
        assertThat(defaults.server().clientIdleTimeout()).isEqualTo(java.time.Duration.ofSeconds(30));
        GatewayConfig set = parse(VALID
                + "limits:\n  stream-buffer-bytes: 8192\n"
                + "server:\n  max-threads: 16\n  max-connections: 500\n  client-idle-timeout-ms: 5000\n");
        assertThat(set.limits().streamBufferBytes()).isEqualTo(8192);
        assertThat(set.server().maxThreads()).isEqualTo(16);
        assertThat(set.server().maxConnections()).isEqualTo(500);
        assertThat(set.server().clientIdleTimeout()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThatThrownBy(() -> parse(VALID + "server:\n  max-threads: 4\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("server.max-threads: must be at least 8");
        assertThatThrownBy(() -> parse(VALID + "limits:\n  stream-buffer-bytes: 0\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limits.stream-buffer-bytes: must be at least 1");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "unknown tier | tier: basic }->tier: gold } | keys[0].tier: 'gold' is not one of the tiers [basic]",
                "unknown entry | max-concurrent: 3->max-concurent: 3 | tiers.basic: unknown entry 'max-concurent'",
                "bad window | minute: 5/1m->minute: five/1m | tiers.basic.windows: Tier policy entry 'tier.basic.minute'",
                "zero concurrency | max-concurrent: 3->max-concurrent: 0 | tiers.basic.max-concurrent: must be at least 1",
                "no concurrency | max-concurrent: 3->max-concurrent: | tiers.basic.max-concurrent: missing",
                "zero rpm | rpm: 500->rpm: 0 | models.gpt-4o.rpm: must be at least 1",
                "text rpm | rpm: 500->rpm: lots | models.gpt-4o.rpm",
                "reserved tenant | tenant: alpha->tenant: 'ip:1.2.3.4' | keys[0].tenant: must not start with 'ip:'",
                "missing key | key: sk-alpha-123,-> | keys[0].key: missing",
                "tokens only | minute: 5/1m, day: 100/1d@1m,-> | tiers.basic.windows: define at least one request window",
                "bad precision | 100/1d@1m->100/1d@2d | tiers.basic.windows: Tier policy entry 'tier.basic.day'",
            })
    @DisplayName("a bad entry fails with a message naming it")
    void badEntries(String name, String edit, String message) {
        String[] change = edit.split("->", 2);
        String yaml = VALID.replace(change[0].strip(), change[1].strip());
        assertThat(yaml).as("the edit applies").isNotEqualTo(VALID);

        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("test.yaml: ")
                .hasMessageContaining(message);
    }

    @Test
    @DisplayName("a key given twice is refused without printing it; a tenant cannot have two tiers")
    void duplicates() {
        String twice = VALID.replace(
                "  - { key: sk-alpha-123, tenant: alpha, tier: basic }",
                "  - { key: sk-alpha-123, tenant: alpha, tier: basic }\n  - { key: sk-alpha-123, tenant: beta, tier: basic }");
        assertThatThrownBy(() -> parse(twice))
                .hasMessageContaining("keys[1].key: the same key as keys[0]")
                .hasMessageNotContaining("sk-alpha-123");

        String twoTiers = VALID.replace(
                        "  - { key: sk-alpha-123, tenant: alpha, tier: basic }",
                        "  - { key: sk-alpha-123, tenant: alpha, tier: basic }\n  - { key: sk-alpha-456, tenant: alpha, tier: other }")
                .replace("tiers:\n", "tiers:\n  other: { max-concurrent: 1, windows: { minute: 1/1m } }\n");
        assertThatThrownBy(() -> parse(twoTiers))
                .hasMessageContaining("keys[1].tier: tenant 'alpha' already has tier 'basic'");
    }

    @Test
    @DisplayName("GATEWAY_CONFIG naming no file, or a file that is not YAML, stops the start")
    void unreadable() {
        assertThatThrownBy(() -> GatewayServer.start(
                        Map.of(
                                "PORT",
                                "0",
                                "GATEWAY_CONFIG",
                                Path.of("/nonexistent/gateway.yaml").toString()),
                        null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("GATEWAY_CONFIG names no readable file: /nonexistent/gateway.yaml");
        assertThatThrownBy(() -> parse("keys: [unclosed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("test.yaml: ");
        assertThatThrownBy(() -> GatewayServer.start(Map.of("PORT", "0", "UPSTREAM_URL", "ftp://x"), null))
                .hasMessageContaining("UPSTREAM_URL must be an http(s) URL");
        assertThatThrownBy(() -> GatewayServer.start(Map.of("PORT", "seventy"), null))
                .hasMessageContaining("PORT must be a number");
    }

    @Test
    @DisplayName("key-sha256 holds a key's digest instead of the key; both at once, or bad hex, is an error")
    void hashedKeys() throws Exception {
        String hex = java.util.HexFormat.of().formatHex(GatewayConfig.sha256("sk-alpha-123"));
        GatewayConfig config = parse(VALID.replace("key: sk-alpha-123", "key-sha256: " + hex.toUpperCase()));
        assertThat(config.keys().get(0).sha256()).isEqualTo(GatewayConfig.sha256("sk-alpha-123"));

        assertThatThrownBy(() -> parse(VALID.replace("key: sk-alpha-123", "key: sk-alpha-123, key-sha256: " + hex)))
                .hasMessageContaining("keys[0]: set key or key-sha256, not both")
                .hasMessageNotContaining("sk-alpha-123");
        assertThatThrownBy(() -> parse(VALID.replace("key: sk-alpha-123", "key-sha256: abc")))
                .hasMessageContaining("keys[0].key-sha256: must be 64 hex digits");
    }

    @Test
    @DisplayName("${NAME} in a value is the environment's variable; ${NAME:-default} has a default; unset is an error")
    void environmentVariables() throws Exception {
        String yaml =
                VALID.replace("key: sk-alpha-123", "key: '${ALPHA_KEY}'").replace("rpm: 500", "rpm: '${RPM:-700}'");
        GatewayConfig config = GatewayConfig.parse(
                new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)),
                "test.yaml",
                Map.of("ALPHA_KEY", "sk-env:#[x]{y}"));
        assertThat(config.keys().get(0).sha256()).isEqualTo(GatewayConfig.sha256("sk-env:#[x]{y}"));
        assertThat(config.models().get("gpt-4o").rpm()).isEqualTo(700);

        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keys[0].key: the environment variable ALPHA_KEY is not set");
    }

    @Test
    @DisplayName("every error of a file is reported at once, unknown entries included, and no key is printed")
    void everyErrorAtOnce() {
        String yaml = VALID.replace("tier: basic }", "tier: gold }")
                        .replace("max-concurrent: 3", "max-concurrent: 0")
                        .replace("rpm: 500", "rpm: 0")
                        .replace("models:", "extra: 1\nmodels:")
                + "limits:\n  max-body-bytes: 0\n  slot-lease-secs: 5\n";
        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("test.yaml: 6 errors:")
                .hasMessageContaining("(top level): unknown entry 'extra'")
                .hasMessageContaining("limits: unknown entry 'slot-lease-secs'")
                .hasMessageContaining("tiers.basic.max-concurrent: must be at least 1")
                .hasMessageContaining("keys[0].tier: 'gold' is not one of the tiers [basic]")
                .hasMessageContaining("models.gpt-4o.rpm: must be at least 1")
                .hasMessageContaining("limits.max-body-bytes: must be at least 1")
                .hasMessageNotContaining("sk-alpha-123");
    }

    @Test
    @DisplayName("a \"*\" entry under models: is the cap of every model not listed, and nothing is warned")
    void anyModelIsTheDefaultCap() throws Exception {
        GatewayConfig config = parse(VALID + "  \"*\": { rpm: 50, tpm: 9000 }\n");

        assertThat(config.capOf("gpt-4o").budget().name()).isEqualTo("model:gpt-4o");
        GatewayConfig.ModelCap other = config.capOf("gpt-unlisted");
        assertThat(other.model()).isEqualTo("*");
        assertThat(other.budget().name()).isEqualTo("model:*");
        assertThat(other.budget().windows())
                .extracting(w -> w.name() + "=" + w.limit())
                .containsExactly("rpm=50", "tpm=9000");
        assertThat(config.capOf("another-model")).isSameAs(other); // one cap that they share
        assertThat(config.uncappedWarning()).isNull();
        assertThat(GatewayServer.caps(config))
                .isEqualTo("gpt-4o 500 rpm 30000 tpm; every other model: 50 rpm 9000 tpm shared (\"*\")");

        assertThatThrownBy(() -> parse(VALID + "  \"*\": { tpm: 0 }\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models.*.tpm: must be at least 1");
    }

    @Test
    @DisplayName("without \"*\" a model not listed has no cap, and the warning names the models that have one")
    void withoutAnyModelTheOthersAreUncapped() throws Exception {
        GatewayConfig config = parse(VALID);

        assertThat(config.capOf("gpt-unlisted")).isNull();
        assertThat(config.uncappedWarning())
                .startsWith("Only gpt-4o has an upstream cap; requests for any other model reach the upstream")
                .contains("Add a \"*\" entry under models:");
        assertThat(GatewayServer.caps(config))
                .isEqualTo("gpt-4o 500 rpm 30000 tpm; every other model: no upstream cap");

        GatewayConfig none = parse(VALID.substring(0, VALID.indexOf("models:")));
        assertThat(none.uncappedWarning()).startsWith("No model has an upstream cap (models: is empty)");
        // the built-in configuration caps every model it does not list with "*"
        assertThat(GatewayConfig.load(null, Map.of()).uncappedWarning()).isNull();
    }

    @Test
    @DisplayName("lease: auto leases a model's cap to each gateway (not the tiers' shares); another value is refused")
    void leasedCaps() throws Exception {
        GatewayConfig leased = parse(
                VALID.replace("gpt-4o: { rpm: 500, tpm: 30000 }", "gpt-4o: { rpm: 500, tpm: 30000, lease: auto }"));
        assertThat(leased.capOf("gpt-4o").budget().leasing()).isEqualTo(dev.ratelimit.api.Leasing.auto());
        assertThat(parse(VALID).capOf("gpt-4o").budget().leasing()).isNull();
        assertThatThrownBy(() -> parse(VALID.replace(
                        "gpt-4o: { rpm: 500, tpm: 30000 }", "gpt-4o: { rpm: 500, tpm: 30000, lease: sometimes }")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models.gpt-4o.lease: must be auto or off, was 'sometimes'");
        assertThatThrownBy(() -> parse(VALID.replace(
                        "gpt-4o: { rpm: 500, tpm: 30000 }",
                        "gpt-4o: { batch-tokens: 90000000 tokens/1d, lease: auto }")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models.gpt-4o.lease: leases rpm and tpm; set one");
    }
}
