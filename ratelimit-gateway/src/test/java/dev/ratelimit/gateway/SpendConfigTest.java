package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.admission.Charge;
import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.TokenUsage;
import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The money sections of the configuration: prices, teams, organisations, per-model limits, shares. */
class SpendConfigTest {

    private static final String VALID = """
            keys:
              - { key: sk-alice-123, tenant: alice, tier: pro, team: research }
              - { key: sk-alice-456, tenant: alice, tier: pro, team: research }
              - { key: sk-free-123, tenant: freddy, tier: free }
            orgs:
              acme: { windows: { spend-month: $5000/30d@1h } }
            teams:
              research:
                org: acme
                windows: { spend-month: $500/30d@1h }
                models: { gpt-4o: { spend-day: $20/1d@1m } }
            tiers:
              free: { max-concurrent: 2, windows: { minute: 5/1m } }
              pro:
                max-concurrent: 10
                windows: { minute: 60/1m, spend-day: $5/1d@1m }
                models: { gpt-4o: { minute: 10/1m, spend-day: $2/1d@1m } }
            models:
              gpt-4o: { rpm: 500, tpm: 300000, shares: { free: 20%, pro: 50% } }
              "*": { rpm: 100 }
            prices:
              gpt-4o: { input: 2.50, cached-input: 1.25, output: 10.00 }
              claude-sonnet-4-5*: { input: 3, cached-input: 0.30, cache-write: 3.75, output: 15 }
            """;

