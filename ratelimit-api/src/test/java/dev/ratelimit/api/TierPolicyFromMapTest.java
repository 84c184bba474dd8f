package dev.ratelimit.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class TierPolicyFromMapTest {

    @Test
    @DisplayName("nested maps read as the properties file's entries: tokens, precision and default tier")
    void nestedMapReadsLikeTheFile() {
        Map<String, Object> free = new LinkedHashMap<>();
        free.put("minute", "5/1m");
        free.put("tokens-day", "200000 tokens/1d@1m");
        Map<String, Object> tiers = new LinkedHashMap<>();
        tiers.put("free", free);
        tiers.put("pro", Map.of("minute", "60/60s", "day", "5000 per 24h@1m"));
        Map<String, Object> entries = new LinkedHashMap<>();
        entries.put("tier", tiers);
        entries.put("default-tier", "pro");

        TierPolicy policy = TierPolicy.fromMap(entries);

        assertThat(policy.defaultTier().name()).isEqualTo("pro");
        assertThat(policy.resolve("free").windows())
                .containsExactly(
                        new Window("minute", 5, Duration.ofMinutes(1)),
                        Window.tokens("tokens-day", 200_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1)));
        assertThat(policy.resolve("pro").windows())
                .containsExactly(
                        new Window("minute", 60, Duration.ofMinutes(1)),
                        new Window("day", 5_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1)));

        Properties file = new Properties();
        file.setProperty("tier.free.minute", "5/1m");
        file.setProperty("tier.free.tokens-day", "200000 tokens/1d@1m");
        file.setProperty("tier.pro.minute", "60/60s");
        file.setProperty("tier.pro.day", "5000 per 24h@1m");
        file.setProperty("default-tier", "pro");
        TierPolicy fromFile = TierPolicy.fromProperties(file);
        assertThat(policy.tiers()).isEqualTo(fromFile.tiers());
        assertThat(policy.tiers().keySet())
                .containsExactlyElementsOf(fromFile.tiers().keySet());
    }

    @Test
    @DisplayName(
            "' fail-open', ' fail-closed' and ' fail-local' after a window set its failure policy; others are named")
    void failurePolicies() {
        TierPolicy policy = TierPolicy.fromMap(Map.of(
                "tier",
                Map.of(
                        "pro",
                        Map.of(
                                "minute", "60/1m fail-closed",
                                "tokens-minute", "10000 tokens/1m FAIL-LOCAL",
                                "spend-day", "$5/1d@1m fail-open",
                                "day", "5000/1d"))));
        assertThat(policy.resolve("pro").windows())
                .containsExactly(
                        new Window("minute", 60, Duration.ofMinutes(1)).withFailurePolicy(FailurePolicy.CLOSED),
                        Window.tokens("tokens-minute", 10_000, Duration.ofMinutes(1))
                                .withFailurePolicy(FailurePolicy.LOCAL),
                        new Window("day", 5_000, Duration.ofDays(1)),
                        Window.of("spend-day", 5_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS)
                                .withPrecision(Duration.ofMinutes(1))
                                .withFailurePolicy(FailurePolicy.OPEN));
        assertThat(TierPolicy.parseWindow("minute", "5/1m").failurePolicy()).isNull();
        assertThatThrownBy(() -> TierPolicy.parseWindow("minute", "5/1m fail-sometimes"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("minute")
                .hasMessageContaining("open, closed, local")
                .hasMessageContaining("sometimes");
    }

    @Test
    @DisplayName("flat keys, nested maps and a mix of both give the same policy, read in key order")
    void flatAndNestedKeys() {
        TierPolicy flat = TierPolicy.fromMap(Map.of("tier.gold.minute", "9/1m", "tier.basic.minute", "3/1m"));
        TierPolicy nested =
                TierPolicy.fromMap(Map.of("tier", Map.of("gold", Map.of("minute", "9/1m"), "basic.minute", "3/1m")));

        assertThat(flat.tiers()).isEqualTo(nested.tiers());
        // no free tier and no default-tier: the first tier by name, whatever the map's order
        assertThat(flat.defaultTier().name()).isEqualTo("basic");
        assertThat(nested.defaultTier().name()).isEqualTo("basic");
        assertThat(flat.tiers().keySet()).containsExactly("basic", "gold");
    }

    @Test
    @DisplayName("a malformed, unknown or invalid entry fails with the entry's key in the message")
    void errorsNameTheEntry() {
        assertThatThrownBy(() -> TierPolicy.fromMap(tier("free", "minute", "five/60s")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute' = 'five/60s'");
        assertThatThrownBy(() -> TierPolicy.fromMap(tier("free", "minute", "0/60s")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute'")
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> TierPolicy.fromMap(tier("free", "minute", "5/60x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute'")
                .hasMessageContaining("60x");
        assertThatThrownBy(() -> TierPolicy.fromMap(tier("free", "week", "5/1w@1w")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.week'")
                .hasMessageContaining("precision");
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of("tiers", Map.of("free", Map.of("minute", "5/60s")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unknown tier policy entry 'tiers.free.minute'");
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of("tier", Map.of("free", "5/60s"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unknown tier policy entry 'tier.free'");
        assertThatThrownBy(() ->
                        TierPolicy.fromMap(Map.of("tier", Map.of("free", Map.of("minute", "5/60s", "other", "6/1m")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Tier 'free'")
                .hasMessageContaining("same length");
    }

    @Test
    @DisplayName(
            "an entry without a value, with a value that is not text, or with a key that is not text is refused by name")
    void valuesAndKeysOfTheWrongKind() {
        Map<String, Object> windows = new HashMap<>();
        windows.put("minute", null);
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of("tier", Map.of("free", windows))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute' has no value")
                .hasMessageContaining("<limit>[ <unit>]/<length>[@<step>]");
        Map<String, Object> noDefault = new HashMap<>(tier("free", "minute", "5/1m"));
        noDefault.put("default-tier", null);
        assertThatThrownBy(() -> TierPolicy.fromMap(noDefault))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'default-tier' has no value");
        assertThatThrownBy(() -> TierPolicy.fromMap(tier("free", "minute", 5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute' must be text or a map, was Integer '5'");
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of("tier", Map.of("free", Map.of(7, "5/1m")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.7': a key must be text, was Integer");
    }

    @Test
    @DisplayName("an entry given twice, an undefined default tier and a map without tiers are refused")
    void policyLevelErrors() {
        assertThatThrownBy(() -> TierPolicy.fromMap(
                        Map.of("tier.free.minute", "5/1m", "tier", Map.of("free", Map.of("minute", "6/1m")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tier.free.minute' is given twice");
        Map<String, Object> unknownDefault = new HashMap<>(tier("free", "minute", "5/1m"));
        unknownDefault.put("default-tier", "gold");
        assertThatThrownBy(() -> TierPolicy.fromMap(unknownDefault))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'default-tier' names 'gold', which is not defined");
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defines no tier");
        assertThatThrownBy(() -> TierPolicy.fromMap(Map.of("tier", Map.of("free", Map.of()))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defines no tier");
        assertThatThrownBy(() -> TierPolicy.fromMap(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("entries must not be null");
    }

    private static Map<String, Object> tier(String tier, String window, Object value) {
        return Map.of("tier", Map.of(tier, Map.of(window, value)));
    }
}
