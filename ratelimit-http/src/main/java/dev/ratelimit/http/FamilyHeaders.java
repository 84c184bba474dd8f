package dev.ratelimit.http;

import dev.ratelimit.api.Tier;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * How one {@link HeaderFamily} renders a decision, in the manner of Micrometer's {@code
 * NamingConvention}: {@link RateLimitResponses} decides what is reported (the deciding window or
 * each unit's tightest, the delay, the tier's policy) and asks each family that is on to write it in
 * its own names. Every method writes nothing by default.
 */
interface FamilyHeaders {

    /**
     * Writes the tier's windows, on every answer.
     *
     * @param tier the caller's tier, its shadow windows included
     * @param headers receives each header
     */
    default void policy(Tier tier, BiConsumer<String, String> headers) {}

    /**
     * Writes the deciding window's count: the window of a decision, or {@code concurrent} for a
     * concurrency cap.
     *
     * @param limit its limit
     * @param remaining what is left of it
     * @param window its name
     * @param headers receives each header
     */
    default void deciding(long limit, long remaining, String window, BiConsumer<String, String> headers) {}

    /**
     * Writes the reported windows' counts.
     *
     * @param reported the windows, never empty
     * @param headers receives each header
     */
    default void counts(List<ReportedWindow> reported, BiConsumer<String, String> headers) {}

    /**
     * Writes what a refusal adds beyond {@code Retry-After}.
     *
     * @param window the name of what tripped: a window or {@code concurrent}
     * @param headers receives each header
     */
    default void refused(String window, BiConsumer<String, String> headers) {}

    /**
     * Tells whether a refusal's delay is also written to the millisecond ({@code retry-after-ms}),
     * as the SDKs of OpenAI and Anthropic read it.
     *
     * @return whether the family reads the exact delay
     */
    default boolean exactDelay() {
        return false;
    }

    /**
     * Tells whether the family carries {@link RateLimitResponses#DEGRADED} and {@link
     * RateLimitResponses#SHADOW}.
     *
     * @return whether it does
     */
    default boolean namesUncheckedAndShadowWindows() {
        return false;
    }
}