    private static GatewayConfig parse(String yaml) throws Exception {
        return GatewayConfig.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "test.yaml");
    }

    @Test
    @DisplayName("prices, levels, per-model limits and shares are read into one charge per request")
    void valid() throws Exception {
        GatewayConfig config = parse(VALID);
        GatewayConfig.ApiKey alice = config.keys().get(0);
        assertThat(alice.team().name()).isEqualTo("research");
        assertThat(alice.team().org().name()).isEqualTo("acme");
        assertThat(alice.team().budget().windows())
                .extracting(Window::name, Window::limit, Window::unit)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("spend-month", 500_000_000L, Window.Unit.USD_MICROS));

        Charge charge = Charge.of(config, new Account(alice.tenant(), alice.tier(), alice.team()), "gpt-4o");
        assertThat(charge.levels())
                .extracting(Charge.Level::kind, level -> level.budget().name())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("team", "team:research"),
                        org.assertj.core.groups.Tuple.tuple("org", "org:acme"),
                        org.assertj.core.groups.Tuple.tuple("tier-model", "tenant:alice/model:gpt-4o"),
                        org.assertj.core.groups.Tuple.tuple("team-model", "team:research/model:gpt-4o"),
                        org.assertj.core.groups.Tuple.tuple("upstream", "model:gpt-4o"),
                        org.assertj.core.groups.Tuple.tuple("share", "model:gpt-4o/share:pro"));
        assertThat(charge.level("model:gpt-4o/share:pro").budget().windows())
                .extracting(Window::limit)
                .as("half the cap's rpm and tpm")
                .containsExactly(250L, 150_000L);
        // $2.50 in, $10 out per million: 1,000 prompt tokens and at most 500 out cost at most $0.0075
        assertThat(charge.request(1_000, 500).amounts().get(Window.Unit.USD_MICROS))
                .isEqualTo(7_500);
        assertThat(charge.request(1_000, 500).amounts().get(Window.Unit.TOKENS)).isEqualTo(1_500);
        // 600 fresh, 400 cached at $1.25, 300 out: 1,500 + 500 + 3,000 micro-dollars
        assertThat(charge.request(0, 0).actual(new TokenUsage(600, 400, 0, 300)).get(Window.Unit.USD_MICROS))
                .isEqualTo(5_000);
        assertThat(charge.request(0, 0).unpricedSpend(alice.tier().tier())).isNull();

        Charge claude = Charge.of(
                config, new Account(alice.tenant(), alice.tier(), alice.team()), "claude-sonnet-4-5-20250929");
        assertThat(claude.price().cacheWrite()).isEqualByComparingTo(new BigDecimal("3.75"));
        Charge unpriced = Charge.of(config, new Account(alice.tenant(), alice.tier(), alice.team()), "o3");
        assertThat(unpriced.request(0, 0).unpricedSpend(alice.tier().tier()))
                .extracting(Window::name)
                .isEqualTo("spend-day");
        GatewayConfig.ApiKey freddy = config.keys().get(2);
        assertThat(Charge.of(config, new Account(freddy.tenant(), freddy.tier(), null), "o3")
                        .request(0, 0)
                        .unpricedSpend(freddy.tier().tier()))
                .as("no spend window applies to a free key")
                .isNull();
        assertThat(config.warnings())
                .as("every model capped, every listed model priced")
                .isEmpty();
    }

    @Test
    @DisplayName("batch prices: batch-input and batch-output where an entry gives them, else half the online price;"
            + " cache reads and writes at half theirs")
    void batchPrices() throws Exception {
        GatewayConfig config = parse(VALID.replace(
                "cached-input: 1.25, output: 10.00 }", "cached-input: 1.25, output: 10.00, batch-output: 6 }"));
        ModelPrice gpt = config.spending().batchPrices().priceOf("gpt-4o");
        assertThat(gpt.input()).isEqualByComparingTo("1.25");
        assertThat(gpt.cachedInput()).isEqualByComparingTo("0.625");
        assertThat(gpt.output()).isEqualByComparingTo("6");
        ModelPrice claude = config.spending().batchPrices().priceOf("claude-sonnet-4-5-20250929");
        assertThat(claude.input()).isEqualByComparingTo("1.5");
        assertThat(claude.cachedInput()).isEqualByComparingTo("0.15");
        assertThat(claude.cacheWrite()).isEqualByComparingTo("1.875");
        assertThat(claude.output()).isEqualByComparingTo("7.5");
        assertThat(config.spending().batchPrices().priceOf("o3")).isNull();
        assertThat(config.spending().prices().priceOf("gpt-4o").output())
                .as("the online price stays")
                .isEqualByComparingTo("10.00");

        assertThatThrownBy(() -> parse(VALID.replace("output: 15 }", "output: 15, batch-input: -1 }")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prices.claude-sonnet-4-5*.batch-input: must not be negative, was -1");
    }

    @Test
    @DisplayName("a model's batch-tokens is a token window of its own budget; another unit is an error naming it")
    void batchTokens() throws Exception {
        GatewayConfig config = parse(VALID.replace(
                "\"*\": { rpm: 100 }", "\"*\": { rpm: 100 }\n  o3: { batch-tokens: 90000000 tokens/1d }"));
        GatewayConfig.ModelCap o3 = config.capOf("o3");
        assertThat(o3.budget()).as("no rpm, no tpm: no online cap").isNull();
        assertThat(o3.batchTokens().name()).isEqualTo("model:o3/batch-tokens");
        assertThat(o3.batchTokens().windows())
                .extracting(Window::name, Window::limit, Window::unit)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("batch-tokens", 90_000_000L, Window.Unit.TOKENS));
        assertThat(config.capOf("gpt-4o").batchTokens()).isNull();
        assertThatThrownBy(() -> parse(VALID.replace("\"*\": { rpm: 100 }", "\"*\": { rpm: 100, batch-tokens: 5/1m }")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("models.*.batch-tokens: a token window");
    }

    @Test
    @DisplayName("every error of the money sections is reported at once, each naming its entry")
    void errors() {
        String bad = VALID.replace("org: acme", "org: umbrella")
                .replace(
                        "team: research }\n  - { key: sk-alice-456, tenant: alice, tier: pro, team: research }",
                        "team: research }\n  - { key: sk-alice-456, tenant: alice, tier: pro, team: design }")
                .replace("free: 20%", "free: 120%")
                .replace("cached-input: 1.25, output: 10.00", "cached-input: 1.25")
                .replace("spend-day: $20/1d@1m", "spend-day: 20 dollars/1d");
        assertThatThrownBy(() -> parse(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("teams.research.org: 'umbrella' is not one of the orgs [acme]")
                .hasMessageContaining("keys[1].team: tenant 'alice' is in team 'research' by an earlier key")
                .hasMessageContaining("models.gpt-4o.shares.free: a share from 1% to 100%, was '120%'")
                .hasMessageContaining("prices.gpt-4o")
                .hasMessageContaining("teams.research.models.gpt-4o");
    }

    @Test
    @DisplayName("a share names a tier, a team names a known team")
    void unknownNames() {
        assertThatThrownBy(() -> parse(VALID.replace("pro: 50%", "gold: 50%")))
                .hasMessageContaining("models.gpt-4o.shares.gold: not one of the tiers [free, pro]");
        assertThatThrownBy(() -> parse(VALID.replace("tier: free }", "tier: free, team: nobody }")))
                .hasMessageContaining("keys[2].team: 'nobody' is not one of the teams [research]");
    }

    @Test
    @DisplayName("a model listed under models: without a price is named in a warning where spend windows apply")
    void unpricedWarning() throws Exception {
        GatewayConfig config =
                parse(VALID.replace("models:\n  gpt-4o: { rpm", "models:\n  o3: { rpm: 10 }\n  gpt-4o: { rpm"));
        assertThat(config.warnings())
                .filteredOn(warning -> warning.contains("price"))
                .singleElement()
                .asString()
                .contains("o3 has no price", "refused wherever a spend window applies");
        assertThat(config.spending().unpriced(config.models().keySet())).containsExactly("o3");
    }
}
