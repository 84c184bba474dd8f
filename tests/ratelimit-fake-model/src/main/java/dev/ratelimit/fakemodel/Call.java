package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * What the fake model received of one call: method, path, query, headers and body, with what the
 * fake reads from them (the endpoint, the model, whether it streams, the last user text, the output
 * limit).
 */
public final class Call {

    private final String method;
    private final String path;
    private final @Nullable String query;
    private final Map<String, String> headers;
    private final byte[] bytes;
    private final JsonNode body;
    private final Api api;
    private final Api.Provider provider;

    Call(String method, String path, @Nullable String query, Map<String, String> headers, byte[] bytes) {
        this.method = method;
        this.path = path;
        this.query = query;
        TreeMap<String, String> sorted = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        sorted.putAll(headers);
        this.headers = Collections.unmodifiableMap(sorted);
        this.bytes = bytes.clone();
        this.body = json(bytes);
        this.api = Api.of(method, path);
        this.provider = api == Api.OTHER ? Api.providerOf(path, header("anthropic-version") != null) : api.provider();
    }

    private static JsonNode json(byte[] bytes) {
        if (bytes.length == 0) {
            return NullNode.getInstance();
        }
        try {
            return Json.MAPPER.readTree(bytes);
        } catch (IOException e) {
            return NullNode.getInstance(); // a multipart upload, say: the text is still there
        }
    }

    /**
     * Returns the HTTP method.
     *
     * @return the method, such as {@code POST}
     */
    public String method() {
        return method;
    }

    /**
     * Returns the path, without the query.
     *
     * @return the path, such as {@code /v1/chat/completions}
     */
    public String path() {
        return path;
    }

    /**
     * Returns the query string.
     *
     * @return the query, or {@code null} when the URL had none
     */
    public @Nullable String query() {
        return query;
    }

    /**
     * Returns one parameter of the query.
     *
     * @param name the parameter's name, such as {@code alt}
     * @return its first value, or {@code null} when absent
     */
    public @Nullable String queryParameter(String name) {
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int equals = pair.indexOf('=');
            String key = equals < 0 ? pair : pair.substring(0, equals);
            if (URLDecoder.decode(key, StandardCharsets.UTF_8).equals(name)) {
                return equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /**
     * Returns one request header.
     *
     * @param name the header's name, in any case
     * @return its first value, or {@code null} when absent
     */
    public @Nullable String header(String name) {
        return headers.get(name);
    }

    /**
     * Returns every request header, the first value of each, by case-insensitive name.
     *
     * @return the headers
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * Returns the body as JSON.
     *
     * @return the body, or a null node when it was empty or not JSON
     */
    public JsonNode body() {
        return body;
    }

    /**
     * Returns the body as text.
     *
     * @return the body, decoded as UTF-8
     */
    public String text() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Returns which endpoint the call is for.
     *
     * @return the endpoint
     */
    public Api api() {
        return api;
    }

    /**
     * Returns whose API the call is for: its endpoint's provider, or for another path Gemini's under
     * {@code /v1beta} and Anthropic's when it carries {@code anthropic-version}.
     *
     * @return the provider
     */
    public Api.Provider provider() {
        return provider;
    }

    /**
     * Returns the model the call names: the body's {@code model}, or Gemini's in the path.
     *
     * @return the model, or {@code fake-model} when it names none
     */
    public String model() {
        if (provider == Api.Provider.GEMINI) {
            int start = path.indexOf("/models/");
            int colon = path.lastIndexOf(':');
            if (start >= 0 && colon > start) {
                return path.substring(start + "/models/".length(), colon);
            }
        }
        return body.path("model").asText("fake-model");
    }

    /**
     * Returns whether the call asks for a stream: {@code "stream": true}, or Gemini's {@code
     * streamGenerateContent}.
     *
     * @return whether to stream
     */
    public boolean stream() {
        return api == Api.STREAM_GENERATE_CONTENT || body.path("stream").asBoolean(false);
    }

    /**
     * Returns the text of the last user message: of {@code messages} (chat, Anthropic), the {@code
     * prompt} (legacy completions), the {@code input} (Responses) or {@code contents} (Gemini), text
     * parts joined.
     *
     * @return the text, or {@code null} when there is none
     */
    public @Nullable String lastUserText() {
        return switch (api) {
            case CHAT_COMPLETIONS, MESSAGES, COUNT_TOKENS -> lastUser(body.path("messages"), "content", "role", null);
            case COMPLETIONS -> {
                JsonNode prompt = body.path("prompt");
                yield prompt.isTextual() ? prompt.textValue() : prompt.path(0).asText(null);
            }
            case RESPONSES -> {
                JsonNode input = body.path("input");
                yield input.isTextual() ? input.textValue() : lastUser(input, "content", "role", null);
            }
            case GENERATE_CONTENT, STREAM_GENERATE_CONTENT, GEMINI_COUNT_TOKENS ->
                lastUser(body.path("contents"), "parts", "role", "user");
            case EMBEDDINGS, OTHER -> null;
        };
    }

    /** The text of the last item whose role is user: textual content, or its parts' texts joined. */
    private static @Nullable String lastUser(
            JsonNode items, String contentField, String roleField, @Nullable String defaultRole) {
        String last = null;
        for (JsonNode item : items) {
            String role = defaultRole == null
                    ? item.path(roleField).asText()
                    : item.path(roleField).asText(defaultRole);
            if (!role.equals("user")) {
                continue;
            }
            JsonNode content = item.path(contentField);
            if (content.isTextual()) {
                last = content.textValue();
            } else if (content.isArray()) {
                StringBuilder text = new StringBuilder();
                for (JsonNode part : content) {
                    text.append(part.path("text").asText(""));
                }
                last = text.toString();
            }
        }
        return last;
    }

    /**
     * Returns the output limit the call sets: {@code max_completion_tokens} or {@code max_tokens}
     * (chat, legacy completions, Anthropic), {@code max_output_tokens} (Responses), {@code
     * generationConfig.maxOutputTokens} (Gemini).
     *
     * @return the limit, or {@link Long#MAX_VALUE} when it sets none
     */
    public long maxOutputTokens() {
        JsonNode max = switch (api) {
            case CHAT_COMPLETIONS ->
                body.has("max_completion_tokens") ? body.get("max_completion_tokens") : body.path("max_tokens");
            case RESPONSES -> body.path("max_output_tokens");
            case GENERATE_CONTENT, STREAM_GENERATE_CONTENT ->
                body.path("generationConfig").path("maxOutputTokens");
            default -> body.path("max_tokens");
        };
        return max.asLong(Long.MAX_VALUE);
    }

    @Override
    public String toString() {
        return method + " " + path + (query == null ? "" : "?" + query);
    }
}
