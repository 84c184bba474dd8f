package dev.ratelimit.http;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Writes the rate-limit headers of a decision and the refusals of the HTTP contract, the same for
 * every front: the servlet filter, Spring MVC and WebFlux, the gateway (OpenAI's and Anthropic's
 * APIs alike). Headers go to a {@code
 * BiConsumer<String, String>} of name and value that replaces any earlier value, such as {@code
 * response::setHeader}; a refusal's status and body come back as a {@link Refusal}.
 *
 * <pre>{@code
 * RateLimitResponses responses = RateLimitResponses.builder()
 *         .header(HeaderFamily.OPENAI, true)
 *         .openAiErrors(true)
 *         .build();
 * if (decision.allowed()) {
 *     responses.allowed(tier, decision, response::setHeader);
 * } else {
 *     Refusal refusal = responses.rejected(tier, decision, response::setHeader);
 *     // send refusal.status() and refusal.bytes() as Refusal.CONTENT_TYPE
 * }
 * }</pre>
 *
 * <h2>What is reported</h2>
 *
 * <p>By default the deciding window ({@link Decision#window()}): the window with the least remaining
 * of an allowed request, the rejecting one of a refused request. With {@link Builder#eachUnit} the
 * tightest known window of each unit, requests and tokens, of the caller's own windows (shared
 * budgets are not the caller's), as OpenAI's {@code -requests} and {@code -tokens} families expect.
 * A window the store did not evaluate is unknown: a rejected decision's {@link Decision#usage()}
 * leaves out the windows after the rejecting one, and no count of theirs is claimed; a unit is
 * reported only when all its windows are known, or when its window rejected the request (none
 * evaluated can have less left). {@code RateLimit-Policy} always lists every window of the tier.
 *
 * <p>{@code Retry-After} is never earlier than the IETF {@code RateLimit} header's {@code t}, and
 * both are rounded up, as is {@code retry-after-ms} ({@link RetryAfter}). Instances are immutable
 * and thread-safe.
 */
public final class RateLimitResponses {

    /** {@link HeaderFamily#X_RATELIMIT}'s limit of the reported window. */
    public static final String LIMIT = "X-RateLimit-Limit";

    /** {@link HeaderFamily#X_RATELIMIT}'s remaining of the reported window. */
    public static final String REMAINING = "X-RateLimit-Remaining";

    /** {@link HeaderFamily#X_RATELIMIT}'s name of the reported window. */
    public static final String WINDOW = "X-RateLimit-Window";

    /**
     * The windows that let a request through unchecked while the store could not decide, by name
     * ({@code minute, tokens-minute}): no counts are claimed, they are unknown. Windows decided
     * against the instance's local share are not named.
     */
    public static final String DEGRADED = "X-RateLimit-Degraded";

    /**
     * The header naming the shadow windows that would have refused an allowed request had they been
     * enforced ({@link Decision#shadowRefusals()}), comma-separated; absent when none would.
     */
    public static final String SHADOW = "X-RateLimit-Shadow";

    /** The IETF draft's remaining and reset per reported window. */
    public static final String RATE_LIMIT = "RateLimit";

    /** The IETF draft's list of the tier's windows. */
    public static final String RATE_LIMIT_POLICY = "RateLimit-Policy";

    /** RFC 9110's delay, in whole seconds. */
    public static final String RETRY_AFTER = "Retry-After";

    /** The delay to the millisecond, which OpenAI's SDKs read before {@code Retry-After}. */
    public static final String RETRY_AFTER_MS = "retry-after-ms";

    /** The name of the window that tripped, in {@link HeaderFamily#OPENAI}'s lower-case style. */
    public static final String OPENAI_WINDOW = "x-ratelimit-window";

    /** The window name a concurrency cap's refusal reports. */
    public static final String CONCURRENT = "concurrent";

    private static final int TOO_MANY_REQUESTS = 429;
    private static final int BAD_REQUEST = 400;
    private static final int SERVICE_UNAVAILABLE = 503;

    private final Set<HeaderFamily> on;
    private final List<FamilyHeaders> families;
    private final boolean exactDelay;
    private final boolean namesUncheckedAndShadowWindows;
    private final ErrorShape errorShape;
    private final boolean eachUnit;
    private final long unavailableRetryAfterSeconds;

    private RateLimitResponses(Builder builder) {
        EnumSet<HeaderFamily> on = EnumSet.noneOf(HeaderFamily.class);
        on.addAll(builder.families);
        this.on = Collections.unmodifiableSet(on);
        Clock clock = builder.clock;
        List<FamilyHeaders> families = new ArrayList<>(on.size());
        for (HeaderFamily family : on) {
            families.add(
                    switch (family) {
                        case X_RATELIMIT -> new XRateLimitHeaders();
                        case IETF -> new IetfHeaders();
                        case OPENAI -> new OpenAiHeaders(!on.contains(HeaderFamily.X_RATELIMIT));
                        case ANTHROPIC -> {
                            if (clock == null) {
                                throw new IllegalStateException(
                                        "HeaderFamily.ANTHROPIC writes reset times: give the builder a clock(...)");
                            }
                            yield new AnthropicHeaders(clock);
                        }
                    });
        }
        this.families = List.copyOf(families);
        this.exactDelay = families.stream().anyMatch(FamilyHeaders::exactDelay);
        this.namesUncheckedAndShadowWindows = families.stream().anyMatch(FamilyHeaders::namesUncheckedAndShadowWindows);
        this.errorShape = builder.errorShape;
        this.eachUnit = builder.eachUnit;
        this.unavailableRetryAfterSeconds = builder.unavailableRetryAfterSeconds;
    }

    /**
     * Returns a builder with the defaults: {@link HeaderFamily#X_RATELIMIT} and {@link
     * HeaderFamily#IETF}, plain bodies, the deciding window, and a 503's {@code Retry-After} of 5
     * seconds.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the value of {@link #DEGRADED} for a decision: the names of its unchecked windows,
     * comma-separated, each once, in the request's order.
     *
     * @param decision a degraded decision
     * @return the header's value; empty when every window was checked
     */
    public static String degraded(Decision decision) {
        return decision.unchecked().stream()
                .map(window -> HeaderValues.token(window.name()))
                .distinct()
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * Returns the value of {@link #SHADOW} for a decision: the names of the shadow windows that
     * would have refused it, comma-separated, each once.
     *
     * @param decision an allowed decision
     * @return the header's value; empty when no shadow window would have refused it
     */
    public static String shadow(Decision decision) {
        return decision.shadowRefusals().stream()
                .map(refusal -> HeaderValues.token(refusal.window().name()))
                .distinct()
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * Writes the headers of an allowed (or degraded) request; never {@code Retry-After}. Shadow
     * windows are never reported as limits: {@link #SHADOW} names those that would have refused.
     *
     * @param tier the caller's tier
     * @param decision the decision
     * @param headers receives each header's name and value
     * @throws NullPointerException if an argument is {@code null}
     */
    public void allowed(Tier tier, Decision decision, BiConsumer<String, String> headers) {
        Objects.requireNonNull(decision, "decision must not be null");
        policy(tier, headers);
        if (namesUncheckedAndShadowWindows && !decision.shadowRefusals().isEmpty()) {
            headers.accept(SHADOW, shadow(decision));
        }
        if (decision.degraded()) {
            // the store was not consulted: remaining counts are unknown, so none are claimed
            if (namesUncheckedAndShadowWindows && !decision.unchecked().isEmpty()) {
                headers.accept(DEGRADED, degraded(decision));
            }
            return;
        }
        if (decision.window().inShadow()) {
            return; // every window of the caller's is in shadow: no limit of theirs to report
        }
        deciding(decision.limit(), decision.remaining(), decision.window().name(), headers);
        counts(reported(tier, decision), headers);
    }

    /**
     * Writes a rejected request's headers and returns its 429 (or, when it alone asks for more than
     * a window can ever hold, 400) with the library's message.
     *
     * @param tier the caller's tier
     * @param decision the rejection
     * @param headers receives each header's name and value
     * @return the status and body
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if the decision allowed the request
     */
    public Refusal rejected(Tier tier, Decision decision, BiConsumer<String, String> headers) {
        return rejected(tier, decision, message(decision), headers);
    }

    /**
     * Writes a rejected request's headers and returns its 429 (or 400) with a message of the
     * front's own, such as {@link #message(Decision)} followed by what only the front knows (the
     * gateway adds its token estimate to a request too large for a window).
     *
     * @param tier the caller's tier
     * @param decision the rejection
     * @param message the body's message
     * @param headers receives each header's name and value
     * @return the status and body
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if the decision allowed the request
     */
    public Refusal rejected(Tier tier, Decision decision, String message, BiConsumer<String, String> headers) {
        Objects.requireNonNull(decision, "decision must not be null");
        Objects.requireNonNull(message, "message must not be null");
        if (decision.allowed()) {
            throw new IllegalArgumentException("decision must be a rejection, was " + decision);
        }
        Window window = decision.window();
        policy(tier, headers);
        deciding(decision.limit(), 0, window.name(), headers);
        counts(reported(tier, decision), headers);
        if (decision.tooLarge()) {
            // no retry can succeed: no delay is offered
            return new Refusal(BAD_REQUEST, ErrorBodies.tooLarge(errorShape, window, message));
        }
        long retryAfter = decision.retryAfterSeconds();
        retry(decision.retryAfter(), window.name(), headers);
        return new Refusal(
                TOO_MANY_REQUESTS,
                ErrorBodies.rateLimited(
                        errorShape, window, decision.budget(), decision.retryAfter(), retryAfter, message));
    }

    /**
     * Writes the headers of a request refused by a concurrency cap (too many of the caller's
     * requests in flight) and returns its 429; the windows are reported from {@code usage}.
     *
     * @param tier the caller's tier
     * @param usage the caller's windows now, read without charging; empty when unknown
     * @param limit the cap
     * @param retryAfter when a retry may succeed
     * @param headers receives each header's name and value
     * @return the status and body
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code limit} is not positive
     */
    public Refusal concurrencyLimited(
            Tier tier,
            List<Decision.Usage> usage,
            long limit,
            Duration retryAfter,
            BiConsumer<String, String> headers) {
        Objects.requireNonNull(usage, "usage must not be null");
        Objects.requireNonNull(retryAfter, "retryAfter must not be null");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        policy(tier, headers);
        deciding(limit, 0, CONCURRENT, headers);
        counts(eachUnit(tier, usage, null), headers);
        retry(retryAfter, CONCURRENT, headers);
        long seconds = RetryAfter.seconds(retryAfter);
        String message = "Too many concurrent requests: the limit of " + limit
                + " requests in flight is reached; retry in " + seconds + (seconds == 1 ? " second." : " seconds.");
        return new Refusal(
                TOO_MANY_REQUESTS, ErrorBodies.concurrencyLimited(errorShape, limit, retryAfter, seconds, message));
    }

    /**
     * Writes the headers of a request refused because a fail-closed limiter cannot reach its store,
     * and returns its 503.
     *
     * @param tier the caller's tier
     * @param headers receives each header's name and value
     * @return the status and body
     * @throws NullPointerException if an argument is {@code null}
     */
    public Refusal unavailable(Tier tier, BiConsumer<String, String> headers) {
        headers.accept(RETRY_AFTER, Long.toString(unavailableRetryAfterSeconds));
        policy(tier, headers);
        String message = "The rate limiter cannot reach its store and refuses requests until it can; retry in "
                + unavailableRetryAfterSeconds + " seconds.";
        return new Refusal(
                SERVICE_UNAVAILABLE, ErrorBodies.unavailable(errorShape, unavailableRetryAfterSeconds, message));
    }

    /**
     * Returns the library's sentence for a rejection, the message of its body: the window (and
     * shared budget) that tripped and the delay, such as {@code Too many requests: the limit of 5
     * requests per minute (window 'minute') is used up; retry in 42 seconds.}, or, for a request
     * larger than the window can ever hold, that no retry can succeed.
     *
     * @param decision the rejection
     * @return the sentence
     * @throws NullPointerException if {@code decision} is {@code null}
     * @throws IllegalArgumentException if the decision allowed the request
     */
    public static String message(Decision decision) {
        Objects.requireNonNull(decision, "decision must not be null");
        if (decision.allowed()) {
            throw new IllegalArgumentException("decision must be a rejection, was " + decision);
        }
        Window window = decision.window();
        boolean money = window.unit().equals(Window.Unit.USD_MICROS);
        String limit = money
                ? "$"
                        + java.math.BigDecimal.valueOf(window.limit(), 6)
                                .setScale(2, java.math.RoundingMode.DOWN)
                                .toPlainString()
                : window.limit() + " " + ErrorBodies.unit(window);
        String what = " of " + limit + " per " + describe(window) + " (window '" + window.name() + "')"
                + (decision.budget() == null ? "" : " of the shared budget '" + decision.budget() + "'");
        if (decision.tooLarge()) {
            return "This request alone asks for more " + (money ? "spend" : ErrorBodies.unit(window))
                    + " than the limit" + what + " allows; no retry can succeed.";
        }
        long retryAfter = decision.retryAfterSeconds();
        return (money ? "Spend limit reached: the budget" : "Too many requests: the limit") + what
                + (money ? " is spent" : " is used up") + "; retry in " + retryAfter
                + (retryAfter == 1 ? " second." : " seconds.");
    }

    /** {@code Retry-After} and, per family, the exact delay and the name of what tripped. */
    private void retry(Duration retryAfter, String window, BiConsumer<String, String> headers) {
        if (exactDelay) {
            RetryAfter.write(retryAfter, headers);
        } else {
            headers.accept(RETRY_AFTER, Long.toString(RetryAfter.seconds(retryAfter)));
        }
        for (FamilyHeaders family : families) {
            family.refused(window, headers);
        }
    }

    private void policy(Tier tier, BiConsumer<String, String> headers) {
        Objects.requireNonNull(tier, "tier must not be null");
        Objects.requireNonNull(headers, "headers must not be null");
        for (FamilyHeaders family : families) {
            family.policy(tier, headers);
        }
    }

    private void deciding(long limit, long remaining, String window, BiConsumer<String, String> headers) {
        for (FamilyHeaders family : families) {
            family.deciding(limit, remaining, window, headers);
        }
    }

    /** The per-window counts of each family that reports them. */
    private void counts(List<ReportedWindow> reported, BiConsumer<String, String> headers) {
        if (reported.isEmpty()) {
            return;
        }
        for (FamilyHeaders family : families) {
            family.counts(reported, headers);
        }
    }

    /** {@code now + reset} as an RFC 3339 time in UTC, rounded up to the whole second. */
    static String resetTime(Instant now, Duration reset) {
        return AnthropicHeaders.resetTime(now, reset);
    }

    private List<ReportedWindow> reported(Tier tier, Decision decision) {
        if (eachUnit) {
            List<Decision.Usage> usage = decision.usage();
            if (usage.isEmpty()) { // a decision made without a usage list knows its deciding window only
                Window window = decision.window();
                usage = List.of(new Decision.Usage(
                        window, decision.budget(), window.limit() - decision.remaining(), decision.resetAfter()));
            }
            return eachUnit(tier, usage, decision.allowed() || decision.budget() != null ? null : decision.window());
        }
        Window window = decision.window();
        if (decision.allowed()) {
            return List.of(new ReportedWindow(
                    window, decision.remaining(), decision.resetAfter(), decision.resetAfterSeconds()));
        }
        // a rejection's budget grows again when the same request would fit: t and Retry-After agree
        long seconds = Math.max(decision.retryAfterSeconds(), decision.resetAfterSeconds());
        return List.of(new ReportedWindow(window, 0, decision.retryAfter(), seconds));
    }

    /**
     * The tightest known window of each unit among the caller's own windows: least remaining, ties
     * to the shortest. A unit with a window the store did not evaluate is left out, unless its
     * window rejected the request.
     */
    private static List<ReportedWindow> eachUnit(Tier tier, List<Decision.Usage> usage, @Nullable Window rejecting) {
        List<ReportedWindow> reported = new ArrayList<>(2);
        for (Window.Unit unit : units(tier)) {
            Decision.Usage tightest = null;
            int known = 0;
            for (Decision.Usage window : usage) {
                if (window.budget() != null || !window.window().unit().equals(unit)) {
                    continue;
                }
                known++;
                if (tightest == null
                        || window.remaining() < tightest.remaining()
                        || window.remaining() == tightest.remaining()
                                && window.window()
                                                .length()
                                                .compareTo(tightest.window().length())
                                        < 0) {
                    tightest = window;
                }
            }
            if (tightest == null) {
                continue;
            }
            long windows = tier.windows().stream()
                    .filter(window -> window.unit().equals(unit))
                    .count();
            boolean rejectedHere = rejecting != null && rejecting.unit().equals(unit);
            if (known >= windows || rejectedHere) {
                reported.add(new ReportedWindow(
                        tightest.window(),
                        tightest.remaining(),
                        tightest.resetAfter(),
                        RetryAfter.ceilSeconds(tightest.resetAfter())));
            }
        }
        return reported;
    }

    /**
     * Names a window's span for a sentence: "calendar month in America/New_York" or "calendar day
     * (UTC)" for a calendar window (its nominal length would be untrue), else its length.
     */
    private static String describe(Window window) {
        Window.Calendar calendar = window.calendar();
        if (calendar == null) {
            return describe(window.lengthSeconds());
        }
        String zone = calendar.zone().normalized().equals(ZoneOffset.UTC)
                ? " (UTC)"
                : " in " + calendar.zone().getId();
        return "calendar " + calendar.period() + zone;
    }

    /** Names a window length for a sentence: "minute", "day", "30 days", "6 hours" or "90 seconds". */
    private static String describe(long seconds) {
        String name = Window.of(1, Duration.ofSeconds(seconds)).name(); // second, minute, hour, day, week or "90s"
        if (!Character.isDigit(name.charAt(0))) {
            return name;
        }
        for (long[] unit : new long[][] {{86_400, 0}, {3_600, 1}, {60, 2}}) {
            if (seconds % unit[0] == 0) {
                return seconds / unit[0] + (unit[1] == 0 ? " days" : unit[1] == 1 ? " hours" : " minutes");
            }
        }
        return seconds + " seconds";
    }

    @Override
    public String toString() {
        return "RateLimitResponses{headers=" + on
                + ", errorShape=" + errorShape + ", eachUnit=" + eachUnit
                + ", unavailableRetryAfter="
                + unavailableRetryAfterSeconds + "s}";
    }

    /** The units of a tier's windows, requests first, then tokens, then the others by name. */
    private static java.util.SortedSet<Window.Unit> units(Tier tier) {
        java.util.SortedSet<Window.Unit> units = new java.util.TreeSet<>();
        for (Window window : tier.windows()) {
            if (!window.inShadow()) {
                units.add(window.unit());
            }
        }
        return units;
    }

    /** Builds a {@link RateLimitResponses}; not thread-safe. */
    public static final class Builder {

        private final Set<HeaderFamily> families = EnumSet.of(HeaderFamily.X_RATELIMIT, HeaderFamily.IETF);
        private ErrorShape errorShape = ErrorShape.PLAIN;
        private boolean eachUnit;
        private long unavailableRetryAfterSeconds = 5;
        private @Nullable Clock clock;

        private Builder() {}

        /**
         * Sets the clock that {@link HeaderFamily#ANTHROPIC}'s reset times are counted from, which
         * that family requires ({@link #build()} refuses it without one): the front's own, such as
         * the one its limiter runs on. No other family reads it.
         *
         * @param clock the clock
         * @return this builder
         * @throws NullPointerException if {@code clock} is {@code null}
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Switches one header family on or off; by default {@link HeaderFamily#X_RATELIMIT} and
         * {@link HeaderFamily#IETF} are on and {@link HeaderFamily#OPENAI} is off. With none on, a
         * refusal carries {@code Retry-After} only.
         *
         * @param family the family
         * @param enabled whether to write it
         * @return this builder
         * @throws NullPointerException if {@code family} is {@code null}
         */
        public Builder header(HeaderFamily family, boolean enabled) {
            Objects.requireNonNull(family, "family must not be null");
            if (enabled) {
                families.add(family);
            } else {
                families.remove(family);
            }
            return this;
        }

        /**
         * Switches exactly the given header families on and every other off, as a setting that
         * lists them does ({@code ratelimit.headers.families} in Spring Boot).
         *
         * @param families the families to write; empty for none
         * @return this builder
         * @throws NullPointerException if {@code families} or one of them is {@code null}
         */
        public Builder headers(Collection<HeaderFamily> families) {
            Objects.requireNonNull(families, "families must not be null");
            for (HeaderFamily family : families) {
                Objects.requireNonNull(family, "families must not contain null");
            }
            this.families.clear();
            this.families.addAll(families);
            return this;
        }

        /**
         * Sets the shape of the refusals' bodies; the default is {@link ErrorShape#PLAIN}.
         *
         * @param shape the shape
         * @return this builder
         * @throws NullPointerException if {@code shape} is {@code null}
         */
        public Builder errorShape(ErrorShape shape) {
            this.errorShape = Objects.requireNonNull(shape, "shape must not be null");
            return this;
        }

        /**
         * Switches the bodies to OpenAI's error shape or back to the plain one: {@code
         * errorShape(enabled ? ErrorShape.OPENAI : ErrorShape.PLAIN)}, for fronts whose setting is
         * a yes or no.
         *
         * @param enabled whether to answer in OpenAI's error shape
         * @return this builder
         */
        public Builder openAiErrors(boolean enabled) {
            return errorShape(enabled ? ErrorShape.OPENAI : ErrorShape.PLAIN);
        }

        /**
         * Reports the tightest window of each unit, requests and tokens, instead of the deciding
         * window only (the default is off): for fronts whose tiers meter tokens and whose clients
         * read OpenAI's {@code -requests} and {@code -tokens} families side by side.
         *
         * @param enabled whether to report each unit
         * @return this builder
         */
        public Builder eachUnit(boolean enabled) {
            this.eachUnit = enabled;
            return this;
        }

        /**
         * Sets the {@code Retry-After} of a 503 answered while the limiter cannot reach its store;
         * defaults to 5 seconds.
         *
         * @param unavailableRetryAfter the delay, rounded up to whole seconds, at least one second
         * @return this builder
         * @throws NullPointerException if {@code unavailableRetryAfter} is {@code null}
         * @throws IllegalArgumentException if it is shorter than a second
         */
        public Builder unavailableRetryAfter(Duration unavailableRetryAfter) {
            Objects.requireNonNull(unavailableRetryAfter, "unavailableRetryAfter must not be null");
            if (unavailableRetryAfter.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException(
                        "unavailableRetryAfter must be at least one second, was " + unavailableRetryAfter);
            }
            this.unavailableRetryAfterSeconds = RetryAfter.seconds(unavailableRetryAfter);
            return this;
        }

        /**
         * Builds the writer.
         *
         * @return the writer
         * @throws IllegalStateException if {@link HeaderFamily#ANTHROPIC} is on without a {@link #clock}
         */
        public RateLimitResponses build() {
            return new RateLimitResponses(this);
        }
    }
}
