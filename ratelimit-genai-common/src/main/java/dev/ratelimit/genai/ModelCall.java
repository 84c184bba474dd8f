package dev.ratelimit.genai;

import com.knuddels.jtokkit.api.Encoding;
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
 *       it failed after producing output): to the counted prompt and the output produced;
 *   <li>{@link #cancel()} when the model failed before producing anything: nothing is charged.
 * </ul>
 *
 * <p>Only the first settlement counts; later ones do nothing. Each returns the store's stage, which
 * always completes normally (a store failure is counted and logged by the limiter): an integration
 * that waits for it before the caller sees the call's outcome lets the caller see the settlement in
 * the user's windows. Thread-safe.
 */
public final class ModelCall {

    private final Reservation reservation;
    private final Encoding encoding;
    private final long promptTokens;
    private final @Nullable ModelPrice price;
    private final AtomicBoolean settled = new AtomicBoolean();

    private ModelCall(Reservation reservation, Encoding encoding, long promptTokens, @Nullable ModelPrice price) {
        this.reservation = reservation;
        this.encoding = encoding;
        this.promptTokens = promptTokens;
        this.price = price;
    }

    /**
     * Reserves one call: one request and {@code promptTokens + maxOutputTokens} tokens, for the user
     * and in the model's budget (when there is one), all or nothing.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param modelBudget the model's upstream cap, or {@code null} when it has none
     * @param encoding the encoding the prompt was counted with, to count output with later
     * @param promptTokens the counted prompt
     * @param maxOutputTokens the most the call may produce
     * @return the admitted call
     * @throws RateLimitExceededException if the user's windows or the model's budget refuse the call;
     *     nothing was charged
     * @throws dev.ratelimit.api.RateLimiterUnavailableException if a fail-closed limiter cannot reach
     *     its store
     */
    public static ModelCall admit(
            RateLimiter limiter,
            String userId,
            Tier tier,
            @Nullable SharedBudget modelBudget,
            Encoding encoding,
            long promptTokens,
            long maxOutputTokens) {
        return admit(limiter, userId, tier, modelBudget, encoding, promptTokens, maxOutputTokens, null, "model");
    }

    /**
     * Reserves one call as {@link #admit(RateLimiter, String, Tier, SharedBudget, Encoding, long,
     * long) admit} does and, when the model has a price, its worst-case cost in micro-dollars in the
     * same reservation ({@link ModelPrice#worstCaseMicros}), for the spend windows of the tier and the
     * budget; the settlement charges the cost of the usage reported.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param modelBudget the model's upstream cap, or {@code null} when it has none
     * @param encoding the encoding the prompt was counted with, to count output with later
     * @param promptTokens the counted prompt
     * @param maxOutputTokens the most the call may produce
     * @param price the model's price, or {@code null} when it has none
     * @param model the model's name, for the refusal of an unpriced model
     * @return the admitted call
     * @throws UnpricedModelException if a spend window applies and the model has no price: a call
     *     that cannot be charged is not made
     * @throws RateLimitExceededException if the user's windows or the model's budget refuse the call
     */
    public static ModelCall admit(
            RateLimiter limiter,
            String userId,
            Tier tier,
            @Nullable SharedBudget modelBudget,
            Encoding encoding,
            long promptTokens,
            long maxOutputTokens,
            @Nullable ModelPrice price,
            String model) {
        List<SharedBudget> budgets = modelBudget == null ? List.of() : List.of(modelBudget);
        Amounts estimate = estimate(tier, budgets, promptTokens, maxOutputTokens, price, model);
        Reservation reservation = limiter.reserve(userId, tier, estimate, budgets);
        if (!reservation.decision().allowed()) {
            throw new RateLimitExceededException(userId, tier, reservation.decision());
        }
        return new ModelCall(reservation, encoding, promptTokens, price);
    }

    /** The tokens and, when priced, the worst-case cost; refuses an unpriced model under a spend window. */
    private static Amounts estimate(
            Tier tier,
            List<SharedBudget> budgets,
            long promptTokens,
            long maxOutputTokens,
            @Nullable ModelPrice price,
            String model) {
        Amounts tokens = Amounts.tokens(promptTokens + maxOutputTokens);
        if (price != null) {
            return tokens.and(Window.Unit.USD_MICROS, price.worstCaseMicros(promptTokens, maxOutputTokens));
        }
        Window spend = spendWindow(tier.windows());
        for (SharedBudget budget : budgets) {
            spend = spend != null ? spend : spendWindow(budget.windows());
        }
        if (spend != null) {
            throw new UnpricedModelException(model, spend);
        }
        return tokens;
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
     * Reserves one call without blocking; see {@link #admit admit}.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param modelBudget the model's upstream cap, or {@code null} when it has none
     * @param encoding the encoding the prompt was counted with
     * @param promptTokens the counted prompt
     * @param maxOutputTokens the most the call may produce
     * @return a stage completed with the admitted call, or exceptionally with {@link
     *     RateLimitExceededException} (refused) or {@link
     *     dev.ratelimit.api.RateLimiterUnavailableException} (a fail-closed limiter without its store)
     */
    public static CompletionStage<ModelCall> admitAsync(
            RateLimiter limiter,
            String userId,
            Tier tier,
            @Nullable SharedBudget modelBudget,
            Encoding encoding,
            long promptTokens,
            long maxOutputTokens) {
        return admitAsync(limiter, userId, tier, modelBudget, encoding, promptTokens, maxOutputTokens, null, "model");
    }

    /**
     * Reserves one call, priced as {@link #admit(RateLimiter, String, Tier, SharedBudget, Encoding,
     * long, long, ModelPrice, String)} does, without blocking.
     *
     * @param limiter the limiter
     * @param userId the end user
     * @param tier the user's tier
     * @param modelBudget the model's upstream cap, or {@code null} when it has none
     * @param encoding the encoding the prompt was counted with
     * @param promptTokens the counted prompt
     * @param maxOutputTokens the most the call may produce
     * @param price the model's price, or {@code null} when it has none
     * @param model the model's name, for the refusal of an unpriced model
     * @return a stage completed with the admitted call, or exceptionally with {@link
     *     RateLimitExceededException} (refused) or {@link
     *     dev.ratelimit.api.RateLimiterUnavailableException} (a fail-closed limiter without its store)
     * @throws UnpricedModelException if a spend window applies and the model has no price
     */
    public static CompletionStage<ModelCall> admitAsync(
            RateLimiter limiter,
            String userId,
            Tier tier,
            @Nullable SharedBudget modelBudget,
            Encoding encoding,
            long promptTokens,
            long maxOutputTokens,
            @Nullable ModelPrice price,
            String model) {
        List<SharedBudget> budgets = modelBudget == null ? List.of() : List.of(modelBudget);
        Amounts estimate = estimate(tier, budgets, promptTokens, maxOutputTokens, price, model);
        return limiter.reserveAsync(userId, tier, estimate, budgets).thenApply(reservation -> {
            if (!reservation.decision().allowed()) {
                throw new RateLimitExceededException(userId, tier, reservation.decision());
            }
            return new ModelCall(reservation, encoding, promptTokens, price);
        });
    }

    /**
     * Returns the encoding the call's prompt was counted with.
     *
     * @return the encoding
     */
    public Encoding encoding() {
        return encoding;
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
     * Counts text with the call's encoding.
     *
     * @param text the text, or {@code null}
     * @return its tokens
     */
    public long count(@Nullable String text) {
        return TokenCounts.text(encoding, text);
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
        return commit(total != null ? total : usage.total(), usage);
    }

    /**
     * Commits a completed call to the usage the provider reported, by kind of token: its total in
     * the token windows and, when the model has a price, its cost in the spend windows.
     *
     * @param usage the reported usage
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> complete(TokenUsage usage) {
        return commit(usage.total(), usage);
    }

    /**
     * Commits the counted prompt and the output produced, for a stream that ended without a
     * response: the caller cancelled it, or it failed after producing output.
     *
     * @param outputTokens the output tokens produced
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> produced(long outputTokens) {
        return commit(promptTokens + outputTokens, TokenUsage.of(promptTokens, outputTokens));
    }

    /**
     * Cancels the reservation: the model failed and did no work we know of; nothing is charged.
     *
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> cancel() {
        return settled.compareAndSet(false, true) ? reservation.cancel() : CompletableFuture.completedFuture(null);
    }

    private CompletionStage<Void> commit(long tokens, TokenUsage usage) {
        if (!settled.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(null);
        }
        Amounts actual = Amounts.tokens(tokens);
        ModelPrice priced = price;
        return reservation.commit(
                priced == null ? actual : actual.and(Window.Unit.USD_MICROS, priced.costMicros(usage)));
    }

    @Override
    public String toString() {
        return "ModelCall[prompt " + promptTokens + " tokens, " + reservation.decision() + "]";
    }
}
