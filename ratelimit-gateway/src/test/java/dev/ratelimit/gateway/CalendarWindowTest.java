package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.GatewayConfig;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Calendar windows written in the gateway's YAML ({@code gateway-calendar.yaml}): a team's monthly
 * dollars in New York's calendar reset at local midnight of the 1st, to the millisecond, and a
 * refusal's {@code Retry-After} points there; on Redis without an injected clock (production: the
 * server's {@code TIME}) a daily request window in UTC counts the server's day.
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class CalendarWindowTest {

    private static final long DIME = 100_000; // $0.10 in micro-dollars
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    @Parameter
    Harness.Store store;

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    private void start(boolean injectClock) throws Exception {
        Path config = Path.of(
                CalendarWindowTest.class.getResource("gateway-calendar.yaml").toURI());
        harness = Harness.start(store, true, Map.of("GATEWAY_CONFIG", config.toString()), injectClock);
    }

    private static Instant newYork(int year, int month, int day, int hour, int minute, int second, int millis) {
        return LocalDateTime.of(year, month, day, hour, minute, second, millis * 1_000_000)
                .atZone(NEW_YORK)
                .toInstant();
    }

    private static String body(long maxTokens) {
        return "{\"model\":\"metered\",\"max_completion_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    }

    private static String retryAfter(HttpResponse<String> response) {
        return response.headers().firstValue("retry-after").orElseThrow();
    }

    @Test
    @DisplayName("the YAML's windows are calendar windows in the zone they name, UTC when they name none")
    void parsed() throws Exception {
        start(true);
        GatewayConfig config = harness.server.gateway().config();
        SharedBudget team =
                Objects.requireNonNull(config.spending().teams().get("research").budget());
        assertThat(team.windows())
                .containsExactly(Window.calendar(
                        "spend-month", 200_000, Window.Unit.USD_MICROS, CalendarPeriod.MONTH, NEW_YORK));
        assertThat(config.tiers().get("member").tier().windows())
                .contains(Window.calendar("tokens-day", 1_000_000, Window.Unit.TOKENS, CalendarPeriod.DAY, NEW_YORK));
        assertThat(config.tiers().get("daily").tier().windows())
                .containsExactly(
                        Window.calendar("requests-day", 2, Window.Unit.REQUESTS, CalendarPeriod.DAY, ZoneOffset.UTC));
    }

    @Test
    @DisplayName("a team's month in America/New_York: spent out on January 31st, refused until local midnight"
            + " of February 1st, where Retry-After points, and reset exactly there")
    void monthResetsAtLocalMidnight() throws Exception {
        start(true);
        harness.stub().answerByDefault(StubUpstream.usage(9, 0, 50_000)); // $0.10 a call
        harness.clock.set(newYork(2030, 1, 31, 18, 0, 0, 0));
        assertThat(harness.chat("alice-key", body(50_000)).statusCode()).isEqualTo(200);
        assertThat(harness.chat("alice-key", body(50_000)).statusCode()).isEqualTo(200);
        SharedBudget team = Objects.requireNonNull(harness.server
                .gateway()
                .config()
                .spending()
                .teams()
                .get("research")
                .budget());
        assertThat(harness.used(team, "spend-month")).isEqualTo(2 * DIME);

        HttpResponse<String> spent = harness.chat("alice-key", body(50_000));
        assertThat(spent.statusCode()).isEqualTo(429);
        assertThat(spent.body()).contains("spend-month");
        assertThat(retryAfter(spent)).as("6 hours to local midnight").isEqualTo("21600");
        JsonNode window = new ObjectMapper()
                .readTree(harness.admin("/status.json").body())
                .path("teams")
                .path(0)
                .path("windows")
                .path(0);
        assertThat(window.path("name").asText()).isEqualTo("spend-month");
        assertThat(window.path("used").asLong()).isEqualTo(2 * DIME);
        assertThat(window.path("calendar").asText())
                .as("the status page names the calendar")
                .isEqualTo("month@America/New_York");
        assertThat(window.path("resetsAt").asText())
                .as("and when it resets: New York's midnight of February 1st")
                .isEqualTo("2030-02-01T05:00:00Z");

        harness.clock.set(Instant.parse("2030-02-01T00:00:00Z")); // 19:00 on January 31st in New York
        HttpResponse<String> utcMidnight = harness.chat("alice-key", body(50_000));
        assertThat(utcMidnight.statusCode())
                .as("midnight in UTC is no boundary of a New York month")
                .isEqualTo(429);
        assertThat(retryAfter(utcMidnight)).isEqualTo("18000");

        harness.clock.set(newYork(2030, 1, 31, 23, 59, 59, 999));
        HttpResponse<String> lastMillisecond = harness.chat("alice-key", body(50_000));
        assertThat(lastMillisecond.statusCode()).isEqualTo(429);
        assertThat(retryAfter(lastMillisecond)).as("1 ms, rounded up").isEqualTo("1");

        harness.clock.set(newYork(2030, 2, 1, 0, 0, 0, 0));
        assertThat(harness.chat("alice-key", body(50_000)).statusCode())
                .as("local midnight of February 1st: January's spend has left")
                .isEqualTo(200);
        assertThat(harness.used(team, "spend-month")).isEqualTo(DIME);
    }

    @Test
    @DisplayName("without an injected clock (Redis's own TIME; the system clock in memory) a daily request window"
            + " counts the current UTC day and Retry-After points at its end")
    void serverTime() throws Exception {
        start(false);
        // a run that crosses midnight UTC meets a fresh day halfway: the second attempt cannot cross again
        for (int attempt = 0; ; attempt++) {
            long before = System.currentTimeMillis();
            assertThat(harness.chat("bob-key", body(10)).statusCode()).isEqualTo(200);
            assertThat(harness.chat("bob-key", body(10)).statusCode()).isEqualTo(200);
            HttpResponse<String> refused = harness.chat("bob-key", body(10));
            long after = System.currentTimeMillis();
            long end = CalendarPeriod.DAY.endMillis(before, ZoneOffset.UTC);
            if (end != CalendarPeriod.DAY.endMillis(after, ZoneOffset.UTC) && attempt == 0) {
                continue;
            }
            assertThat(refused.statusCode()).isEqualTo(429);
            // the test's redis-server runs on this machine: its clock is this one
            assertThat(Long.parseLong(retryAfter(refused)))
                    .isBetween((end - after) / 1000, (end - before + 999) / 1000);
            return;
        }
    }
}
