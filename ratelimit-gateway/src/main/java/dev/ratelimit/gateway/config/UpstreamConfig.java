package dev.ratelimit.gateway.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One upstream of the configuration's {@code upstreams:} section: where it is, the key the gateway
 * sends it, the API it speaks and the models it serves.
 *
 * <pre>{@code
 * upstreams:
 *   openai:
 *     url: https://api.openai.com/v1
 *     api-key: ${OPENAI_API_KEY}
 *     protocol: openai
 *     models: [gpt-4o, gpt-4o-mini, "text-embedding-*"]
 *   anthropic:
 *     url: https://api.anthropic.com/v1
 *     api-key: ${ANTHROPIC_API_KEY}
 *     protocol: anthropic
 *     models: ["claude-*"]
 *     http-version: 2   # optional, default "1.1"
 *   gemini:
 *     url: https://generativelanguage.googleapis.com/v1beta
 *     api-key: ${GEMINI_API_KEY}
 *     protocol: gemini
 *     models: ["gemini-*"]
 * }</pre>
 *
 * @param name the upstream's name, as metrics and the status page show it
 * @param url the base URL, the API's paths ({@code /chat/completions}, {@code /messages}, {@code
 *     /models/{model}:generateContent}) below it
 * @param apiKey the key the gateway sends ({@code Authorization: Bearer} to OpenAI's protocol, {@code
 *     x-api-key} to Anthropic's, {@code x-goog-api-key} to Gemini's), or {@code null} for none
 * @param protocol the API it speaks
 * @param models exact model names and patterns where {@code *} stands for any characters
 * @param probeInterval while a model of this upstream cools down, one request per interval is let
 *     through as a probe
 * @param http2 whether the gateway speaks HTTP/2 to it ({@code http-version: 2}): over {@code https}
 *     it offers {@code h2} before {@code http/1.1} by ALPN and takes what the upstream picks; over
 *     {@code http} it speaks {@code h2c} with prior knowledge. Many streams then share a few
 *     connections instead of holding one each. Otherwise HTTP/1.1, a connection per exchange.
 */
