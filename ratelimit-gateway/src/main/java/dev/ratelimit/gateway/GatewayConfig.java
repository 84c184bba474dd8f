package dev.ratelimit.gateway;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's configuration: API keys mapped to tenants and tiers, the tiers' windows and
 * concurrency caps, the upstream caps per model and the request limits, read from YAML and
 * validated as a whole, with errors that name the bad entry (and never print a key).
 *
 * @param keys the API keys, in file order
 * @param tiers the tiers by name
 * @param models the upstream caps by model name
 * @param limits body size, token default, timeouts, the slot lease and fail-open
 * @param source where the configuration came from, for messages
 */
record GatewayConfig(
        List<ApiKey> keys, Map<String, TierConfig> tiers, Map<String, ModelCap> models, Limits limits, String source) {

    static final String DEFAULT_RESOURCE = "default-gateway.yaml";

    /**
     * One API key.
     *
     * @param sha256 the key's SHA-256 digest: keys are compared by digest in constant time and the
     *     key itself is not kept
     * @param tenant whose budgets the key spends
     * @param tier the tenant's tier
     */
    record ApiKey(byte[] sha256, String tenant, TierConfig tier) {}

    /**
     * One tier.
     *
     * @param name the tier's name
     * @param tier its windows, requests and tokens
     * @param requests its request windows only, for the pass-through paths
     * @param maxConcurrent the most requests of one tenant in flight at once
     */
    record TierConfig(String name, Tier tier, Tier requests, int maxConcurrent) {}

    /**
     * The upstream's limits for one model, shared by all tenants.
     *
     * @param model the model name as requests give it
     * @param rpm requests per minute, 0 for no cap
     * @param tpm tokens per minute, 0 for no cap
     * @param budget the shared budget {@code model:<model>} with windows {@code rpm} and {@code tpm}
     */
    record ModelCap(String model, long rpm, long tpm, SharedBudget budget) {

        static ModelCap of(String model, long rpm, long tpm) {
            List<Window> windows = new ArrayList<>();
            if (rpm > 0) {
                windows.add(new Window("rpm", rpm, Duration.ofMinutes(1)));
            }
            if (tpm > 0) {
                windows.add(Window.tokens("tpm", tpm, Duration.ofMinutes(1)));
            }
            return new ModelCap(model, rpm, tpm, new SharedBudget("model:" + model, windows));
        }
    }

    /**
     * Request limits and timeouts.
     *
     * @param maxBodyBytes the largest request body accepted
     * @param defaultMaxCompletionTokens the completion tokens reserved when a request names no maximum
     * @param connectTimeout the upstream connect timeout
     * @param firstByteTimeout the wait for the upstream's response headers
     * @param idleTimeout the longest silence within an upstream response
     * @param slotLease how long an in-flight slot lives without renewal
     * @param failOpen whether requests pass (marked degraded) while the store is down, or get 503
     */
    record Limits(
            int maxBodyBytes,
            long defaultMaxCompletionTokens,
            Duration connectTimeout,
            Duration firstByteTimeout,
            Duration idleTimeout,
            Duration slotLease,
            boolean failOpen) {}

    /** The file's shape, as Jackson reads it; validated into a {@link GatewayConfig}. */
    record RawConfig(
            @Nullable List<RawKey> keys,
            @Nullable LinkedHashMap<String, RawTier> tiers,
            @Nullable LinkedHashMap<String, RawModel> models,
            @Nullable RawLimits limits) {}

    record RawKey(
            @Nullable String key,
            @Nullable String tenant,
            @Nullable String tier) {}

    record RawTier(
            @Nullable Integer maxConcurrent, @Nullable Map<String, String> windows) {}

    record RawModel(@Nullable Long rpm, @Nullable Long tpm) {}

    record RawLimits(
            @Nullable Integer maxBodyBytes,
            @Nullable Long defaultMaxCompletionTokens,
            @Nullable Integer upstreamConnectTimeoutMs,
            @Nullable Integer upstreamFirstByteTimeoutMs,
            @Nullable Integer upstreamIdleTimeoutMs,
            @Nullable Integer slotLeaseSeconds,
            @Nullable Boolean failOpen) {}

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);

    /**
     * Loads the configuration from {@code GATEWAY_CONFIG}'s file, or the built-in default when it is
     * unset.
     */
    static GatewayConfig load(@Nullable String file) throws IOException {
        if (file == null || file.isBlank()) {
            try (InputStream in = GatewayConfig.class.getResourceAsStream(DEFAULT_RESOURCE)) {
                return parse(Objects.requireNonNull(in, DEFAULT_RESOURCE), "built-in " + DEFAULT_RESOURCE);
            }
        }
        Path path = Path.of(file.trim());
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("GATEWAY_CONFIG names no readable file: " + path);
        }
        try (InputStream in = Files.newInputStream(path)) {
            return parse(in, path.toString());
        }
    }

    static GatewayConfig parse(InputStream yaml, String source) throws IOException {
        RawConfig raw;
        try {
            raw = YAML.readValue(yaml, RawConfig.class);
        } catch (UnrecognizedPropertyException e) {
            String path = path(e);
            String parent = path.endsWith("." + e.getPropertyName())
                    ? path.substring(0, path.length() - e.getPropertyName().length() - 1)
                    : path;
            throw new IllegalArgumentException(source + ": " + parent + ": unknown entry '" + e.getPropertyName()
                    + "'; known entries: "
                    + e.getKnownPropertyIds().stream()
                            .map(Object::toString)
                            .sorted()
                            .collect(Collectors.joining(", ")));
        } catch (JsonMappingException e) {
            throw new IllegalArgumentException(source + ": " + path(e) + ": " + firstLine(e.getOriginalMessage()));
        } catch (JacksonException e) {
            throw new IllegalArgumentException(source + ": not valid YAML: " + firstLine(e.getOriginalMessage()));
        }
        if (raw == null) {
            throw new IllegalArgumentException(source + ": the file is empty");
        }
        try {
            return validate(raw, source);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
    }

    private static GatewayConfig validate(RawConfig raw, String source) {
        if (raw.tiers() == null || raw.tiers().isEmpty()) {
            throw new IllegalArgumentException("tiers: define at least one tier");
        }
        Map<String, TierConfig> tiers = new LinkedHashMap<>();
        raw.tiers().forEach((name, tier) -> tiers.put(name, tier(name, tier)));

        if (raw.keys() == null || raw.keys().isEmpty()) {
            throw new IllegalArgumentException("keys: define at least one API key");
        }
        List<ApiKey> keys = new ArrayList<>();
        Map<String, String> tierOfTenant = new HashMap<>();
        for (int i = 0; i < raw.keys().size(); i++) {
            RawKey key = raw.keys().get(i);
            String at = "keys[" + i + "]";
            if (key == null) {
                throw new IllegalArgumentException(at + ": empty entry");
            }
            if (key.key() == null || key.key().isBlank()) {
                throw new IllegalArgumentException(at + ".key: missing");
            }
            if (!key.key().equals(key.key().strip()) || key.key().chars().anyMatch(c -> c <= ' ' || c > '~')) {
                throw new IllegalArgumentException(at + ".key: must be printable ASCII without spaces");
            }
            String tenant = key.tenant();
            if (tenant == null || tenant.isBlank()) {
                throw new IllegalArgumentException(at + ".tenant: missing");
            }
            // the servlet filter keeps "ip:" ids for anonymous callers and escapes ids that look like them
            if (tenant.startsWith("ip:") || tenant.startsWith("\\")) {
                throw new IllegalArgumentException(
                        at + ".tenant: must not start with 'ip:' or '\\', was '" + tenant + "'");
            }
            TierConfig tier = key.tier() == null ? null : tiers.get(key.tier());
            if (tier == null) {
                throw new IllegalArgumentException(
                        at + ".tier: '" + key.tier() + "' is not one of the tiers " + tiers.keySet());
            }
            String earlier = tierOfTenant.putIfAbsent(tenant, tier.name());
            if (earlier != null && !earlier.equals(tier.name())) {
                throw new IllegalArgumentException(
                        at + ".tier: tenant '" + tenant + "' already has tier '" + earlier + "' from an earlier key");
            }
            byte[] digest = sha256(key.key());
            for (int j = 0; j < keys.size(); j++) {
                if (MessageDigest.isEqual(keys.get(j).sha256(), digest)) {
                    throw new IllegalArgumentException(at + ".key: the same key as keys[" + j + "]");
                }
            }
            keys.add(new ApiKey(digest, tenant, tier));
        }

        Map<String, ModelCap> models = new LinkedHashMap<>();
        if (raw.models() != null) {
            raw.models().forEach((model, cap) -> {
                String at = "models." + model;
                if (model.isBlank()) {
                    throw new IllegalArgumentException("models: a model name is blank");
                }
                if (cap == null || (cap.rpm() == null && cap.tpm() == null)) {
                    throw new IllegalArgumentException(at + ": set rpm, tpm or both");
                }
                long rpm = cap.rpm() == null ? 0 : positive(cap.rpm(), at + ".rpm");
                long tpm = cap.tpm() == null ? 0 : positive(cap.tpm(), at + ".tpm");
                models.put(model, ModelCap.of(model, rpm, tpm));
            });
        }
        // file order is kept: the status page and the banner list tiers and models as written
        return new GatewayConfig(
                List.copyOf(keys),
                Collections.unmodifiableMap(tiers),
                Collections.unmodifiableMap(models),
                limits(raw.limits()),
                source);
    }

    private static TierConfig tier(String name, @Nullable RawTier raw) {
        String at = "tiers." + name;
        if (raw == null || raw.windows() == null || raw.windows().isEmpty()) {
            throw new IllegalArgumentException(at + ".windows: define at least one window");
        }
        if (raw.maxConcurrent() == null) {
            throw new IllegalArgumentException(at + ".max-concurrent: missing");
        }
        int maxConcurrent = (int) positive(raw.maxConcurrent(), at + ".max-concurrent");
        // The library's tier-file parser reads the window specs, so the syntax and its checks are the library's.
        Tier tier;
        try {
            tier = TierPolicy.fromMap(Map.of("tier", Map.of(name, raw.windows())))
                    .resolve(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(at + ".windows: " + e.getMessage(), e);
        }
        List<Window> requestWindows =
                tier.windows().stream().filter(window -> !window.isTokens()).toList();
        if (requestWindows.isEmpty()) {
            throw new IllegalArgumentException(at + ".windows: define at least one request window (N/length)");
        }
        return new TierConfig(name, tier, new Tier(name, requestWindows), maxConcurrent);
    }

    private static Limits limits(@Nullable RawLimits raw) {
        RawLimits limits = raw == null ? new RawLimits(null, null, null, null, null, null, null) : raw;
        return new Limits(
                (int) positiveOr(limits.maxBodyBytes(), 1_048_576, "limits.max-body-bytes"),
                positiveOr(limits.defaultMaxCompletionTokens(), 1_024, "limits.default-max-completion-tokens"),
                Duration.ofMillis(
                        positiveOr(limits.upstreamConnectTimeoutMs(), 5_000, "limits.upstream-connect-timeout-ms")),
                Duration.ofMillis(positiveOr(
                        limits.upstreamFirstByteTimeoutMs(), 60_000, "limits.upstream-first-byte-timeout-ms")),
                Duration.ofMillis(
                        positiveOr(limits.upstreamIdleTimeoutMs(), 30_000, "limits.upstream-idle-timeout-ms")),
                Duration.ofSeconds(positiveOr(limits.slotLeaseSeconds(), 60, "limits.slot-lease-seconds")),
                limits.failOpen() == null || limits.failOpen());
    }

    private static long positiveOr(@Nullable Number value, long otherwise, String at) {
        return value == null ? otherwise : positive(value, at);
    }

    private static long positive(Number value, String at) {
        if (value.longValue() < 1) {
            throw new IllegalArgumentException(at + ": must be at least 1, was " + value);
        }
        return value.longValue();
    }

    /** The tenants and their tiers, in key order. */
    Map<String, TierConfig> tenants() {
        Map<String, TierConfig> tenants = new LinkedHashMap<>();
        for (ApiKey key : keys) {
            tenants.putIfAbsent(key.tenant(), key.tier());
        }
        return tenants;
    }

    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static String path(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference reference : e.getPath()) {
            if (reference.getIndex() >= 0) {
                path.append('[').append(reference.getIndex()).append(']');
            } else if (reference.getFieldName() != null) {
                if (path.length() > 0) {
                    path.append('.');
                }
                path.append(reference.getFieldName());
            }
        }
        return path.length() == 0 ? "(top level)" : path.toString();
    }

    private static String firstLine(@Nullable String message) {
        if (message == null) {
            return "unreadable";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
