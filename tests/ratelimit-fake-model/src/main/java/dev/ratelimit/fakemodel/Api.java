package dev.ratelimit.fakemodel;

/** Which endpoint of which provider a call is for, by its method and path. */
public enum Api {
    /** OpenAI's {@code POST /v1/chat/completions}. */
    CHAT_COMPLETIONS(Provider.OPENAI),
    /** OpenAI's legacy {@code POST /v1/completions}. */
    COMPLETIONS(Provider.OPENAI),
    /** OpenAI's Responses API, {@code POST /v1/responses}. */
    RESPONSES(Provider.OPENAI),
    /** OpenAI's {@code POST /v1/embeddings}. */
    EMBEDDINGS(Provider.OPENAI),
    /** Anthropic's Messages API, {@code POST /v1/messages}. */
    MESSAGES(Provider.ANTHROPIC),
    /** Anthropic's {@code POST /v1/messages/count_tokens}. */
    COUNT_TOKENS(Provider.ANTHROPIC),
    /** Gemini's {@code POST /v1beta/models/{model}:generateContent}. */
    GENERATE_CONTENT(Provider.GEMINI),
    /** Gemini's {@code POST /v1beta/models/{model}:streamGenerateContent}. */
    STREAM_GENERATE_CONTENT(Provider.GEMINI),
    /** Gemini's {@code POST /v1beta/models/{model}:countTokens}. */
    GEMINI_COUNT_TOKENS(Provider.GEMINI),
    /** Any other call: a path the fake has no answer of its own for. */
    OTHER(Provider.OPENAI);

    /** Whose API: it decides the shape of answers and errors. */
    public enum Provider {
        /** OpenAI's, and every OpenAI-compatible server's. */
        OPENAI,
        /** Anthropic's. */
        ANTHROPIC,
        /** Google's Gemini API. */
        GEMINI
    }

    private final Provider provider;

    Api(Provider provider) {
        this.provider = provider;
    }

    /**
     * Returns whose API this endpoint belongs to.
     *
     * @return the provider
     */
    public Provider provider() {
        return provider;
    }

    /** The endpoint of a POST to {@code path}; {@link #OTHER} for another method or path. */
    static Api of(String method, String path) {
        int colon = path.lastIndexOf(':');
        if (colon > path.lastIndexOf('/') && path.contains("/models/") && method.equals("POST")) {
            return switch (path.substring(colon + 1)) {
                case "generateContent" -> GENERATE_CONTENT;
                case "streamGenerateContent" -> STREAM_GENERATE_CONTENT;
                case "countTokens" -> GEMINI_COUNT_TOKENS;
                default -> OTHER;
            };
        }
        if (!method.equals("POST")) {
            return OTHER;
        }
        if (path.endsWith("/chat/completions")) {
            return CHAT_COMPLETIONS;
        }
        if (path.endsWith("/completions")) {
            return COMPLETIONS;
        }
        if (path.endsWith("/responses")) {
            return RESPONSES;
        }
        if (path.endsWith("/embeddings")) {
            return EMBEDDINGS;
        }
        if (path.endsWith("/messages")) {
            return MESSAGES;
        }
        if (path.endsWith("/messages/count_tokens")) {
            return COUNT_TOKENS;
        }
        return OTHER;
    }

    /** Whose API a call of {@link #OTHER} is for: Gemini's under {@code /v1beta}, Anthropic's with its version header. */
    static Provider providerOf(String path, boolean anthropicVersion) {
        if (path.startsWith("/v1beta/") || path.equals("/v1beta")) {
            return Provider.GEMINI;
        }
        return anthropicVersion ? Provider.ANTHROPIC : Provider.OPENAI;
    }
}
