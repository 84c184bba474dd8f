package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * {@link HeaderFamily#OPENAI}: {@code x-ratelimit-limit-<unit>}, {@code -remaining-} and {@code
 * -reset-} per reported window, the exact delay, and, when {@link HeaderFamily#X_RATELIMIT} is off,
 * the name of what tripped in its lower-case style.
 */
final class OpenAiHeaders extends ProviderFamilyHeaders {

    private final boolean namesWhatTripped;

    /**
     * Creates the family.
     *
     * @param namesWhatTripped whether a refusal names what tripped ({@code x-ratelimit-window}): when
     *     no other family does
     */
    OpenAiHeaders(boolean namesWhatTripped) {
        this.namesWhatTripped = namesWhatTripped;
    }

    @Override
    public void counts(List<ReportedWindow> reported, BiConsumer<String, String> headers) {
        for (ReportedWindow window : reported) {
            Window.Unit unit = window.window().unit();
            String suffix = HeaderValues.unitSuffix(unit);
            headers.accept("x-ratelimit-limit-" + suffix, HeaderValues.amount(unit, window.limit()));
            headers.accept("x-ratelimit-remaining-" + suffix, HeaderValues.amount(unit, window.remaining()));
            headers.accept("x-ratelimit-reset-" + suffix, HeaderValues.goDuration(window.reset()));
        }
    }

    @Override
    public void refused(String window, BiConsumer<String, String> headers) {
        if (namesWhatTripped) {
            headers.accept(RateLimitResponses.OPENAI_WINDOW, HeaderValues.token(window));
        }
    }
}
