package dev.ratelimit.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiTypesTest {

    private static final Window MINUTE = Window.of(5, Duration.ofMinutes(1));

    @Test
    @DisplayName("retryAfterSeconds is 0 when allowed, else rounded up and at least 1")
    void retryAfterSeconds() {
        assertThat(Decision.allow(MINUTE, 4, Duration.ofSeconds(60)).retryAfterSeconds())
                .isZero();
        assertThat(Decision.reject(MINUTE, Duration.ofMillis(1)).retryAfterSeconds())
                .isEqualTo(1);
        assertThat(Decision.reject(MINUTE, Duration.ZERO).retryAfterSeconds()).isEqualTo(1);
        assertThat(Decision.reject(MINUTE, Duration.ofMillis(1_000)).retryAfterSeconds())
                .isEqualTo(1);
        assertThat(Decision.reject(MINUTE, Duration.ofMillis(1_001)).retryAfterSeconds())
                .isEqualTo(2);
        assertThat(Decision.reject(MINUTE, Duration.ofMillis(59_999)).retryAfterSeconds())
                .isEqualTo(60);
    }

    @Test
    @DisplayName("decisions refuse contradictory numbers")
    void decisionInvariants() {
        assertThatThrownBy(() ->
                        new Decision(false, 5, 1, Duration.ZERO, MINUTE, Duration.ZERO, false, null, false, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("remaining");
        assertThatThrownBy(() ->
                        new Decision(true, 5, 6, Duration.ZERO, MINUTE, Duration.ZERO, false, null, false, List.of()))
                .hasMessageContaining("remaining");
        assertThatThrownBy(() -> new Decision(
                        true, 5, 1, Duration.ofSeconds(1), MINUTE, Duration.ZERO, false, null, false, List.of()))
                .hasMessageContaining("retryAfter");
        assertThatThrownBy(() ->
                        new Decision(false, 5, 0, Duration.ZERO, MINUTE, Duration.ZERO, true, null, false, List.of()))
                .hasMessageContaining("degraded");
        assertThatThrownBy(() ->
                        new Decision(true, 4, 1, Duration.ZERO, MINUTE, Duration.ZERO, false, null, false, List.of()))
                .hasMessageContaining("limit");
        assertThat(Decision.degraded(MINUTE).remaining()).isEqualTo(5);
        Decision tooLarge =
                new Decision(false, 5, 0, Duration.ZERO, MINUTE, Duration.ZERO, false, null, true, List.of());
        assertThat(tooLarge.retryAfterSeconds()).isZero();
    }

    @Test
    @DisplayName("token windows hold limits beyond int, mix with request windows in a tier, and name themselves")
    void tokenWindows() {
        Window tokens = Window.tokens(1_000_000_000_000L, Duration.ofDays(1));
        assertThat(tokens.name()).isEqualTo("tokens-day");
        assertThat(tokens.isTokens()).isTrue();
        assertThat(tokens.limit()).isEqualTo(1_000_000_000_000L);
        assertThat(Window.of(5, Duration.ofMinutes(1)).unit()).isEqualTo(Window.Unit.REQUESTS);
        Tier mixed = Tier.of(
                "free",
                Window.of(5, Duration.ofMinutes(1)),
                Window.of(100, Duration.ofDays(1)),
                Window.tokens(10_000, Duration.ofMinutes(1)),
                Window.tokens(200_000, Duration.ofDays(1)));
        assertThat(mixed.windows()).hasSize(4);
        assertThatThrownBy(() -> Tier.of(
                        "t",
                        Window.tokens("a", 5, Duration.ofMinutes(1)),
                        Window.tokens("b", 6, Duration.ofMinutes(1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tokens over the same length");
        assertThatThrownBy(() -> Window.tokens("t", 0, Duration.ofMinutes(1))).hasMessageContaining("limit");
    }

    @Test
    @DisplayName("a precision is a whole number of seconds shorter than the window, and bounded in steps")
    void precision() {
        Window day = Window.of(100_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
        assertThat(day.isExact()).isFalse();
        assertThat(day.precisionMillis()).isEqualTo(60_000);
        assertThat(day.withPrecision(Duration.ZERO).isExact()).isTrue();
        assertThatThrownBy(() -> Window.of(5, Duration.ofMinutes(1)).withPrecision(Duration.ofMinutes(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("precision");
        assertThatThrownBy(() -> Window.of(5, Duration.ofMinutes(1)).withPrecision(Duration.ofMillis(500)))
                .hasMessageContaining("precision");
        assertThatThrownBy(() -> Window.of(5, Duration.ofDays(7)).withPrecision(Duration.ofSeconds(1)))
                .hasMessageContaining("steps");
    }

    @Test
    @DisplayName("tier files read token windows and precisions, and name the bad entry")
    void tierFileTokens() {
        Properties properties = new Properties();
        properties.setProperty("tier.free.minute", "5/1m");
        properties.setProperty("tier.free.tokens-minute", "10000 tokens/1m");
        properties.setProperty("tier.free.day", "100000/1d@1m");
        properties.setProperty("tier.free.tokens-day", "1000000000000 tokens / 1d @ 1m");
        TierPolicy policy = TierPolicy.fromProperties(properties);
        assertThat(policy.resolve("free").windows())
                .containsExactly(
                        new Window("minute", 5, Duration.ofMinutes(1)),
                        Window.tokens("tokens-minute", 10_000, Duration.ofMinutes(1)),
                        new Window("day", 100_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1)),
                        Window.tokens("tokens-day", 1_000_000_000_000L, Duration.ofDays(1))
                                .withPrecision(Duration.ofMinutes(1)));
        properties.setProperty("tier.free.week", "5/1w@1w");
        assertThatThrownBy(() -> TierPolicy.fromProperties(properties))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tier.free.week")
                .hasMessageContaining("precision");
        assertThat(TierPolicy.parseWindow("t", "7 requests/1h")).isEqualTo(new Window("t", 7, Duration.ofHours(1)));
    }

    @Test
    @DisplayName("' shadow' after a window puts it in shadow mode, after its step and failure policy; a shadow twin"
            + " of an enforced window is a window of its own, and a shadow refusal names a shadow window only")
    void shadowWindows() {
        Window trial = TierPolicy.parseWindow("spend", "$500/month@calendar(America/New_York) fail-closed shadow");
        assertThat(trial.inShadow()).isTrue();
        assertThat(trial.failurePolicy()).isEqualTo(FailurePolicy.CLOSED);
        assertThat(trial.isCalendar()).isTrue();
        assertThat(TierPolicy.parseWindow("m", "5/1m shadow"))
                .isEqualTo(new Window("m", 5, Duration.ofMinutes(1)).withMode(Window.Mode.SHADOW));
        assertThat(TierPolicy.parseWindow("m", "5/1m@10s SHADOW").precision()).isEqualTo(Duration.ofSeconds(10));
        assertThat(TierPolicy.parseWindow("m", "5/1m").mode()).isEqualTo(Window.Mode.ENFORCE);
        assertThatThrownBy(() -> TierPolicy.parseWindow("m", "5/1m shadowy"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("' shadow'");
        Window enforced = new Window("minute", 5, Duration.ofMinutes(1));
        Window shadow = new Window("minute-trial", 2, Duration.ofMinutes(1)).withMode(Window.Mode.SHADOW);
        assertThat(Tier.of("t", enforced, shadow).windows()).containsExactly(enforced, shadow);
        assertThatThrownBy(() ->
                        Tier.of("t", shadow, shadow.withMode(Window.Mode.SHADOW).withPrecision(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("in shadow twice");
        assertThatThrownBy(() -> new Decision.ShadowRefusal(enforced, null, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("window must be a shadow window");
        assertThatThrownBy(() -> Decision.reject(enforced, Duration.ofSeconds(1))
                        .withShadowRefusals(List.of(new Decision.ShadowRefusal(shadow, null, false))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only an allowed decision has shadow refusals");
        assertThatThrownBy(() -> enforced.withMode(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mode");
    }

    @Test
    @DisplayName("windows are named after their length and validated with the argument named")
    void windows() {
        assertThat(Window.of(1, Duration.ofSeconds(1)).name()).isEqualTo("second");
        assertThat(MINUTE.name()).isEqualTo("minute");
        assertThat(Window.of(1, Duration.ofHours(1)).name()).isEqualTo("hour");
        assertThat(Window.of(1, Duration.ofDays(1)).name()).isEqualTo("day");
        assertThat(Window.of(1, Duration.ofSeconds(90)).name()).isEqualTo("90s");
        assertThatThrownBy(() -> Window.of(0, Duration.ofMinutes(1))).hasMessageContaining("limit");
        assertThatThrownBy(() -> Window.of(1, Duration.ofMillis(999))).hasMessageContaining("length");
        assertThatThrownBy(() -> Window.of(1, Duration.ofMillis(1_500))).hasMessageContaining("whole number");
        assertThatThrownBy(() -> Window.of(1, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("length");
        assertThatThrownBy(() -> new Window(" ", 1, Duration.ofMinutes(1))).hasMessageContaining("name");
    }

    @Test
    @DisplayName("tiers need windows of distinct lengths and names")
    void tiers() {
        assertThatThrownBy(() -> new Tier("t", List.of())).hasMessageContaining("windows");
        assertThatThrownBy(() -> Tier.of("t", MINUTE, new Window("other", 3, Duration.ofMinutes(1))))
                .hasMessageContaining("same length");
        assertThatThrownBy(() -> Tier.of("t", MINUTE, new Window("minute", 3, Duration.ofHours(1))))
                .hasMessageContaining("same name");
    }

    @Test
    @DisplayName("the default policy has free, pro and enterprise, and falls back to free")
    void defaultPolicy() {
        TierPolicy policy = TierPolicy.defaults();
        assertThat(policy.resolve("free").windows())
                .containsExactly(
                        new Window("minute", 5, Duration.ofSeconds(60)),
                        new Window("day", 100, Duration.ofSeconds(86_400)));
        assertThat(policy.resolve("pro").windows()).extracting(Window::limit).containsExactly(60L, 5_000L);
        assertThat(policy.resolve("enterprise").windows())
                .extracting(Window::limit)
                .containsExactly(600L, 100_000L);
        assertThat(policy.resolve(null).name()).isEqualTo("free");
        assertThat(policy.resolve("platinum").name()).isEqualTo("free");
        assertThat(policy.resolve("platinum").name()).isEqualTo("free");
        assertThat(policy.tiers()).containsOnlyKeys("free", "pro", "enterprise");
    }

    @Test
    @DisplayName("a policy reads from properties, with every error naming the bad entry")
    void policyFromProperties() throws IOException {
        TierPolicy policy = TierPolicy.fromProperties(properties("""
                default-tier = basic
                tier.basic.minute = 10/60s
                tier.basic.day = 1000 per 1d
                tier.gold.hour = 100/PT1H
                """));
        assertThat(policy.defaultTier().name()).isEqualTo("basic");
        assertThat(policy.resolve("basic").windows())
                .containsExactly(
                        new Window("minute", 10, Duration.ofMinutes(1)), new Window("day", 1_000, Duration.ofDays(1)));
        assertThat(policy.resolve("gold").windows()).containsExactly(new Window("hour", 100, Duration.ofHours(1)));

        assertThatThrownBy(() -> TierPolicy.fromProperties(properties("tier.free.minute = five/60s")))
                .hasMessageContaining("'tier.free.minute'");
        assertThatThrownBy(() -> TierPolicy.fromProperties(properties("tier.free.minute = 0/60s")))
                .hasMessageContaining("'tier.free.minute'")
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> TierPolicy.fromProperties(properties("tier.free.minute = 5/60x")))
                .hasMessageContaining("'tier.free.minute'")
                .hasMessageContaining("60x");
        assertThatThrownBy(() -> TierPolicy.fromProperties(properties("tiers.free.minute = 5/60s")))
                .hasMessageContaining("'tiers.free.minute'");
        assertThatThrownBy(
                        () -> TierPolicy.fromProperties(properties("tier.free.minute = 5/60s\ntier.free.other = 6/1m")))
                .hasMessageContaining("Tier 'free'")
                .hasMessageContaining("same length");
        assertThatThrownBy(() -> TierPolicy.fromProperties(properties("tier.free.minute = 5/60s\ndefault-tier = x")))
                .hasMessageContaining("'default-tier'");
    }

    @Test
    @DisplayName("a policy loads from a file and names the file in errors")
    void policyFromFile(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("tiers.properties");
        Files.writeString(file, "tier.free.minute = 3/1m\n");
        assertThat(TierPolicy.load(file).resolve("anything").windows().get(0).limit())
                .isEqualTo(3);
        Files.writeString(file, "tier.free.minute = 3/1q\n");
        assertThatThrownBy(() -> TierPolicy.load(file)).hasMessageContaining(file.toString());
    }

    private static Properties properties(String text) throws IOException {
        Properties properties = new Properties();
        properties.load(new StringReader(text));
        return properties;
    }
}