public record UpstreamConfig(
        String name,
        URI url,
        @Nullable String apiKey,
        Protocol protocol,
        List<String> models,
        Duration probeInterval,
        boolean http2) {

    /** The probe interval when an upstream sets none. */
    public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(5);

    public UpstreamConfig(
            String name,
            URI url,
            @Nullable String apiKey,
            Protocol protocol,
            List<String> models,
            Duration probeInterval) {
        this(name, url, apiKey, protocol, models, probeInterval, false);
    }

    /** The APIs the gateway relays. */
    public enum Protocol {
        /** OpenAI's: chat completions, embeddings and the rest under {@code /v1}. */
        OPENAI,
        /** Anthropic's Messages API. */
        ANTHROPIC,
        /** Google's Gemini API: {@code generateContent} and {@code streamGenerateContent} under {@code /v1beta}. */
        GEMINI;

        /** The name as the configuration writes it. */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The file's shape of one entry. */
    record Raw(
            @Nullable String url,
            @Nullable String apiKey,
            @Nullable String protocol,
            @Nullable List<String> models,
            @Nullable Integer probeIntervalSeconds,
            @Nullable String httpVersion) {}

    /** Whether this upstream serves {@code model} by name exactly. */
    public boolean servesExactly(String model) {
        return models.contains(model);
    }

    /** Whether one of this upstream's patterns matches {@code model}. */
    public boolean servesByPattern(String model) {
        for (String pattern : models) {
            if (pattern.contains("*") && matches(pattern, model)) {
                return true;
            }
        }
        return false;
    }

    /** A glob where {@code *} is any run of characters (none included), everything else literal. */
    public static boolean matches(String pattern, String model) {
        String[] parts = pattern.split("\\*", -1);
        if (!model.startsWith(parts[0])) {
            return false;
        }
        int at = parts[0].length();
        for (int i = 1; i < parts.length - 1; i++) {
            int found = model.indexOf(parts[i], at);
            if (found < 0) {
                return false;
            }
            at = found + parts[i].length();
        }
        String last = parts[parts.length - 1];
        return parts.length == 1 ? model.equals(pattern) : model.length() - at >= last.length() && model.endsWith(last);
    }

    /** Validates the section; errors are recorded, each naming its entry (never printing a key). */
    static List<UpstreamConfig> validate(@Nullable LinkedHashMap<String, @Nullable Raw> raw, List<String> errors) {
        List<UpstreamConfig> upstreams = new ArrayList<>();
        if (raw == null) {
            return upstreams;
        }
        if (raw.isEmpty()) {
            errors.add("upstreams: name at least one upstream, or leave the section out");
        }
        for (Map.Entry<String, @Nullable Raw> entry : raw.entrySet()) {
            String at = "upstreams." + entry.getKey();
            Raw upstream = entry.getValue();
            try {
                upstreams.add(one(entry.getKey(), upstream, at));
            } catch (IllegalArgumentException e) {
                errors.add(String.valueOf(e.getMessage()));
            }
        }
        return upstreams;
    }

    private static UpstreamConfig one(String name, @Nullable Raw raw, String at) {
        if (!name.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException(at + ": a name is letters, digits, '.', '_' or '-'");
        }
        if (raw == null) {
            throw new IllegalArgumentException(at + ": set url, protocol and models");
        }
        URI url = url(raw.url(), at + ".url");
        Protocol protocol;
        if (raw.protocol() == null) {
            throw new IllegalArgumentException(at + ".protocol: missing (openai, anthropic or gemini)");
        }
        try {
            protocol = Protocol.valueOf(raw.protocol().trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    at + ".protocol: must be openai, anthropic or gemini, was '" + raw.protocol() + "'", e);
        }
        List<String> models = raw.models();
        if (models == null || models.isEmpty()) {
            throw new IllegalArgumentException(at + ".models: list the models it serves (names or patterns such as"
                    + " \"claude-*\"; \"*\" for every model)");
        }
        for (int i = 0; i < models.size(); i++) {
            String model = models.get(i);
            if (model == null || model.isBlank() || !model.equals(model.strip())) {
                throw new IllegalArgumentException(at + ".models[" + i + "]: a model name or pattern, was blank");
            }
        }
        Integer probe = raw.probeIntervalSeconds();
        if (probe != null && probe < 1) {
            throw new IllegalArgumentException(at + ".probe-interval-seconds: must be at least 1, was " + probe);
        }
        String key = raw.apiKey() == null || raw.apiKey().isBlank()
                ? null
                : raw.apiKey().trim();
        return new UpstreamConfig(
                name,
                url,
                key,
                protocol,
                List.copyOf(models),
                probe == null ? DEFAULT_PROBE_INTERVAL : Duration.ofSeconds(probe),
                http2(raw.httpVersion(), at + ".http-version"));
    }

    /**
     * Whether an {@code http-version} setting asks for HTTP/2: {@code "2"}, or {@code "1.1"} (the
     * default, when {@code null}) for HTTP/1.1; {@code at} names the setting in the message.
     */
    public static boolean http2(@Nullable String value, String at) {
        String version = value == null ? "1.1" : value.trim();
        if (!version.equals("1.1") && !version.equals("2")) {
            throw new IllegalArgumentException(at + ": must be \"1.1\" or \"2\", was '" + value + "'");
        }
        return version.equals("2");
    }

    /** An http(s) URL with a host; {@code at} names the setting in the message. */
    public static URI url(@Nullable String value, String at) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(at + ": missing (such as https://api.openai.com/v1)");
        }
        try {
            URI uri = new URI(value.trim());
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException(
                        at + ": must be an http(s) URL such as https://api.openai.com/v1, was '" + value + "'");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(at + ": not a URL: " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() { // never the key
        return "UpstreamConfig[" + name + ", " + url + ", " + protocol.id() + ", " + models + (http2 ? ", HTTP/2" : "")
                + "]";
    }
}
