package dev.ratelimit.genai;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * How a model's text is counted before a call, for the estimate the call reserves: one policy for
 * the gateway, Spring AI and LangChain4j. An estimate only: the provider's reported usage settles
 * the real count. Thread-safe.
 *
 * <ul>
 *   <li><b>OpenAI's models</b> are counted exactly, with their own encoding (jtokkit): {@code
 *       o200k_base} for GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and the o-series, the encoding jtokkit
 *       names for older models.
 *   <li><b>Claude</b> ({@link #claude()}, and any model whose name starts with {@code claude}):
 *       Claude's tokenizer is not public, so a text counts the larger of 1.5 times its {@code
 *       cl100k_base} tokens and a third of its characters (code points), rounded up. Claude splits
 *       English into more pieces than {@code cl100k_base} does, but by far less than half again; a
 *       third of the characters guards text that {@code cl100k_base} packs unusually well.
 *   <li><b>Gemini</b> ({@link #gemini()}, and names starting with {@code gemini} or {@code gemma}):
 *       the larger of its {@code cl100k_base} tokens and a quarter of its characters (Google's rule
 *       of thumb is about four characters a token).
 *   <li><b>Any other model</b>: {@code cl100k_base}, the default encoding. It splits text into more
 *       pieces than {@code o200k_base}, so an unknown model's estimate errs on the side of
 *       reserving more.
 * </ul>
 *
 * <p>What a protocol adds around the texts (per message, for the reply's start, for tools and
 * images) is the protocol adapter's: this class counts text.
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
    private static final Encoding CL100K = REGISTRY.getEncoding(EncodingType.CL100K_BASE);

    private static final Pattern O_SERIES = Pattern.compile("o[1-9]([-.].*)?");

    private static final TokenCounts CLAUDE = new TokenCounts(CL100K, Rule.CLAUDE);
    private static final TokenCounts GEMINI = new TokenCounts(CL100K, Rule.GEMINI);
    private static final TokenCounts DEFAULT = new TokenCounts(CL100K, Rule.EXACT);

    /** How a text's pieces and characters make its count. */
    enum Rule {
        /** The encoding's tokens. */
        EXACT,
        /** max(1.5 x tokens, code points / 3), rounded up. */
        CLAUDE,
        /** max(tokens, code points / 4), rounded up. */
        GEMINI;

        long apply(long tokens, long codePoints) {
            return switch (this) {
                case EXACT -> tokens;
                case CLAUDE -> Math.max((tokens * 3 + 1) / 2, (codePoints + 2) / 3);
                case GEMINI -> Math.max(tokens, (codePoints + 3) / 4);
            };
        }
    }

    private final Encoding encoding;
    private final Rule rule;

    private TokenCounts(Encoding encoding, Rule rule) {
        this.encoding = encoding;
        this.rule = rule;
    }

    /**
     * Returns the counting of a model's text, chosen by its name as the class documentation says.
     *
     * @param modelName the model's name as the request names it ({@code gpt-4o}, or {@code
     *     openai/gpt-4o} as routers name it), or {@code null} when unknown
     * @return the model's counting
     */
    public static TokenCounts forModel(@Nullable String modelName) {
        String name = bareName(modelName);
        if (name.startsWith("claude")) {
            return CLAUDE;
        }
        if (name.startsWith("gemini") || name.startsWith("gemma")) {
            return GEMINI;
        }
        Encoding encoding = encodingFor(modelName);
        return encoding == CL100K ? DEFAULT : new TokenCounts(encoding, Rule.EXACT);
    }

    /**
     * Returns the counting of Claude's text (Anthropic's Messages API), whatever the model's name.
     *
     * @return Claude's counting
     */
    public static TokenCounts claude() {
        return CLAUDE;
    }

    /**
     * Returns the counting of Gemini's text (Google's Gemini API), whatever the model's name.
     *
     * @return Gemini's counting
     */
    public static TokenCounts gemini() {
        return GEMINI;
    }

    /**
     * Returns the encoding an OpenAI model's text is counted with: the model's own, else {@code
     * cl100k_base}.
     *
     * @param modelName the model's name, or {@code null} when unknown
     * @return the encoding
     */
    public static Encoding encodingFor(@Nullable String modelName) {
        String name = bareName(modelName);
        if (name.startsWith("gpt-4o")
                || name.startsWith("gpt-4.1")
                || name.startsWith("gpt-4.5")
                || name.startsWith("gpt-5")
                || name.startsWith("chatgpt-4o")
                || O_SERIES.matcher(name).matches()) {
            return REGISTRY.getEncoding(EncodingType.O200K_BASE);
        }
        return name.isEmpty() ? CL100K : REGISTRY.getEncodingForModel(name).orElse(CL100K);
    }

    private static String bareName(@Nullable String modelName) {
        if (modelName == null) {
            return "";
        }
        String name = modelName.toLowerCase(Locale.ROOT);
        int slash = name.lastIndexOf('/'); // "openai/gpt-4o" as routers name it
        return slash >= 0 ? name.substring(slash + 1) : name;
    }

    /**
     * Counts one text as ordinary text: a prompt that spells a special token is counted, never
     * refused.
     *
     * @param text the text, or {@code null}
     * @return its count; 0 for {@code null} or empty text
     */
    public long count(@Nullable String text) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        long tokens = encoding.countTokensOrdinary(text);
        return rule == Rule.EXACT ? tokens : rule.apply(tokens, text.codePointCount(0, text.length()));
    }

    /**
     * Returns a count of streamed text as it passes, equal to {@link #count} of the whole.
     *
     * @return a new count, for one stream
     */
    public StreamedTokens stream() {
        return new StreamedTokens(encoding, rule);
    }

    /**
     * Returns the encoding underneath (before Claude's or Gemini's rule).
     *
     * @return the encoding
     */
    public Encoding encoding() {
        return encoding;
    }

    @Override
    public String toString() {
        return "TokenCounts[" + encoding.getName()
                + (rule == Rule.EXACT ? "" : ", " + rule.name().toLowerCase(Locale.ROOT)) + "]";
    }
}
