package dev.ratelimit.genai;

import com.knuddels.jtokkit.api.Encoding;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
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
    private final AtomicBoolean settled = new AtomicBoolean();

    private ModelCall(Reservation reservation, Encoding encoding, long promptTokens) {
        this.reservation = reservation;
        this.encoding = encoding;
        this.promptTokens = promptTokens;
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
        Reservation reservation = limiter.reserve(
                userId, tier, promptTokens + maxOutputTokens, modelBudget == null ? List.of() : List.of(modelBudget));
        if (!reservation.decision().allowed()) {
            throw new RateLimitExceededException(userId, tier, reservation.decision());
        }
        return new ModelCall(reservation, encoding, promptTokens);
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
        return limiter.reserveAsync(
                        userId,
                        tier,
                        promptTokens + maxOutputTokens,
                        modelBudget == null ? List.of() : List.of(modelBudget))
                .thenApply(reservation -> {
                    if (!reservation.decision().allowed()) {
                        throw new RateLimitExceededException(userId, tier, reservation.decision());
                    }
                    return new ModelCall(reservation, encoding, promptTokens);
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
        if (total != null) {
            return commit(total);
        }
        return commit((input != null ? input : promptTokens) + (output != null ? output : countedOutput));
    }

    /**
     * Commits the counted prompt and the output produced, for a stream that ended without a
     * response: the caller cancelled it, or it failed after producing output.
     *
     * @param outputTokens the output tokens produced
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> produced(long outputTokens) {
        return commit(promptTokens + outputTokens);
    }

    /**
     * Cancels the reservation: the model failed and did no work we know of; nothing is charged.
     *
     * @return the store's stage; it completes normally
     */
    public CompletionStage<Void> cancel() {
        return settled.compareAndSet(false, true) ? reservation.cancel() : CompletableFuture.completedFuture(null);
    }

    private CompletionStage<Void> commit(long tokens) {
        return settled.compareAndSet(false, true)
                ? reservation.commit(tokens)
                : CompletableFuture.completedFuture(null);
    }

    @Override
    public String toString() {
        return "ModelCall[prompt " + promptTokens + " tokens, " + reservation.decision() + "]";
    }
}
