package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * {@link HeaderFamily#ANTHROPIC}: {@code anthropic-ratelimit-<unit>-limit}, {@code -remaining} and
 * {@code -reset} (an RFC 3339 time) for the request and token windows reported, the token window
 * under each of Anthropic's three token names, and the exact delay.
 */
final class AnthropicHeaders extends ProviderFamilyHeaders {

    private static final List<String> REQUEST_UNITS = List.of("requests");
    private static final List<String> TOKEN_UNITS = List.of("tokens", "input-tokens", "output-tokens");

    private final Clock clock;

    AnthropicHeaders(Clock clock) {
        this.clock = clock;
    }

    @Override
    public void counts(List<ReportedWindow> reported, BiConsumer<String, String> headers) {
        Instant now = clock.instant();
        for (ReportedWindow window : reported) {
            Window.Unit unit = window.window().unit();
            if (!unit.isRequests() && !unit.equals(Window.Unit.TOKENS)) {
                continue; // Anthropic's family names requests and tokens only
            }
            String reset = resetTime(now, window.reset());
            for (String family : unit.isRequests() ? REQUEST_UNITS : TOKEN_UNITS) {
                headers.accept("anthropic-ratelimit-" + family + "-limit", Long.toString(window.limit()));
                headers.accept("anthropic-ratelimit-" + family + "-remaining", Long.toString(window.remaining()));
                headers.accept("anthropic-ratelimit-" + family + "-reset", reset);
            }
        }
    }

    /** {@code now + reset} as an RFC 3339 time in UTC, rounded up to the whole second. */
    static String resetTime(Instant now, Duration reset) {
        Instant at = now.plus(reset);
        Instant whole = at.truncatedTo(ChronoUnit.SECONDS);
        return (whole.equals(at) ? whole : whole.plusSeconds(1)).toString();
    }
}
