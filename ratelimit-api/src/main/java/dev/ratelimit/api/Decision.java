package dev.ratelimit.api;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one check or reservation.
 *
 * <p>{@link #window()} is the window that decided: on rejection the window that rejected, on
 * success the request window with the least remaining (ties go to the shortest; a tier of token
 * windows only names its token window with the least remaining). {@code remaining} counts that
 * window's budget after this request: 9, 8, &hellip; 0 on successive allows of a 10-limit window,
 * and 0 on rejection. {@link #usage()} holds every window the store looked at, requests and tokens,
 * the user's and shared budgets', for headers that report more than one window.
 *
 * <p>A rejected decision's usage lists only the windows that were evaluated. Windows are evaluated
 * in order (each budget's shortest first), and once one rejects, no later window longer than it is
 * looked at (it cannot change the answer, and the store spends nothing on it): those windows are
 * <em>absent</em> from {@code usage}, their state unknown, never reported as a made-up 0 or a stale
 * figure. A header writer leaves a window it finds no usage for out, or says it is unknown. A
 * rejection replayed from the limiter's cache of rejections lists the rejecting window only.
 *
 * @param allowed whether the request may proceed
 * @param limit the limit of the deciding window
 * @param remaining what is left of the deciding window's unit after this request; 0 on rejection
 * @param retryAfter on rejection, the time until enough of the rejecting window's entries have left
 *     it for the same request to fit (when a retry can first succeed); {@link Duration#ZERO} when
 *     allowed, and when the request can never fit ({@link #tooLarge()})
 * @param window the deciding window
 * @param resetAfter the time until the deciding window's budget grows again: on rejection {@code
 *     retryAfter}, when the same request would fit; otherwise the time until the oldest entry
 *     counted in that window leaves it, {@link Duration#ZERO} when the window holds nothing
 * @param degraded {@code true} when the store could not be consulted and the request was let
 *     through because the limiter fails open; such decisions count nothing, report the full budget
 *     as remaining and a zero {@code resetAfter}
 * @param budget {@code null} when the deciding window is the user's own; otherwise the name of the
 *     {@link SharedBudget} it belongs to
 * @param tooLarge {@code true} when the request was rejected because it alone asks for more of the
 *     deciding window's unit (tokens, spend) than the window's limit: no retry can succeed
 * @param usage the state of each window the store looked at after this request, in evaluation
 *     order (each budget's windows shortest first); on rejection without the windows not evaluated
 *     (longer than the rejecting one); empty for degraded and disabled decisions
 * @param unchecked the windows that let the request through unchecked while the store could not
 *     decide ({@link FailurePolicy#OPEN}), for a {@code X-RateLimit-Degraded} header naming them; empty
 *     when every window was checked, by the store or against a local share ({@link
 *     FailurePolicy#LOCAL})
 * @param shadowRefusals the {@linkplain Window#inShadow() shadow window} that would have refused
 *     this allowed request had the shadow windows been enforced: the first, in evaluation order, to
 *     find it does not fit, as an enforced window decides (the shadow windows are evaluated as one
 *     more all-or-nothing set, and nothing is recorded in any of them when one refuses); for a
 *     {@code X-RateLimit-Shadow} header and a count of whom a limit would stop. Empty when none
 *     would, and always on a rejected decision. Shadow windows are never in {@code usage}, and decide
 *     only when the user has no enforced window: then the shortest of them is named, its whole
 *     limit remaining, as nothing of the user's was enforced
 */
public record Decision(
        boolean allowed,
        long limit,
        long remaining,
        Duration retryAfter,
        Window window,
        Duration resetAfter,
        boolean degraded,
        @Nullable String budget,
        boolean tooLarge,
        List<Usage> usage,
        List<Window> unchecked,
        List<ShadowRefusal> shadowRefusals) {

    /**
     * Validates the components and copies the usage list.
     *
     * @param allowed whether the request may proceed
     * @param limit the limit of the deciding window
     * @param remaining what is left of the deciding window's unit after this request; 0 on rejection
     * @param retryAfter on rejection, the time until enough of the rejecting window's entries have left
     *     it for the same request to fit (when a retry can first succeed); {@link Duration#ZERO} when
     *     allowed, and when the request can never fit ({@link #tooLarge()})
     * @param window the deciding window
     * @param resetAfter the time until the deciding window's budget grows again: on rejection {@code
     *     retryAfter}, when the same request would fit; otherwise the time until the oldest entry
     *     counted in that window leaves it, {@link Duration#ZERO} when the window holds nothing
     * @param degraded {@code true} when the store could not be consulted and the request was let
     *     through because the limiter fails open; such decisions count nothing, report the full budget
     *     as remaining and a zero {@code resetAfter}
     * @param budget {@code null} when the deciding window is the user's own; otherwise the name of the
     *     {@link SharedBudget} it belongs to
     * @param tooLarge {@code true} when the request was rejected because it alone asks for more of the
     *     deciding window's unit (tokens, spend) than the window's limit: no retry can succeed
     * @param usage the state of each window the store looked at after this request, in evaluation
     *     order (each budget's windows shortest first); on rejection without the windows not evaluated
     *     (longer than the rejecting one); empty for degraded and disabled decisions
     * @param unchecked the windows that let the request through unchecked while the store could not
     *     decide ({@link FailurePolicy#OPEN}), for a {@code X-RateLimit-Degraded} header naming them; empty
     *     when every window was checked, by the store or against a local share ({@link
     *     FailurePolicy#LOCAL})
     * @param shadowRefusals the {@linkplain Window#inShadow() shadow window} that would have refused
     *     this allowed request had the shadow windows been enforced: the first, in evaluation order, to
     *     find it does not fit, as an enforced window decides (the shadow windows are evaluated as one
     *     more all-or-nothing set, and nothing is recorded in any of them when one refuses); for a
     *     {@code X-RateLimit-Shadow} header and a count of whom a limit would stop. Empty when none
     *     would, and always on a rejected decision. Shadow windows are never in {@code usage}, and decide
     *     only when the user has no enforced window: then the shortest of them is named, its whole
     *     limit remaining, as nothing of the user's was enforced
     * @throws NullPointerException if a duration, the window or the usage list is {@code null}
     * @throws IllegalArgumentException if the numbers contradict each other
     */
    public Decision {
        Checks.notNull(retryAfter, "retryAfter");
        Checks.notNull(window, "window");
        Checks.notNull(resetAfter, "resetAfter");
        usage = List.copyOf(Checks.notNull(usage, "usage"));
        unchecked = List.copyOf(Checks.notNull(unchecked, "unchecked"));
        shadowRefusals = List.copyOf(Checks.notNull(shadowRefusals, "shadowRefusals"));
        if (limit != window.limit()) {
            throw new IllegalArgumentException("limit must be the window's limit " + window.limit() + ", was " + limit);
        }
        if (remaining < 0 || remaining > limit) {
            throw new IllegalArgumentException("remaining must be between 0 and limit " + limit + ", was " + remaining);
        }
        if (retryAfter.isNegative() || resetAfter.isNegative()) {
            throw new IllegalArgumentException("retryAfter and resetAfter must not be negative");
        }
        if ((allowed || tooLarge) && !retryAfter.isZero()) {
            throw new IllegalArgumentException("an allowed or too large request has no retryAfter, was " + retryAfter);
        }
        if (!allowed && remaining != 0) {
            throw new IllegalArgumentException("a rejected decision has remaining 0, was " + remaining);
        }
        if (allowed && tooLarge) {
            throw new IllegalArgumentException("an allowed decision cannot be too large");
        }
        if (degraded && !allowed) {
            throw new IllegalArgumentException("a degraded decision is an allowed one");
        }
        if (!unchecked.isEmpty() && !degraded) {
            throw new IllegalArgumentException("only a degraded decision has unchecked windows");
        }
        if (!shadowRefusals.isEmpty() && !allowed) {
            throw new IllegalArgumentException("only an allowed decision has shadow refusals");
        }
        for (ShadowRefusal refusal : shadowRefusals) {
            Checks.notNull(refusal, "shadowRefusals element");
        }
    }

    /**
     * Creates a decision without shadow refusals.
     *
     * @param allowed whether the request may proceed
     * @param limit the limit of the deciding window
     * @param remaining what is left of the deciding window's unit after this request
     * @param retryAfter the time until a retry can first succeed, on rejection
     * @param window the deciding window
     * @param resetAfter the time until the deciding window's budget grows again
     * @param degraded whether the store could not be consulted
     * @param budget the shared budget of the deciding window, or {@code null}
     * @param tooLarge whether the request alone exceeds the deciding window's limit
     * @param usage the state of each window the store looked at
     * @param unchecked the windows let through unchecked while the store could not decide
     */
    public Decision(
            boolean allowed,
            long limit,
            long remaining,
            Duration retryAfter,
            Window window,
            Duration resetAfter,
            boolean degraded,
            @Nullable String budget,
            boolean tooLarge,
            List<Usage> usage,
            List<Window> unchecked) {
        this(
                allowed,
                limit,
                remaining,
                retryAfter,
                window,
                resetAfter,
                degraded,
                budget,
                tooLarge,
                usage,
                unchecked,
                List.of());
    }

    /**
     * Returns this decision naming {@code shadowRefusals} as the shadow windows that would have
     * refused it.
     *
     * @param shadowRefusals shadow windows, for an allowed decision
     * @return the decision with those shadow refusals
     * @throws IllegalArgumentException if this decision is a rejection and the list is not empty
     */
    public Decision withShadowRefusals(List<ShadowRefusal> shadowRefusals) {
        return new Decision(
                allowed,
                limit,
                remaining,
                retryAfter,
                window,
                resetAfter,
                degraded,
                budget,
                tooLarge,
                usage,
                unchecked,
                shadowRefusals);
    }

    /**
     * Creates a decision whose unchecked windows are, when degraded, the deciding window (as every
     * window of a limiter failing open).
     *
     * @param allowed whether the request may proceed
     * @param limit the limit of the deciding window
     * @param remaining what is left of the deciding window's unit after this request
     * @param retryAfter the time until a retry can first succeed, on rejection
     * @param window the deciding window
     * @param resetAfter the time until the deciding window's budget grows again
     * @param degraded whether the store could not be consulted
     * @param budget the shared budget of the deciding window, or {@code null}
     * @param tooLarge whether the request alone exceeds the deciding window's limit
     * @param usage the state of each window the store looked at
     */
    public Decision(
            boolean allowed,
            long limit,
            long remaining,
            Duration retryAfter,
            Window window,
            Duration resetAfter,
            boolean degraded,
            @Nullable String budget,
            boolean tooLarge,
            List<Usage> usage) {
        this(
                allowed,
                limit,
                remaining,
                retryAfter,
                window,
                resetAfter,
                degraded,
                budget,
                tooLarge,
                usage,
                degraded ? List.of(Checks.notNull(window, "window")) : List.of());
    }

    /**
     * Creates the decision of an allowed request.
     *
     * @param window the window with the least remaining
     * @param remaining left in that window after this request
     * @param resetAfter time until that window's oldest entry leaves it
     * @return the decision, with no usage list
     */
    public static Decision allow(Window window, long remaining, Duration resetAfter) {
        return new Decision(
                true, window.limit(), remaining, Duration.ZERO, window, resetAfter, false, null, false, List.of());
    }

    /**
     * Creates the decision of a rejected request.
     *
     * @param window the window that rejected
     * @param retryAfter time until a retry can first succeed
     * @return the decision, with no usage list
     */
    public static Decision reject(Window window, Duration retryAfter) {
        return new Decision(false, window.limit(), 0, retryAfter, window, retryAfter, false, null, false, List.of());
    }

    /**
     * Creates the decision of a request let through without consulting the store (fail-open).
     *
     * @param window the shortest window that applied
     * @return an allowed, degraded decision with the full budget remaining
     */
    public static Decision degraded(Window window) {
        return degraded(window, List.of(window));
    }

    /**
     * Creates the decision of a request let through while the store could not decide: the windows
     * that fail open were not checked, any others were checked against this process's share.
     *
     * @param window the shortest window that applied
     * @param unchecked the windows not checked, in the request's order; empty when every window was
     *     checked locally
     * @return an allowed, degraded decision with the full budget of {@code window} remaining
     */
    public static Decision degraded(Window window, List<Window> unchecked) {
        return new Decision(
                true,
                window.limit(),
                window.limit(),
                Duration.ZERO,
                window,
                Duration.ZERO,
                true,
                null,
                false,
                List.of(),
                unchecked);
    }

    /**
     * Returns the retry delay in whole seconds, as an HTTP {@code Retry-After} header wants it.
     *
     * @return 0 when allowed or too large; otherwise {@link #retryAfter()} rounded up to whole
     *     seconds, at least 1
     */
    public long retryAfterSeconds() {
        if (allowed || tooLarge) {
            return 0;
        }
        return Math.max(1, ceilSeconds(retryAfter));
    }

    /**
     * Returns the time until the deciding window's budget grows again in whole seconds, rounded up.
     *
     * @return {@link #resetAfter()} rounded up to whole seconds
     */
    public long resetAfterSeconds() {
        return ceilSeconds(resetAfter);
    }

    private static long ceilSeconds(Duration duration) {
        long seconds = duration.getSeconds();
        return duration.getNano() > 0 ? seconds + 1 : seconds;
    }

    /**
     * A {@linkplain Window#inShadow() shadow window} that would have refused the request had it been
     * enforced.
     *
     * @param window the shadow window
     * @param budget {@code null} for the user's own window, else the shared budget's name
     * @param tooLarge {@code true} when the request alone asks more than the window's limit, so it
     *     would have been refused for good rather than until a retry
     */
    public record ShadowRefusal(Window window, @Nullable String budget, boolean tooLarge) {

        /**
         * Validates the components.
         *
         * @param window the shadow window
         * @param budget {@code null} for the user's own window, else the shared budget's name
         * @param tooLarge {@code true} when the request alone asks more than the window's limit, so it
         *     would have been refused for good rather than until a retry
         * @throws NullPointerException if the window is {@code null}
         * @throws IllegalArgumentException if the window is not in shadow mode
         */
        public ShadowRefusal {
            Checks.notNull(window, "window");
            if (!window.inShadow()) {
                throw new IllegalArgumentException("window must be a shadow window, was " + window);
            }
        }
    }

    /**
     * The state of one window after a decision.
     *
     * @param window the window
     * @param budget {@code null} for the user's own window, else the shared budget's name
     * @param used the amount of the window's unit counted (after recording, when allowed); may
     *     exceed the limit after a reservation settled above its estimate
     * @param resetAfter the time until the oldest entry counted leaves the window; zero when empty
     */
    public record Usage(Window window, @Nullable String budget, long used, Duration resetAfter) {

        /**
         * Validates the components.
         *
         * @param window the window
         * @param budget {@code null} for the user's own window, else the shared budget's name
         * @param used the amount of the window's unit counted (after recording, when allowed); may
         *     exceed the limit after a reservation settled above its estimate
         * @param resetAfter the time until the oldest entry counted leaves the window; zero when empty
         * @throws NullPointerException if the window or duration is {@code null}
         * @throws IllegalArgumentException if {@code used} or {@code resetAfter} is negative
         */
        public Usage {
            Checks.notNull(window, "window");
            Checks.notNull(resetAfter, "resetAfter");
            if (used < 0) {
                throw new IllegalArgumentException("used must not be negative, was " + used);
            }
            if (resetAfter.isNegative()) {
                throw new IllegalArgumentException("resetAfter must not be negative, was " + resetAfter);
            }
        }

        /**
         * Returns what is left of the window's limit.
         *
         * @return {@code limit - used}, at least 0
         */
        public long remaining() {
            return Math.max(0, window.limit() - used);
        }
    }
}
