package dev.ratelimit.genai;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * One model call admitted by a {@link RateLimiter}: its reservation (one request, and the counted
 * prompt plus the most it may produce, in the user's windows and the model's shared cap at once) and
 * what is needed to settle it. The framework integrations make one per call to the model and settle
 * it exactly once:
 *
 * <ul>
 *   <li>{@link #complete} when the model answered: to the usage the provider reports, else to the
 *       counted prompt and output;
 *   <li>{@link #produced(long)} when a stream ended without a response (the caller cancelled it, or
 *       it failed after producing output: {@link #produced(long, Throwable)}): to the counted prompt
 *       and the output produced;
 *   <li>{@link #cancel()} when the model failed before producing anything ({@link #cancel(Throwable)}
 *       with the failure): nothing is charged.
 * </ul>
 *
 * <p>A call admitted through a {@link ModelCatalog} whose builder was given a {@code MeterRegistry}
 * also records OpenTelemetry's GenAI client metrics when it is settled ({@code
 * gen_ai.client.token.usage} and {@code gen_ai.client.operation.duration}: see {@link
 * ModelCatalog.Builder#meterRegistry}).
 *
 * <p>Only the first settlement counts; later ones do nothing. Each returns the store's stage, which
 * always completes normally (a store failure is counted and logged by the limiter): an integration
 * that waits for it before the caller sees the call's outcome lets the caller see the settlement in
 * the user's windows. Thread-safe.
 */
public final class ModelCall {

    private final Reservation reservation;
    private final Request request;
    private final TokenCounts counts;
    private final long promptTokens;
    private final @Nullable ModelPrice price;
    private final String model;
    private volatile CallMeters meters;
    private final long startedNanos;
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile @Nullable Ending ending;
    private volatile @Nullable Amounts charged;

    private static final CompletionStage<Boolean> NOT_FIRST = CompletableFuture.completedFuture(false);

    private ModelCall(Reservation reservation, Request request, CallMeters meters) {
        this(reservation, request, meters, System.nanoTime());
    }

    private ModelCall(Reservation reservation, Request request, CallMeters meters, long startedNanos) {
        this.reservation = reservation;
        this.startedNanos = startedNanos;
        this.request = request;
        if (!reservation.decision().allowed() || reservation.concurrencyLimited()) {
            settled.set(true); // refused: nothing is held, nothing to settle
        }
        this.counts = request.counts();
        this.promptTokens = request.promptTokens();
        this.price = request.price();
        this.model = request.model();
        this.meters = meters;
    }

    /**
     * How a call ended, as its settlement records it: completed (the model answered; a named
     * completion such as a stream's end counts too), or not, when its name is the call's {@code
     * error.type} in the GenAI client metrics.
     *
     * @param name the ending's name, such as {@code completed}, {@code cancelled}, {@code
     *     stream_broken} or an exception's class name
     * @param completed whether the model answered in full
     */
    public record Ending(String name, boolean completed) {

        /** The model answered. */
        public static final Ending COMPLETED = new Ending("completed", true);

        /** The caller gave up before the model's answer. */
        public static final Ending CANCELLED = new Ending(GenAiMeters.CANCELLED, false);

        /**
         * Validates the ending.
         *
         * @param name the ending's name
         * @param completed whether the model answered in full
         * @throws NullPointerException if {@code name} is {@code null}
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Ending {
            java.util.Objects.requireNonNull(name, "name must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
        }

        /**
         * The ending of a call that failed: named by the failure's class.
         *
         * @param failure what ended the call
         * @return the ending
         * @throws NullPointerException if {@code failure} is {@code null}
         */
        public static Ending failed(Throwable failure) {
            return new Ending(GenAiMeters.errorType(failure), false);
        }

        /** The {@code error.type} the ending records: {@code null} when completed. */
        @Nullable
        String errorType() {
            return completed ? null : name;
        }
    }

    /**
     * One call to a model as counted before it is made: what it asks for and who else pays.
     *
     * @param model the model's name, for the price and for the refusal of an unpriced model
     * @param budget the model's upstream cap, charged with the user's windows, or {@code null} when
     *     it has none
     * @param price the model's price, or {@code null} when it has none (then only tokens are charged,
     *     and a spend window refuses the call: {@link UnpricedModelException})
     * @param counts how the prompt was counted, to count output the same way
     * @param promptTokens the counted prompt, at least 0
     * @param maxOutputTokens the most the call may produce, at least 0
     * @param levels further shared budgets the call is charged to with the user's windows and the
     *     model's cap, in one reservation (a team's or organisation's budget, per-model limits, a
     *     share of the cap), in the order they are charged
     */
    public record Request(
            String model,
            @Nullable SharedBudget budget,
            @Nullable ModelPrice price,
            TokenCounts counts,
            long promptTokens,
            long maxOutputTokens,
            List<SharedBudget> levels) {

        /**
         * Validates the request.
         *
         * @param model the model's name, for the price and for the refusal of an unpriced model
         * @param budget the model's upstream cap, charged with the user's windows, or {@code null} when
         *     it has none
         * @param price the model's price, or {@code null} when it has none (then only tokens are charged,
         *     and a spend window refuses the call: {@link UnpricedModelException})
         * @param counts how the prompt was counted, to count output the same way
         * @param promptTokens the counted prompt, at least 0
         * @param maxOutputTokens the most the call may produce, at least 0
         * @param levels further shared budgets the call is charged to, in charge order
         * @throws NullPointerException if the model, the counting or the levels are {@code null}
         * @throws IllegalArgumentException if a count is negative
         */
        public Request {
            java.util.Objects.requireNonNull(model, "model must not be null");
            java.util.Objects.requireNonNull(counts, "counts must not be null");
            levels = List.copyOf(java.util.Objects.requireNonNull(levels, "levels must not be null"));
            if (promptTokens < 0 || maxOutputTokens < 0) {
                throw new IllegalArgumentException("promptTokens and maxOutputTokens must not be negative, were "
                        + promptTokens + " and " + maxOutputTokens);
            }
        }

        /**
         * A call charged to the user's windows and at most the model's cap.
         *
         * @param model the model's name
         * @param budget the model's upstream cap, or {@code null}
         * @param price the model's price, or {@code null}
         * @param counts how the prompt was counted
         * @param promptTokens the counted prompt, at least 0
         * @param maxOutputTokens the most the call may produce, at least 0
         */
        public Request(
                String model,
                @Nullable SharedBudget budget,
                @Nullable ModelPrice price,
                TokenCounts counts,
                long promptTokens,
                long maxOutputTokens) {
            this(model, budget, price, counts, promptTokens, maxOutputTokens, List.of());
        }

        /**
         * Returns what the call reserves: the prompt plus the most it may produce in tokens and, when
         * the model has a price, their worst-case cost ({@link ModelPrice#worstCaseMicros}).
         *
         * @return the amounts to reserve
         */
        public Amounts amounts() {
            Amounts tokens = Amounts.tokens(promptTokens + maxOutputTokens);
            ModelPrice priced = price;
            return priced == null
                    ? tokens
                    : tokens.and(Window.Unit.USD_MICROS, priced.worstCaseMicros(promptTokens, maxOutputTokens));
        }

        /**
         * Returns what a call that used {@code usage} settles to: its tokens and, when the model has a
         * price, their cost.
         *
         * @param usage the tokens used, by kind
         * @return the amounts to commit
         */
        public Amounts actual(TokenUsage usage) {
            Amounts tokens = Amounts.tokens(usage.total());
            ModelPrice priced = price;
            return priced == null ? tokens : tokens.and(Window.Unit.USD_MICROS, priced.costMicros(usage));
        }

        /**
         * Returns the spend window that makes this call impossible to charge: for a model without a
         * price, the first window in micro-dollars of the user's tier, else of the budgets in charge
         * order; {@code null} when the model has a price or no such window applies.
         *
         * @param tier the user's tier
         * @return the window that refuses the call, or {@code null}
         */
        public @Nullable Window unpricedSpend(Tier tier) {
            if (price != null) {
                return null;
            }
            Window spend = spendWindow(tier.windows());
            for (SharedBudget shared : budgets()) {
                spend = spend != null ? spend : spendWindow(shared.windows());
            }
            return spend;
        }

        /** The amounts to reserve, after refusing a call that cannot be charged. */
        Amounts estimate(Tier tier) {
            Window spend = unpricedSpend(tier);
            if (spend != null) {
                throw new UnpricedModelException(model, spend);
            }
            return amounts();
        }

        /**
         * Returns every shared budget the call is charged to: the model's cap, then the levels.
         *
         * @return the budgets, in charge order
         */
        public List<SharedBudget> budgets() {
            SharedBudget shared = budget;
            if (shared == null) {
                return levels;
            }
            List<SharedBudget> all = new java.util.ArrayList<>(levels.size() + 1);
            all.add(shared);
            all.addAll(levels);
            return List.copyOf(all);
        }
    }

    /**
     * Reserves one call: one request, {@code promptTokens + maxOutputTokens} tokens and, for a priced
     * model, the call's worst-case cost in micro-dollars, for the user and in the model's budget (when
     * there is one), all or nothing; the settlement charges what the provider reports.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param request the call, counted
     * @return the admitted call
     * @throws UnpricedModelException if a spend window applies and the model has no price: a call
     *     that cannot be charged is not made
     * @throws RateLimitExceededException if the user's windows or the model's budget refuse the call;
     *     nothing was charged
     * @throws dev.ratelimit.api.RateLimiterUnavailableException if a fail-closed limiter cannot reach
     *     its store
     */
    public static ModelCall admit(RateLimiter limiter, String userId, Tier tier, Request request) {
        return admit(limiter, userId, tier, request, CallMeters.NONE);
    }

    static ModelCall admit(RateLimiter limiter, String userId, Tier tier, Request request, CallMeters meters) {
        Reservation reservation = limiter.reserve(userId, tier, request.estimate(tier), request.budgets());
        return admitted(reservation, userId, tier, request, meters);
    }

    /**
     * Reserves one call without blocking; see {@link #admit admit}.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param request the call, counted
     * @return a stage completed with the admitted call, or exceptionally with {@link
     *     RateLimitExceededException} (refused) or {@link
     *     dev.ratelimit.api.RateLimiterUnavailableException} (a fail-closed limiter without its store)
     * @throws UnpricedModelException if a spend window applies and the model has no price
     */
    public static CompletionStage<ModelCall> admitAsync(
            RateLimiter limiter, String userId, Tier tier, Request request) {
        return admitAsync(limiter, userId, tier, request, CallMeters.NONE);
    }

    static CompletionStage<ModelCall> admitAsync(
            RateLimiter limiter, String userId, Tier tier, Request request, CallMeters meters) {
        return limiter.reserveAsync(userId, tier, request.estimate(tier), request.budgets())
                .thenApply(reservation -> admitted(reservation, userId, tier, request, meters));
    }

    /**
     * Reserves one call without blocking and without throwing for a refusal: the call returned
     * tells whether it was admitted ({@link #allowed()}); a refused one holds nothing and its
     * settlements do nothing. Every budget of the request and, when given, a concurrency slot are
     * reserved in one store call, all or nothing.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param request the call, counted
     * @param concurrency the user's concurrency slot to take with it, or {@code null}
     * @return a stage completed with the call, admitted or refused, or exceptionally with {@link
     *     dev.ratelimit.api.RateLimiterUnavailableException} (a fail-closed limiter without its store)
     * @throws UnpricedModelException if a spend window applies and the model has no price
     */
    public static CompletionStage<ModelCall> reserveAsync(
            RateLimiter limiter,
            String userId,
            Tier tier,
            Request request,
            dev.ratelimit.api.@Nullable Concurrency concurrency) {
        return reserveAsync(limiter, userId, tier, request, concurrency, CallMeters.NONE);
    }

    /**
     * Reserves one call as {@link #reserveAsync(RateLimiter, String, Tier, Request,
     * dev.ratelimit.api.Concurrency) reserveAsync} does, and records it in {@code meters} when it is
     * settled (such as {@link GenAiMeters#calls}: OpenTelemetry's GenAI client metrics, timed from
     * this call).
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param request the call, counted
     * @param concurrency the user's concurrency slot to take with it, or {@code null}
     * @param meters what records the settled call
     * @return a stage completed with the call, admitted or refused, or exceptionally with {@link
     *     dev.ratelimit.api.RateLimiterUnavailableException} (a fail-closed limiter without its store)
     * @throws UnpricedModelException if a spend window applies and the model has no price
     * @throws NullPointerException if {@code meters} is {@code null}
     */
    public static CompletionStage<ModelCall> reserveAsync(
            RateLimiter limiter,
            String userId,
            Tier tier,
            Request request,
            dev.ratelimit.api.@Nullable Concurrency concurrency,
            CallMeters meters) {
        java.util.Objects.requireNonNull(meters, "meters must not be null");
        long started = System.nanoTime();
        Amounts amounts = request.estimate(tier);
        CompletionStage<Reservation> reserved = concurrency == null
                ? limiter.reserveAsync(userId, tier, amounts, request.budgets())
                : limiter.reserveAsync(userId, tier, amounts, request.budgets(), concurrency);
        return reserved.thenApply(reservation -> new ModelCall(reservation, request, meters, started));
    }

    /**
     * Rebuilds a call admitted earlier, perhaps by another process, from its reservation's receipt
     * ({@link #receipt()}), to be settled here once.
     *
     * @param limiter the limiter the call was admitted by (or one on the same store)
     * @param request the call as it was admitted
     * @param receipt the receipt
     * @return the call
     * @throws IllegalArgumentException if {@code receipt} is not a receipt the limiter can read
     */
    public static ModelCall restore(RateLimiter limiter, Request request, String receipt) {
        return new ModelCall(limiter.restore(receipt), request, CallMeters.NONE);
    }

    /**
     * Returns whether the call was admitted; only a call returned by {@link #reserveAsync} can be
     * refused.
     *
     * @return whether it holds a reservation
     */
    public boolean allowed() {
        return reservation.decision().allowed() && !reservation.concurrencyLimited();
    }

    /**
     * Returns whether the user's concurrency cap refused the call.
     *
     * @return whether no concurrency slot was free
     */
    public boolean concurrencyLimited() {
        return reservation.concurrencyLimited();
    }

    /**
     * Returns the reservation behind the call, for what its caller keeps beside it (a concurrency
     * slot's renewal).
     *
     * @return the reservation
     */
    public Reservation reservation() {
        return reservation;
    }

    /**
     * Returns the receipt from which {@link #restore} rebuilds the call in any process on the store,
     * or empty when it holds nothing there.
     *
     * @return the receipt
     */
    public java.util.Optional<String> receipt() {
        return allowed() ? reservation.receipt() : java.util.Optional.empty();
    }

    /**
     * Returns the call as it was counted and charged.
     *
     * @return the request
     */
    public Request request() {
        return request;
    }

    private static ModelCall admitted(
            Reservation reservation, String userId, Tier tier, Request request, CallMeters meters) {
        if (!reservation.decision().allowed()) {
            throw new RateLimitExceededException(userId, tier, reservation.decision());
        }
        return new ModelCall(reservation, request, meters);
    }

    private static @Nullable Window spendWindow(List<Window> windows) {
        for (Window window : windows) {
            if (window.unit().equals(Window.Unit.USD_MICROS)) {
                return window;
            }
        }
        return null;
    }

    /**
     * Returns the limiter's decision that admitted the call: the deciding window, what is left of
     * it, and the {@linkplain dev.ratelimit.api.Decision#shadowRefusals() shadow windows} that would
     * have refused it had they been enforced.
     *
     * @return the admitting decision
     */
    public dev.ratelimit.api.Decision decision() {
        return reservation.decision();
    }

    /**
     * Returns how the call's prompt was counted (and its output is).
     *
     * @return the counts
     */
    public TokenCounts counts() {
        return counts;
    }

    /**
     * Returns the tokens of the call's prompt, as counted before the call.
     *
     * @return the counted prompt
     */
    public long promptTokens() {
        return promptTokens;
    }

    /**
     * Counts text with the call's counts.
     *
     * @param text the text, or {@code null}
     * @return its tokens
     */
    public long count(@Nullable String text) {
        return counts.count(text);
    }

    /**
     * Commits a completed call: the provider's reported total; without it, its reported input and
     * output, each falling back to the counted figure; without any report, the counted prompt and
     * output.
     *
     * @param total the reported total tokens, or {@code null}
     * @param input the reported input (prompt) tokens, or {@code null}
     * @param output the reported output (completion) tokens, or {@code null}
     * @param countedOutput the output counted from the response
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> complete(
            @Nullable Long total, @Nullable Long input, @Nullable Long output, long countedOutput) {
        TokenUsage usage = TokenUsage.of(input != null ? input : promptTokens, output != null ? output : countedOutput);
        return settleStage(total != null ? total : usage.total(), usage, Ending.COMPLETED);
    }

    /**
     * Commits a completed call to the usage the provider reported, by kind of token: its total in
     * the token windows and, when the model has a price, its cost in the spend windows.
     *
     * @param usage the reported usage
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> complete(TokenUsage usage) {
        return settleStage(usage.total(), usage, Ending.COMPLETED);
    }

    /**
     * Commits the counted prompt and the output produced, for a stream that ended without a
     * response: the caller cancelled it, or it failed after producing output.
     *
     * @param outputTokens the output tokens produced
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> produced(long outputTokens) {
        return settleStage(promptTokens + outputTokens, TokenUsage.of(promptTokens, outputTokens), Ending.CANCELLED);
    }

    /**
     * Commits the counted prompt and the output produced, for a stream that failed after producing
     * output.
     *
     * @param outputTokens the output tokens produced
     * @param failure what ended the stream, recorded as the call's {@code error.type}
     * @return the store's stage; it completes normally
     * @throws NullPointerException if {@code failure} is {@code null}
     */
    public CompletionStage<Void> produced(long outputTokens, Throwable failure) {
        return settleStage(
                promptTokens + outputTokens, TokenUsage.of(promptTokens, outputTokens), Ending.failed(failure));
    }

    /**
     * Cancels the reservation: the call ended before the model did any work we know of (the caller
     * gave up); nothing is charged.
     *
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> cancel() {
        return cancel(Ending.CANCELLED).thenApply(first -> null);
    }

    /**
     * Cancels the reservation: the model failed and did no work we know of; nothing is charged.
     *
     * @param failure what the model's client threw, recorded as the call's {@code error.type}
     * @return the store's stage; it completes normally
     * @throws NullPointerException if {@code failure} is {@code null}
     */
    public CompletionStage<Void> cancel(Throwable failure) {
        return cancel(Ending.failed(failure)).thenApply(first -> null);
    }

    /**
     * Settles the call to the usage the provider reported (its tokens and, for a priced model, their
     * cost), recording how it ended; only the first settlement of a call counts.
     *
     * @param usage the tokens used, by kind
     * @param ending how the call ended
     * @return a stage completed, never exceptionally, once the store has applied the settlement (or
     *     the limiter has queued it to be retried): with {@code true}, or at once with {@code false}
     *     when the call was settled before (or refused)
     * @throws NullPointerException if {@code usage} or {@code ending} is {@code null}
     */
    public CompletionStage<Boolean> commit(TokenUsage usage, Ending ending) {
        java.util.Objects.requireNonNull(usage, "usage must not be null");
        return settle(usage.total(), usage, java.util.Objects.requireNonNull(ending, "ending must not be null"));
    }

    /**
     * Settles the call to nothing: the model did no work we know of; only the first settlement of a
     * call counts.
     *
     * @param ending how the call ended
     * @return a stage completed, never exceptionally, once the store has applied it: with {@code
     *     true}, or at once with {@code false} when the call was settled before (or refused)
     * @throws NullPointerException if {@code ending} is {@code null}
     */
    public CompletionStage<Boolean> cancel(Ending ending) {
        java.util.Objects.requireNonNull(ending, "ending must not be null");
        if (!settled.compareAndSet(false, true)) {
            return NOT_FIRST;
        }
        Amounts none = Amounts.tokens(0);
        this.charged = price == null ? none : none.and(Window.Unit.USD_MICROS, 0);
        this.ending = ending;
        meters.ended(model, null, System.nanoTime() - startedNanos, ending.errorType());
        return reservation.cancel().thenApply(ignored -> true);
    }

    /**
     * Keeps the reservation for a settlement much later (a batch's, hours away) and records no
     * metrics for the call: its duration is not one operation's.
     */
    public void hold() {
        meters = CallMeters.NONE;
    }

    /**
     * Returns whether the call has been settled, or was refused and holds nothing.
     *
     * @return whether a settlement would do nothing
     */
    public boolean settled() {
        return settled.get();
    }

    /**
     * Returns how the call ended, once settled.
     *
     * @return the ending, or {@code null} before the settlement and for a refused call
     */
    public @Nullable Ending ending() {
        return ending;
    }

    /**
     * Returns what the settlement charged: tokens and, for a priced model, micro-dollars (zero for a
     * cancelled call).
     *
     * @return the amounts, or {@code null} before the settlement and for a refused call
     */
    public @Nullable Amounts charged() {
        return charged;
    }

    /** Settles as {@link #settle} does, for the settlements that report no more than their stage. */
    private CompletionStage<Void> settleStage(long tokens, TokenUsage usage, Ending end) {
        return settle(tokens, usage, end).thenApply(first -> null);
    }

    private CompletionStage<Boolean> settle(long tokens, TokenUsage usage, Ending end) {
        if (!settled.compareAndSet(false, true)) {
            return NOT_FIRST;
        }
        Amounts actual = Amounts.tokens(tokens);
        ModelPrice priced = price;
        actual = priced == null ? actual : actual.and(Window.Unit.USD_MICROS, priced.costMicros(usage));
        this.charged = actual;
        this.ending = end;
        meters.ended(model, usage, System.nanoTime() - startedNanos, end.errorType());
        return reservation.commit(actual).thenApply(ignored -> true);
    }

    @Override
    public String toString() {
        return "ModelCall[prompt " + promptTokens + " tokens, " + reservation.decision() + "]";
    }
}
