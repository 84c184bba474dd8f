package dev.ratelimit.genai;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import org.jspecify.annotations.Nullable;

/**
 * Counts text with OpenAI's tokenizers (jtokkit), for the estimate a model call reserves: the
 * model's own encoding when jtokkit knows the model name, else {@code o200k_base}, the encoding of
 * OpenAI's current models and a fair guess for others. An estimate only: the provider's reported
 * usage settles the real count. Thread-safe.
 */
public final class TokenCounts {

    /** Tokens OpenAI adds per chat message, for its role and separators. */
    public static final int PER_MESSAGE = 3;

    /** Tokens OpenAI adds to every chat prompt to prime the reply. */
    public static final int REPLY_PRIMING = 3;

    /** Loading a vocabulary takes a second or so: the process loads each once, on first use. */
    private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

    /**
     * The default encoding, loaded with this class: the integrations touch it when they are built,
     * so the first model call (possibly on an event-loop thread) does not read the vocabulary.
     */
    private static final Encoding O200K = REGISTRY.getEncoding(EncodingType.O200K_BASE);

    private TokenCounts() {}

    /**
     * Returns the encoding to count a model's text with.
     *
     * @param modelName the model's name as the request names it ({@code gpt-4o}, or {@code
     *     openai/gpt-4o} as routers name it), or {@code null} when unknown
     * @return the model's encoding, else {@code o200k_base}
     */
    public static Encoding encodingFor(@Nullable String modelName) {
        if (modelName != null) {
            int slash = modelName.lastIndexOf('/');
            String name = slash >= 0 ? modelName.substring(slash + 1) : modelName;
            var known = REGISTRY.getEncodingForModel(name);
            if (known.isPresent()) {
                return known.get();
            }
        }
        return O200K;
    }

    /**
     * Counts text as ordinary text: a prompt that spells a special token is counted, never refused.
     *
     * @param encoding the encoding
     * @param text the text, or {@code null}
     * @return its tokens; 0 for {@code null} or empty text
     */
    public static long text(Encoding encoding, @Nullable String text) {
        return text == null || text.isEmpty() ? 0 : encoding.countTokensOrdinary(text);
    }
}
