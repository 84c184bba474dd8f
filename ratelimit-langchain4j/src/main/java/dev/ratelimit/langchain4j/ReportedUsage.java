package dev.ratelimit.langchain4j;

import dev.ratelimit.genai.TokenUsage;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;

/**
 * Reads LangChain4j's {@link dev.langchain4j.model.output.TokenUsage} as the kinds of tokens
 * providers bill: fresh input, cached input, cache writes and output.
 *
 * <p>The cache figures live on the provider modules' subclasses, which this module does not depend on,
 * so they are read by their accessors' names, whatever class has them:
 *
 * <ul>
 *   <li>{@code inputTokensDetails().cachedTokens()} ({@code OpenAiTokenUsage}): the cached part of the
 *       input count, which includes it;
 *   <li>{@code cachedContentTokenCount()} and {@code thoughtsTokenCount()} ({@code
 *       GoogleAiGeminiTokenUsage}): the cached part of the input count, which includes it, and the
 *       thinking tokens, which the output count leaves out and which are billed as output;
 *   <li>{@code cacheReadInputTokens()} and {@code cacheCreationInputTokens()} ({@code
 *       AnthropicTokenUsage}): input read from and written to the cache, apart from the input count.
 * </ul>
 *
 * <p>A usage with neither is fresh input and output only.
 */
final class ReportedUsage {

    /** Public no-argument accessors by class and name; empty when the class has none. */
    private static final ClassValue<ConcurrentMap<String, Optional<Method>>> ACCESSORS = new ClassValue<>() {
        @Override
        protected ConcurrentMap<String, Optional<Method>> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };

    private ReportedUsage() {}

    /**
     * Splits a reported usage; a figure the provider left out falls back to the counted one. A
     * reported total above the parts is counted as output (thinking tokens that a provider reports
     * only in its total are billed at the output price).
     */
    static TokenUsage of(dev.langchain4j.model.output.TokenUsage usage, long countedPrompt, long countedOutput) {
        Integer inputCount = usage.inputTokenCount();
        Integer outputCount = usage.outputTokenCount();
        long input = inputCount != null ? Math.max(0, inputCount) : countedPrompt;
        long output = outputCount != null ? Math.max(0, outputCount) : countedOutput;
        Object details = read(usage, "inputTokensDetails");
        Object geminiCached = read(usage, "cachedContentTokenCount");
        Object thoughts = read(usage, "thoughtsTokenCount");
        TokenUsage split = details != null
                ? TokenUsage.openAi(input, count(read(details, "cachedTokens")), output)
                : geminiCached != null || thoughts != null
                        ? TokenUsage.openAi(input, count(geminiCached), output + count(thoughts))
                        : new TokenUsage(
                                input,
                                count(read(usage, "cacheReadInputTokens")),
                                count(read(usage, "cacheCreationInputTokens")),
                                output);
        Integer total = usage.totalTokenCount();
        long beyond = total == null ? 0 : total - split.total();
        return beyond > 0
                ? new TokenUsage(split.input(), split.cachedInput(), split.cacheWrite(), split.output() + beyond)
                : split;
    }

    /** Calls a public accessor when the object's class has one; {@code null} when not, or when it fails. */
    private static @Nullable Object read(Object target, String accessor) {
        Method method = ACCESSORS
                .get(target.getClass())
                .computeIfAbsent(accessor, name -> accessor(target.getClass(), name))
                .orElse(null);
        if (method == null) {
            return null;
        }
        try {
            return method.invoke(target);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // a figure we cannot read is one the provider did not report
        }
    }

    private static Optional<Method> accessor(Class<?> type, String name) {
        try {
            Method method = type.getMethod(name);
            return Modifier.isPublic(method.getDeclaringClass().getModifiers())
                    ? Optional.of(method)
                    : Optional.empty();
        } catch (NoSuchMethodException e) {
            return Optional.empty();
        }
    }

    private static long count(@Nullable Object tokens) {
        return tokens instanceof Number number ? Math.max(0, number.longValue()) : 0;
    }
}
