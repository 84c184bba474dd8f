package dev.ratelimit.gateway.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ratelimit.api.Leasing;
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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's configuration: API keys mapped to tenants and tiers, the tiers' windows and
 * concurrency caps, the upstream caps per model and the request limits, read from YAML and
 * validated as a whole, with errors that name the bad entry (and never print a key).
 *
 * @param keys the API keys, in file order
 * @param tiers the tiers by name
 * @param models the upstream caps by model name; {@link #ANY_MODEL} for every model not listed
 * @param limits body size, token default, timeouts, the slot lease and the store failure mode
 * @param server where to listen and how long a shutdown waits for requests in flight
 * @param passthrough the {@code /v1} paths besides the metered ones that are relayed upstream;
 *     every other {@code /v1} path is 404 and charged nothing
 * @param source where the configuration came from, for messages
 * @param upstreams the {@code upstreams:} section, in file order; empty when the file has none
 *     ({@code UPSTREAM_URL} or the built-in mock model then serve every model)
 * @param spending the teams, organisations and prices: what requests cost and who else pays
 * @param alerts the budget alerts: thresholds and where they are posted ({@code BudgetAlerts})
 * @param admin the admin API's keys and the Redis prefix of the keys it manages
 */
public record GatewayConfig(
        List<ApiKey> keys,
        Map<String, TierConfig> tiers,
        Map<String, ModelCap> models,
        Limits limits,
        ServerSettings server,
        List<Route> passthrough,
        String source,
        List<UpstreamConfig> upstreams,
        Spending spending,
        AlertSettings alerts,
        Admin admin) {

    public static final String DEFAULT_RESOURCE = "default-gateway.yaml";
    static final int DEFAULT_SHUTDOWN_SECONDS = 30;

    /** What a stream's relay holds for a slow client at most, by default, before it pauses the upstream. */
    static final int DEFAULT_STREAM_BUFFER_BYTES = 64 * 1024;

    /**
     * The output reserved per candidate of a Gemini request without {@code maxOutputTokens}: the
     * Gemini API's own default for its 2.0 models (its 2.5 models allow up to 65,536; an answer
     * longer than the reservation is charged in full all the same).
     */
    static final long GEMINI_DEFAULT_MAX_OUTPUT_TOKENS = 8_192;

    /**
     * The {@code models:} entry whose cap applies to every model not listed: one cap that all of
     * them share, as budget {@code model:*}.
     */
    public static final String ANY_MODEL = "*";

    /** The pass-through paths when the file lists none: the model list and one model. */
    public static final List<String> DEFAULT_PASSTHROUGH = List.of("GET /v1/models", "GET /v1/models/{id}");

    /**
     * One pass-through entry, {@code METHOD /v1/path}, where a segment written {@code {name}} stands
     * for any one segment.
     *
     * @param method the HTTP method, upper case
     * @param segments the path's segments after the leading {@code /}; {@code null} for a wildcard
     * @param entry the entry as written, for messages
     */
    public record Route(String method, List<@Nullable String> segments, String entry) {

        /**
         * Whether this entry allows the method on the (decoded) path; {@code OPTIONS} (a CORS
         * preflight) is allowed on every path an entry lists.
         */
        public boolean matches(String requestMethod, String path) {
            if (!(method.equals(requestMethod) || requestMethod.equals("OPTIONS")) || !path.startsWith("/")) {
                return false;
            }
            String[] parts = path.substring(1).split("/", -1);
            if (parts.length != segments.size()) {
                return false;
            }
            for (int i = 0; i < parts.length; i++) {
                String segment = segments.get(i);
                if (parts[i].isEmpty() || (segment != null && !segment.equals(parts[i]))) {
                    return false;
                }
            }
            return true;
        }

        /**
         * OpenAI's token-metered paths, which are never relayed unmetered (the protocol's endpoint
         * table names the same: {@code EndpointTableTest} holds them equal).
         */
        public static final java.util.Set<String> METERED_PATHS =
                java.util.Set.of("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses");

        public static Route parse(String entry, String at) {
            String[] parts = entry.split(" ", -1);
            if (parts.length != 2
                    || !parts[0].matches("[A-Z]+")
                    || !parts[1].startsWith("/v1/")
                    || parts[1].endsWith("/")
                    || parts[1].contains("//")) {
                throw new IllegalArgumentException(
                        at + ": must be \"METHOD /v1/path\" such as \"GET /v1/models/{id}\"," + " was '" + entry + "'");
            }
            if (METERED_PATHS.contains(parts[1])) {
                throw new IllegalArgumentException(at + ": " + parts[1]
                        + " is a metered endpoint (POST only), never relayed, was '" + entry + "'");
            }
            if (parts[1].matches("/v1/(files|batches|messages/batches)(/.*)?")) {
                throw new IllegalArgumentException(at + ": " + parts[1]
                        + " belongs to a batch API, which the gateway meters itself (docs/gateway.md#batches), was '"
                        + entry + "'");
            }
            List<@Nullable String> segments = new ArrayList<>();
            for (String segment : parts[1].substring(1).split("/")) {
                boolean wildcard = segment.matches("\\{[A-Za-z_][A-Za-z0-9_]*}");
                if (!wildcard && (segment.contains("{") || segment.contains("}"))) {
                    throw new IllegalArgumentException(
                            at + ": a wildcard is a whole segment such as {id}, was '" + entry + "'");
                }
                segments.add(wildcard ? null : segment);
            }
            return new Route(parts[0], Collections.unmodifiableList(segments), entry);
        }
    }

    /**
     * One API key.
     *
     * @param sha256 the key's SHA-256 digest: keys are compared by digest in constant time and the
     *     key itself is not kept
     * @param tenant whose budgets the key spends
     * @param tier the tenant's tier
     * @param team the tenant's team, or {@code null} when it belongs to none
     */
    public record ApiKey(
            byte[] sha256,
            String tenant,
            TierConfig tier,
            Spending.@Nullable Team team,
            @Nullable SharedBudget budget) {

        /** A key without windows of its own. */
        ApiKey(byte[] sha256, String tenant, TierConfig tier, Spending.@Nullable Team team) {
            this(sha256, tenant, tier, team, null);
        }
    }

    /**
     * The admin API ({@code admin:}): who may manage keys, and where the managed keys are kept.
     *
     * @param keys the SHA-256 digests of the admin keys; none means every admin call is refused
     * @param prefix the prefix of the managed keys' Redis hash and channel
     */
    public record Admin(List<byte[]> keys, String prefix) {

        static final String DEFAULT_PREFIX = "ratelimit";
        static final Admin NONE = new Admin(List.of(), DEFAULT_PREFIX);
    }

    /**
     * One tier.
     *
     * @param name the tier's name
     * @param tier its windows, requests and tokens
     * @param requests its request windows only, for the pass-through paths
     * @param maxConcurrent the most requests of one tenant in flight at once
     * @param models windows each tenant of the tier has for one model apart, by model name (a
     *     tighter budget for an expensive model), charged with the tier's own windows
     */
    public record TierConfig(
            String name, Tier tier, Tier requests, int maxConcurrent, Map<String, List<Window>> models) {

        /**
         * Tells whether a window of the tier, or of its per-model limits, counts money.
         *
         * @return {@code true} when the tier spends in money somewhere
         */
        boolean spends() {
            return Spending.spends(tier.windows()) || models.values().stream().anyMatch(Spending::spends);
        }

        /**
         * Returns this tier with every window in shadow, its per-model windows too.
         *
         * @param libraryName the name of the library's tier: the metrics' {@code tier} tag and what the
         *     pass-through paths' filter looks the tier up by
         * @return the copy, under the same name in the file
         */
        TierConfig inShadow(String libraryName) {
            return new TierConfig(
                    name,
                    new Tier(libraryName, ShadowMode.windows(true, tier.windows())),
                    new Tier(libraryName, ShadowMode.windows(true, requests.windows())),
                    maxConcurrent,
                    Collections.unmodifiableMap(ShadowMode.perModel(true, models)));
        }
    }

    /**
     * Returns the upstream cap a request for {@code model} is charged to: the model's own entry,
     * else the {@code "*"} entry (shared by every model not listed), else none.
     *
     * @param model the model name as the request gives it
     * @return the cap, or {@code null} when the model has none
     */
    @Nullable
    public ModelCap capOf(String model) {
        ModelCap cap = models.get(model);
        return cap != null ? cap : models.get(ANY_MODEL);
    }

    /**
     * Returns the warning to log at start when models not listed under {@code models:} have no
     * upstream cap (there is no {@code "*"} entry), naming the models that have one.
     *
     * @return the warning, or {@code null} when every model is capped
     */
    @Nullable
    public String uncappedWarning() {
        if (models.containsKey(ANY_MODEL)) {
            return null;
        }
        return (models.isEmpty()
                        ? "No model has an upstream cap (models: is empty)"
                        : "Only " + String.join(", ", models.keySet()) + (models.size() == 1 ? " has" : " have")
                                + " an upstream cap")
                + "; requests for any other model reach the upstream limited by the tenants' tiers alone."
                + " Add a \"*\" entry under models: for a cap that every model not listed shares.";
    }

    /**
     * Returns the warnings to log when this configuration comes into force: {@link #uncappedWarning()}
     * and {@link #unpricedWarning()}, those that apply.
     *
     * @return the warnings, none when the configuration gives no cause
     */
    public List<String> warnings() {
        List<String> warnings = new ArrayList<>(2);
        String uncapped = uncappedWarning();
        if (uncapped != null) {
            warnings.add(uncapped);
        }
        String unpriced = unpricedWarning();
        if (unpriced != null) {
            warnings.add(unpriced);
        }
        return warnings;
    }

    /**
     * Returns the warning to log at start when spend windows apply somewhere and models listed
     * under {@code models:} have no price: requests for those models are refused wherever a spend
     * window applies, since they cannot be charged in money.
     *
     * @return the warning, or {@code null} when no spend window applies or every listed model has a
     *     price
     */
    @Nullable
    String unpricedWarning() {
        boolean spends = tiers.values().stream().anyMatch(TierConfig::spends)
                || spending.teams().values().stream().anyMatch(Spending::spends);
        List<String> unpriced = spending.unpriced(models.keySet());
        if (!spends || unpriced.isEmpty()) {
            return null;
        }
        return "Spend windows apply, and " + String.join(", ", unpriced) + (unpriced.size() == 1 ? " has" : " have")
                + " no price under prices:; requests for "
                + (unpriced.size() == 1 ? "it" : "them")
                + " are refused wherever a spend window applies (a model that cannot be charged is never let"
                + " through free).";
    }

    /**
     * The upstream's limits for one model, shared by all tenants.
     *
     * @param model the model name as requests give it
     * @param rpm requests per minute, 0 for no cap
     * @param tpm tokens per minute, 0 for no cap
     * @param budget the shared budget {@code model:<model>} with windows {@code rpm} and {@code tpm};
     *     {@code null} for a model that sets neither (only {@code batch-tokens})
     * @param shares the most of the cap the tenants of one tier may take together, by tier name:
     *     budgets {@code model:<model>/share:<tier>} with {@code rpm} and {@code tpm} at the tier's
     *     percentage of the cap (rounded down, at least 1), charged with the cap itself
     * @param percents the percentage of each share, by tier name, for messages and the status page
     * @param batchTokens the tokens the model's batches may take within a window (OpenAI's
     *     enqueued-token limit), as budget {@code model:<model>/batch-tokens}: a batch is charged to it
     *     in place of {@code rpm}, {@code tpm} and the shares; {@code null} when not configured
     */
    public record ModelCap(
            String model,
            long rpm,
            long tpm,
            @Nullable SharedBudget budget,
            Map<String, SharedBudget> shares,
            Map<String, Integer> percents,
            @Nullable SharedBudget batchTokens) {

        static ModelCap of(String model, long rpm, long tpm) {
            return of(model, rpm, tpm, Map.of(), null, null);
        }

        /**
         * The cap, leased to each gateway ({@code lease: auto}) when {@code leasing} is given: the cap
         * itself, not the tiers' shares of it, which stay exact per request.
         */
        static ModelCap of(
                String model,
                long rpm,
                long tpm,
                Map<String, Integer> percents,
                @Nullable Window batchTokens,
                @Nullable Leasing leasing) {
            boolean capped = rpm > 0 || tpm > 0;
            if (!capped && !percents.isEmpty()) {
                throw new IllegalArgumentException("models." + model + ".shares: a share divides rpm and tpm; set one");
            }
            if (!capped && leasing != null) {
                throw new IllegalArgumentException("models." + model + ".lease: leases rpm and tpm; set one");
            }
            Map<String, SharedBudget> shares = new LinkedHashMap<>();
            percents.forEach((tier, percent) -> shares.put(
                    tier,
                    new SharedBudget(
                            "model:" + model + "/share:" + tier,
                            windows(Math.max(1, rpm * percent / 100), Math.max(1, tpm * percent / 100), rpm, tpm))));
            return new ModelCap(
                    model,
                    rpm,
                    tpm,
                    capped ? new SharedBudget("model:" + model, windows(rpm, tpm, rpm, tpm), leasing) : null,
                    Collections.unmodifiableMap(shares),
                    Map.copyOf(percents),
                    batchTokens == null
                            ? null
                            : new SharedBudget("model:" + model + "/batch-tokens", List.of(batchTokens)));
        }

        private static List<Window> windows(long rpm, long tpm, long capRpm, long capTpm) {
            List<Window> windows = new ArrayList<>();
            if (capRpm > 0) {
                windows.add(new Window("rpm", rpm, Duration.ofMinutes(1)));
            }
            if (capTpm > 0) {
                windows.add(Window.tokens("tpm", tpm, Duration.ofMinutes(1)));
            }
            return windows;
        }
    }

    /**
     * Request limits and timeouts.
     *
     * @param maxBodyBytes the largest request body accepted
     * @param defaultMaxCompletionTokens the completion tokens reserved when a request names no maximum
     * @param connectTimeout the upstream connect timeout
     * @param firstByteTimeout the wait for the upstream's response headers
     * @param idleTimeout the longest silence within an upstream response, while the gateway waits for
     *     its next bytes (a stream paused for a slow client is not silent)
     * @param streamBufferBytes the most bytes of a response a relay holds for a client that has not
     *     taken them yet: past it the relay stops reading from the upstream until the client catches up
     * @param slotLease how long an in-flight slot lives without renewal
     * @param storeTimeout how long one store call may take before it counts as failed (read at start)
     * @param failOpen whether requests pass (degraded) while the store cannot be reached, or get 503
     * @param breaker the circuit breaker before the store (read at start)
     * @param expectedInstances how many gateways share the store: a window that decides locally
     *     while the store cannot ({@code fail-local}) admits its limit divided by this (read at start)
     * @param geminiDefaultMaxOutputTokens the output tokens reserved per candidate when a Gemini
     *     request sets no {@code generationConfig.maxOutputTokens}: the model's own default, which
     *     the Gemini API applies then
     * @param maxFileBytes the largest upload {@code POST /v1/files} takes (a batch's input file), and
     *     the largest {@code POST /v1/messages/batches} body
     * @param batchPollInterval how often a gateway goes through the batches not settled yet and asks
     *     the upstream whether those it claims for the interval have ended, to settle them
     */
    public record Limits(
            int maxBodyBytes,
            long defaultMaxCompletionTokens,
            Duration connectTimeout,
            Duration firstByteTimeout,
            Duration idleTimeout,
            int streamBufferBytes,
            Duration slotLease,
            Duration storeTimeout,
            boolean failOpen,
            Breaker breaker,
            int expectedInstances,
            long geminiDefaultMaxOutputTokens,
            int maxFileBytes,
            Duration batchPollInterval) {}

    /**
     * The circuit breaker before the store, {@code limits.breaker.*}; the defaults are the library's.
     *
     * @param slidingWindowSize the calls it judges by (count-based window)
     * @param minimumNumberOfCalls the calls it needs before it may open
     * @param failureRateThreshold the percentage of failed calls that opens it
     * @param slowCallDuration a call slower than this counts as slow
     * @param slowCallRateThreshold the percentage of slow calls that opens it
     * @param waitInOpenState how long it stays open before probing
     * @param permittedCallsInHalfOpen the probe calls it lets through when half open
     */
    public record Breaker(
            int slidingWindowSize,
            int minimumNumberOfCalls,
            int failureRateThreshold,
            Duration slowCallDuration,
            int slowCallRateThreshold,
            Duration waitInOpenState,
            int permittedCallsInHalfOpen) {

        public static final Breaker DEFAULTS =
                new Breaker(10, 5, 50, Duration.ofSeconds(1), 50, Duration.ofMillis(500), 3);
    }

    record RawBreaker(
            @Nullable Integer slidingWindowSize,
            @Nullable Integer minimumNumberOfCalls,
            @Nullable Integer failureRateThreshold,
            @Nullable Integer slowCallDurationMs,
            @Nullable Integer slowCallRateThreshold,
            @Nullable Integer waitInOpenStateMs,
            @Nullable Integer permittedCallsInHalfOpen) {}

    /**
     * The listener and the shutdown.
     *
     * @param host the address to listen on, or {@code null} for the environment's or the default
     * @param port the port, or {@code null} for the environment's or the default
     * @param managementHost the management listener's address (status page, status JSON, metrics),
     *     or {@code null} for the environment's or the default
     * @param managementPort the management listener's port, or {@code null} for the environment's
     *     or the default
     * @param shutdownTimeout how long a shutdown lets requests in flight finish before it ends them
     * @param maxThreads the threads of the gateway's one pool: both listeners and the upstream client
     * @param maxConnections the most connections open on the API listener; a request on a connection
     *     opened beyond it is answered 503
     * @param clientIdleTimeout the longest a client may leave its connection silent: between requests,
     *     while sending one, or while not taking the bytes of an answer
     * @param watchConfig whether a change of the file is reloaded by itself ({@code SIGHUP} always is)
     * @param accessLog where the access log goes ({@code stdout}, {@code off} or a file), or {@code
     *     null} for the environment's or the default
     */
    public record ServerSettings(
            @Nullable String host,
            @Nullable Integer port,
            @Nullable String managementHost,
            @Nullable Integer managementPort,
            Duration shutdownTimeout,
            int maxThreads,
            int maxConnections,
            Duration clientIdleTimeout,
            boolean watchConfig,
            @Nullable String accessLog) {

        static final int DEFAULT_MAX_THREADS = 200;
        public static final int MIN_THREADS = 8;
        static final int DEFAULT_MAX_CONNECTIONS = 10_000;
        static final int DEFAULT_CLIENT_IDLE_TIMEOUT_MS = 30_000;
    }

    /** The file's shape, as Jackson reads it; validated into a {@link GatewayConfig}. */
    record RawConfig(
            @Nullable List<RawKey> keys,
            @Nullable LinkedHashMap<String, RawTier> tiers,
            @Nullable LinkedHashMap<String, RawModel> models,
            @Nullable RawLimits limits,
            @Nullable RawServer server,
            @Nullable RawManagement management,
            @Nullable List<String> passthrough,
            @Nullable LinkedHashMap<String, UpstreamConfig.@Nullable Raw> upstreams,
            @Nullable LinkedHashMap<String, Spending.@Nullable RawTeam> teams,
            @Nullable LinkedHashMap<String, Spending.@Nullable RawOrg> orgs,
            @Nullable LinkedHashMap<String, Spending.@Nullable RawPrice> prices,
            AlertSettings.@Nullable Raw alerts,
            @Nullable RawAdmin admin) {}

    record RawAdmin(
            @Nullable List<@Nullable RawAdminKey> keys,
            @Nullable String prefix) {}

    record RawAdminKey(@Nullable String key, @Nullable String keySha256) {}

    record RawManagement(@Nullable String host, @Nullable Integer port) {}

    record RawKey(
            @Nullable String key,
            @Nullable String keySha256,
            @Nullable String tenant,
            @Nullable String tier,
            @Nullable String team,
            @Nullable String mode) {}

    record RawTier(
            @Nullable Integer maxConcurrent,
            @Nullable Map<String, String> windows,
            @Nullable LinkedHashMap<String, @Nullable Map<String, String>> models,
            @Nullable String mode) {}

    record RawModel(
            @Nullable Long rpm,
            @Nullable Long tpm,
            @Nullable LinkedHashMap<String, String> shares,
            @Nullable String batchTokens,
            @Nullable String lease) {}

    record RawLimits(
            @Nullable Integer maxBodyBytes,
            @Nullable Long defaultMaxCompletionTokens,
            @Nullable Integer upstreamConnectTimeoutMs,
            @Nullable Integer upstreamFirstByteTimeoutMs,
            @Nullable Integer upstreamIdleTimeoutMs,
            @Nullable Integer streamBufferBytes,
            @Nullable Integer slotLeaseSeconds,
            @Nullable Integer storeTimeoutMs,
            @Nullable Boolean failOpen,
            @Nullable RawBreaker breaker,
            @Nullable Integer expectedInstances,
            @Nullable Long geminiDefaultMaxOutputTokens,
            @Nullable Integer maxFileBytes,
            @Nullable Integer batchPollIntervalSeconds) {}

    record RawServer(
            @Nullable String host,
            @Nullable Integer port,
            @Nullable Integer shutdownTimeoutSeconds,
            @Nullable Integer maxThreads,
            @Nullable Integer maxConnections,
            @Nullable Integer clientIdleTimeoutMs,
            @Nullable Boolean watchConfig,
            @Nullable String accessLog) {}

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT);

    /**
     * Loads the configuration from {@code GATEWAY_CONFIG}'s file, or the built-in default when it is
     * unset; {@code ${NAME}} in the file's values is replaced by the environment's variable.
     */
    public static GatewayConfig load(@Nullable String file, Map<String, String> environment) throws IOException {
        if (file == null || file.isBlank()) {
            try (InputStream in = GatewayConfig.class.getResourceAsStream(DEFAULT_RESOURCE)) {
                return parse(Objects.requireNonNull(in, DEFAULT_RESOURCE), "built-in " + DEFAULT_RESOURCE, environment);
            }
        }
        Path path = Path.of(file.trim());
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("GATEWAY_CONFIG names no readable file: " + path);
        }
        try (InputStream in = Files.newInputStream(path)) {
            return parse(in, path.toString(), environment);
        }
    }

    public static GatewayConfig parse(InputStream yaml, String source) throws IOException {
        return parse(yaml, source, Map.of());
    }

    /**
     * Reads and validates a whole file, reporting every error found at once (each names its entry,
     * none prints a key); only a file that is not YAML at all, or a value of the wrong type, stops at
     * the first.
     */
    public static GatewayConfig parse(InputStream yaml, String source, Map<String, String> environment)
            throws IOException {
        List<String> errors = new ArrayList<>();
        RawConfig raw;
        try {
            JsonNode tree = YAML.readTree(yaml);
            if (tree == null || tree.isMissingNode() || tree.isNull()) {
                throw new IllegalArgumentException(source + ": the file is empty");
            }
            substitute(tree, "", environment, errors);
            raw = YAML.readerFor(RawConfig.class)
                    .withHandler(new UnknownEntries(errors))
                    .readValue(YAML.treeAsTokens(tree));
        } catch (JsonMappingException e) {
            errors.add(path(e) + ": " + firstLine(e.getOriginalMessage()));
            throw failure(source, errors);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(source + ": not valid YAML: " + firstLine(e.getOriginalMessage()));
        }
        if (raw == null) {
            throw new IllegalArgumentException(source + ": the file is empty");
        }
        GatewayConfig config = validate(raw, source, errors);
        if (!errors.isEmpty()) {
            throw failure(source, errors);
        }
        return config;
    }

    private static IllegalArgumentException failure(String source, List<String> errors) {
        return new IllegalArgumentException(
                errors.size() == 1
                        ? source + ": " + errors.get(0)
                        : source + ": " + errors.size() + " errors:\n  " + String.join("\n  ", errors));
    }

    /** Records an unknown entry and reads on, so one start reports all of them. */
    private static final class UnknownEntries extends DeserializationProblemHandler {
        private final List<String> errors;

        UnknownEntries(List<String> errors) {
            this.errors = errors;
        }

        @Override
        public boolean handleUnknownProperty(
                DeserializationContext context,
                JsonParser parser,
                JsonDeserializer<?> deserializer,
                Object beanOrClass,
                String propertyName)
                throws IOException {
            String known = deserializer.getKnownPropertyNames().stream()
                    .map(Object::toString)
                    .sorted()
                    .collect(Collectors.joining(", "));
            errors.add(parent(parser.getParsingContext()) + ": unknown entry '" + propertyName + "'; known entries: "
                    + known);
            parser.skipChildren();
            return true;
        }

        private static String parent(JsonStreamContext context) {
            List<String> parts = new ArrayList<>();
            for (JsonStreamContext c = context.getParent(); c != null && !c.inRoot(); c = c.getParent()) {
                if (c.inArray()) {
                    parts.add(0, "[" + c.getCurrentIndex() + "]");
                } else if (c.getCurrentName() != null) {
                    parts.add(0, (c.getParent() != null && !c.getParent().inRoot() ? "." : "") + c.getCurrentName());
                }
            }
            return parts.isEmpty() ? "(top level)" : String.join("", parts);
        }
    }

    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

    /**
     * Replaces {@code ${NAME}} (or {@code ${NAME:-default}}) in every text value by the variable,
     * after the YAML is read, so a secret's characters never change the file's structure; an unset
     * variable without a default is an error naming the entry and the variable, never a value.
     */
    private static void substitute(JsonNode node, String at, Map<String, String> environment, List<String> errors) {
        if (node instanceof ObjectNode object) {
            List<String> names = new ArrayList<>();
            object.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                JsonNode child = object.get(name);
                String path = at.isEmpty() ? name : at + "." + name;
                if (child.isTextual()) {
                    object.put(name, expand(child.textValue(), path, environment, errors));
                } else {
                    substitute(child, path, environment, errors);
                }
            }
        } else if (node instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                JsonNode child = array.get(i);
                String path = at + "[" + i + "]";
                if (child.isTextual()) {
                    array.set(i, new TextNode(expand(child.textValue(), path, environment, errors)));
                } else {
                    substitute(child, path, environment, errors);
                }
            }
        }
    }

    private static String expand(String text, String at, Map<String, String> environment, List<String> errors) {
        Matcher matcher = VARIABLE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (matcher.find()) {
            String value = environment.get(matcher.group(1));
            if (value == null) {
                value = matcher.group(2);
            }
            if (value == null) {
                errors.add(at + ": the environment variable " + matcher.group(1) + " is not set");
                value = "";
            }
            matcher.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(out);
        return out.toString();
    }

    private static GatewayConfig validate(RawConfig raw, String source, List<String> errors) {
        Map<String, TierConfig> tiers = new LinkedHashMap<>();
        LinkedHashMap<String, RawTier> rawTiers = raw.tiers();
        if (rawTiers == null || rawTiers.isEmpty()) {
            errors.add("tiers: define at least one tier");
        } else {
            rawTiers.forEach((name, tier) -> collect(errors, () -> tiers.put(name, tier(name, tier))));
        }
        Spending spending = Spending.validate(raw.teams(), raw.orgs(), raw.prices(), errors);

        List<ApiKey> keys = new ArrayList<>();
        List<RawKey> rawKeys = raw.keys();
        if (rawKeys == null || rawKeys.isEmpty()) {
            errors.add("keys: define at least one API key");
        } else {
            Map<String, String> tierOfTenant = new HashMap<>();
            Map<String, String> teamOfTenant = new HashMap<>();
            for (int i = 0; i < rawKeys.size(); i++) {
                int index = i;
                collect(errors, () -> {
                    ApiKey key = key(index, rawKeys.get(index), tiers, raw.tiers(), tierOfTenant, keys);
                    keys.add(withTeam(index, key, rawKeys.get(index), spending, raw.teams(), teamOfTenant));
                });
            }
        }

        Map<String, ModelCap> models = new LinkedHashMap<>();
        if (raw.models() != null) {
            raw.models()
                    .forEach((model, cap) -> collect(errors, () -> {
                        String at = "models." + model;
                        if (model.isBlank()) {
                            throw new IllegalArgumentException("models: a model name is blank");
                        }
                        if (cap == null || (cap.rpm() == null && cap.tpm() == null && cap.batchTokens() == null)) {
                            throw new IllegalArgumentException(at + ": set rpm, tpm, batch-tokens or several");
                        }
                        long rpm = cap.rpm() == null ? 0 : positive(cap.rpm(), at + ".rpm");
                        long tpm = cap.tpm() == null ? 0 : positive(cap.tpm(), at + ".tpm");
                        models.put(
                                model,
                                ModelCap.of(
                                        model,
                                        rpm,
                                        tpm,
                                        shares(at + ".shares", cap.shares(), raw.tiers()),
                                        batchTokens(at + ".batch-tokens", cap.batchTokens()),
                                        leasing(at + ".lease", cap.lease())));
                    }));
        }
        Limits limits = null;
        try {
            limits = limits(raw.limits(), errors);
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
        }
        ServerSettings server = null;
        try {
            server = server(raw.server(), raw.management());
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
        }
        List<Route> passthrough = new ArrayList<>();
        List<String> rawPassthrough = raw.passthrough() == null ? DEFAULT_PASSTHROUGH : raw.passthrough();
        for (int i = 0; i < rawPassthrough.size(); i++) {
            String at = "passthrough[" + i + "]";
            String entry = rawPassthrough.get(i);
            if (entry == null) {
                errors.add(at + ": must be \"METHOD /v1/path\", was empty");
            } else {
                collect(errors, () -> passthrough.add(Route.parse(entry, at)));
            }
        }
        List<UpstreamConfig> upstreams = UpstreamConfig.validate(raw.upstreams(), errors);
        AlertSettings alerts = AlertSettings.validate(raw.alerts(), errors);
        Admin admin = admin(raw.admin(), keys, errors);
        if (!errors.isEmpty() || limits == null || server == null) {
            return DISCARDED; // the caller throws with the errors
        }
        // file order is kept: the status page and the banner list tiers and models as written
        return new GatewayConfig(
                List.copyOf(keys),
                Collections.unmodifiableMap(tiers),
                Collections.unmodifiableMap(models),
                limits,
                server,
                List.copyOf(passthrough),
                source,
                List.copyOf(upstreams),
                spending,
                alerts,
                admin);
    }

    /** Stands in for a configuration with errors, which is never used. */
    private static final GatewayConfig DISCARDED = new GatewayConfig(
            List.of(),
            Map.of(),
            Map.of(),
            new Limits(
                    1,
                    1,
                    Duration.ZERO,
                    Duration.ZERO,
                    Duration.ZERO,
                    1,
                    Duration.ZERO,
                    Duration.ZERO,
                    true,
                    Breaker.DEFAULTS,
                    1,
                    1,
                    1,
                    Duration.ZERO),
            new ServerSettings(null, null, null, null, Duration.ZERO, 1, 1, Duration.ZERO, false, null),
            List.of(),
            "discarded",
            List.of(),
            Spending.NONE,
            AlertSettings.DEFAULT,
            Admin.NONE);

    private static void collect(List<String> errors, Runnable check) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
        }
    }

    private static ApiKey key(
            int index,
            @Nullable RawKey key,
            Map<String, TierConfig> tiers,
            @Nullable Map<String, RawTier> declaredTiers,
            Map<String, String> tierOfTenant,
            List<ApiKey> earlier) {
        String at = "keys[" + index + "]";
        if (key == null) {
            throw new IllegalArgumentException(at + ": empty entry");
        }
        byte[] digest = digest(key, at);
        String tenant = key.tenant();
        if (tenant == null || tenant.isBlank()) {
            throw new IllegalArgumentException(at + ".tenant: missing");
        }
        // the servlet filter keeps "ip:" ids for anonymous callers and escapes ids that look like them
        if (tenant.startsWith("ip:") || tenant.startsWith("\\")) {
            throw new IllegalArgumentException(at + ".tenant: must not start with 'ip:' or '\\', was '" + tenant + "'");
        }
        TierConfig tier = key.tier() == null ? null : tiers.get(key.tier());
        if (tier == null) {
            if (key.tier() != null && declaredTiers != null && declaredTiers.containsKey(key.tier())) {
                throw new IllegalArgumentException(at + ".tier: '" + key.tier() + "' has errors of its own");
            }
            throw new IllegalArgumentException(at + ".tier: '" + key.tier() + "' is not one of the tiers "
                    + (declaredTiers == null ? "[]" : declaredTiers.keySet()));
        }
        String before = tierOfTenant.putIfAbsent(tenant, tier.name());
        if (before != null && !before.equals(tier.name())) {
            throw new IllegalArgumentException(
                    at + ".tier: tenant '" + tenant + "' already has tier '" + before + "' from an earlier key");
        }
        boolean shadow = ShadowMode.shadow(key.mode(), at + ".mode");
        TierConfig charged = shadow ? tier.inShadow(tier.name() + ShadowMode.KEY_TIER_SUFFIX) : tier;
        for (int j = 0; j < earlier.size(); j++) {
            ApiKey other = earlier.get(j);
            if (MessageDigest.isEqual(other.sha256(), digest)) {
                throw new IllegalArgumentException(at + ".key: the same key as keys[" + j + "]");
            }
            // the tier is the same (checked above): its name in the library differs by the mode alone
            if (other.tenant().equals(tenant)
                    && !other.tier().tier().name().equals(charged.tier().name())) {
                throw new IllegalArgumentException(at + ".mode: tenant '" + tenant + "' is "
                        + (shadow ? "enforced" : "in shadow") + " by keys[" + j + "]; a tenant's keys share its"
                        + " windows, so they take one mode");
            }
        }
        return new ApiKey(digest, tenant, charged, null);
    }

    /** The key with its tenant's team; a tenant belongs to one team, whichever of its keys names it. */
    private static ApiKey withTeam(
            int index,
            ApiKey key,
            RawKey raw,
            Spending spending,
            @Nullable Map<String, Spending.@Nullable RawTeam> declaredTeams,
            Map<String, String> teamOfTenant) {
        String at = "keys[" + index + "].team";
        String name = raw.team();
        String before = teamOfTenant.putIfAbsent(key.tenant(), name == null ? "" : name);
        if (before != null && !before.equals(name == null ? "" : name)) {
            throw new IllegalArgumentException(at + ": tenant '" + key.tenant() + "' is "
                    + (before.isEmpty() ? "in no team" : "in team '" + before + "'") + " by an earlier key");
        }
        if (name == null) {
            return key;
        }
        Spending.Team team = spending.teams().get(name);
        if (team == null) {
            throw new IllegalArgumentException(at + ": '" + name + "' "
                    + (declaredTeams != null && declaredTeams.containsKey(name)
                            ? "has errors of its own"
                            : "is not one of the teams " + (declaredTeams == null ? "[]" : declaredTeams.keySet())));
        }
        return new ApiKey(key.sha256(), key.tenant(), key.tier(), team);
    }

    /** The shares of a model's cap by tier: {@code free: 20%} is at most 20 % of the cap for free keys. */
    /** A model cap's {@code lease:}: {@code auto} leases it to each gateway, {@code off} (or none) does not. */
    private static @Nullable Leasing leasing(String at, @Nullable String lease) {
        if (lease == null || lease.equals("off")) {
            return null;
        }
        if (lease.equals("auto")) {
            return Leasing.auto();
        }
        throw new IllegalArgumentException(at + ": must be auto or off, was '" + lease + "'");
    }

    private static Map<String, Integer> shares(
            String at, @Nullable Map<String, String> shares, @Nullable Map<String, RawTier> declaredTiers) {
        Map<String, Integer> percents = new LinkedHashMap<>();
        if (shares == null) {
            return percents;
        }
        shares.forEach((tier, value) -> {
            if (declaredTiers == null || !declaredTiers.containsKey(tier)) {
                throw new IllegalArgumentException(at + "." + tier + ": not one of the tiers "
                        + (declaredTiers == null ? "[]" : declaredTiers.keySet()));
            }
            Matcher percent = PERCENT.matcher(value == null ? "" : value);
            int figure = percent.matches() ? Integer.parseInt(percent.group(1)) : 0;
            if (figure < 1 || figure > 100) {
                throw new IllegalArgumentException(at + "." + tier + ": a share from 1% to 100%, was '" + value + "'");
            }
            percents.put(tier, figure);
        });
        return percents;
    }

    private static final Pattern PERCENT = Pattern.compile("\\s*(\\d{1,3})\\s*%\\s*");

    /**
     * The {@code admin:} section: its keys (written as client keys are, and never equal to one) and
     * the prefix of the managed keys on Redis.
     */
    private static Admin admin(@Nullable RawAdmin raw, List<ApiKey> clientKeys, List<String> errors) {
        if (raw == null) {
            return Admin.NONE;
        }
        String prefix = raw.prefix() == null ? Admin.DEFAULT_PREFIX : raw.prefix();
        if (prefix.isBlank() || prefix.chars().anyMatch(c -> c <= ' ' || c > '~' || c == '{' || c == '}')) {
            errors.add("admin.prefix: printable ASCII without spaces or braces (a cluster's hash tag), was '" + prefix
                    + "'");
        }
        List<byte[]> digests = new ArrayList<>();
        List<@Nullable RawAdminKey> rawKeys = raw.keys() == null ? List.of() : raw.keys();
        for (int i = 0; i < rawKeys.size(); i++) {
            String at = "admin.keys[" + i + "]";
            RawAdminKey key = rawKeys.get(i);
            collect(errors, () -> {
                if (key == null) {
                    throw new IllegalArgumentException(at + ": empty entry");
                }
                byte[] digest = digest(key.key(), key.keySha256(), at);
                for (ApiKey client : clientKeys) {
                    if (MessageDigest.isEqual(client.sha256(), digest)) {
                        throw new IllegalArgumentException(at + ": the same key as the client key of tenant '"
                                + client.tenant() + "': a client key never opens the admin API");
                    }
                }
                digests.add(digest);
            });
        }
        return new Admin(List.copyOf(digests), prefix);
    }

    /** The key's digest, from {@code key} (hashed here, never kept) or {@code key-sha256} (64 hex digits). */
    private static byte[] digest(RawKey key, String at) {
        return digest(key.key(), key.keySha256(), at);
    }

    private static byte[] digest(@Nullable String plain, @Nullable String hashed, String at) {
        if (plain != null && hashed != null) {
            throw new IllegalArgumentException(at + ": set key or key-sha256, not both");
        }
        if (hashed != null) {
            String hex = hashed.strip();
            if (!hex.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException(
                        at + ".key-sha256: must be 64 hex digits (the SHA-256 of the key, as sha256sum prints it)");
            }
            return HexFormat.of().parseHex(hex.toLowerCase(java.util.Locale.ROOT));
        }
        if (plain == null || plain.isBlank()) {
            throw new IllegalArgumentException(at + ".key: missing (set key or key-sha256)");
        }
        if (!plain.equals(plain.strip()) || plain.chars().anyMatch(c -> c <= ' ' || c > '~')) {
            throw new IllegalArgumentException(at + ".key: must be printable ASCII without spaces");
        }
        return sha256(plain);
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
        boolean shadow = ShadowMode.shadow(raw.mode(), at + ".mode");
        // The library's tier-file parser reads the window specs, so the syntax and its checks are the library's.
        Tier tier;
        try {
            tier = TierPolicy.fromMap(Map.of("tier", Map.of(name, raw.windows())))
                    .resolve(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(at + ".windows: " + e.getMessage(), e);
        }
        Spending.charged(at + ".windows", tier.windows());
        // a request window in shadow counts: the pass-through paths then count requests without refusing
        List<Window> requestWindows =
                tier.windows().stream().filter(Window::countsRequests).toList();
        if (requestWindows.isEmpty()) {
            throw new IllegalArgumentException(at + ".windows: define at least one request window (N/length)");
        }
        Map<String, List<Window>> models = Spending.perModel(at + ".models", raw.models());
        TierConfig config = new TierConfig(
                name, tier, new Tier(name, requestWindows), maxConcurrent, Collections.unmodifiableMap(models));
        return shadow ? config.inShadow(name) : config;
    }

    private static Limits limits(@Nullable RawLimits raw, List<String> errors) {
        RawLimits limits = raw == null
                ? new RawLimits(null, null, null, null, null, null, null, null, null, null, null, null, null, null)
                : raw;
        return new Limits(
                (int) checked(limits.maxBodyBytes(), 1_048_576, "limits.max-body-bytes", errors),
                checked(limits.defaultMaxCompletionTokens(), 1_024, "limits.default-max-completion-tokens", errors),
                Duration.ofMillis(checked(
                        limits.upstreamConnectTimeoutMs(), 5_000, "limits.upstream-connect-timeout-ms", errors)),
                Duration.ofMillis(checked(
                        limits.upstreamFirstByteTimeoutMs(), 60_000, "limits.upstream-first-byte-timeout-ms", errors)),
                Duration.ofMillis(
                        checked(limits.upstreamIdleTimeoutMs(), 30_000, "limits.upstream-idle-timeout-ms", errors)),
                (int) checked(
                        limits.streamBufferBytes(), DEFAULT_STREAM_BUFFER_BYTES, "limits.stream-buffer-bytes", errors),
                Duration.ofSeconds(checked(limits.slotLeaseSeconds(), 60, "limits.slot-lease-seconds", errors)),
                Duration.ofMillis(checked(limits.storeTimeoutMs(), 500, "limits.store-timeout-ms", errors)),
                limits.failOpen() == null || limits.failOpen(),
                breaker(limits.breaker(), errors),
                (int) checked(limits.expectedInstances(), 1, "limits.expected-instances", errors),
                checked(
                        limits.geminiDefaultMaxOutputTokens(),
                        GEMINI_DEFAULT_MAX_OUTPUT_TOKENS,
                        "limits.gemini-default-max-output-tokens",
                        errors),
                (int) checked(limits.maxFileBytes(), 104_857_600, "limits.max-file-bytes", errors),
                Duration.ofSeconds(
                        checked(limits.batchPollIntervalSeconds(), 60, "limits.batch-poll-interval-seconds", errors)));
    }

    private static Breaker breaker(@Nullable RawBreaker raw, List<String> errors) {
        Breaker d = Breaker.DEFAULTS;
        if (raw == null) {
            return d;
        }
        Breaker breaker = new Breaker(
                (int) checked(
                        raw.slidingWindowSize(), d.slidingWindowSize(), "limits.breaker.sliding-window-size", errors),
                (int) checked(
                        raw.minimumNumberOfCalls(),
                        d.minimumNumberOfCalls(),
                        "limits.breaker.minimum-number-of-calls",
                        errors),
                percent(
                        raw.failureRateThreshold(),
                        d.failureRateThreshold(),
                        "limits.breaker.failure-rate-threshold",
                        errors),
                Duration.ofMillis(checked(
                        raw.slowCallDurationMs(),
                        d.slowCallDuration().toMillis(),
                        "limits.breaker.slow-call-duration-ms",
                        errors)),
                percent(
                        raw.slowCallRateThreshold(),
                        d.slowCallRateThreshold(),
                        "limits.breaker.slow-call-rate-threshold",
                        errors),
                Duration.ofMillis(checked(
                        raw.waitInOpenStateMs(),
                        d.waitInOpenState().toMillis(),
                        "limits.breaker.wait-in-open-state-ms",
                        errors)),
                (int) checked(
                        raw.permittedCallsInHalfOpen(),
                        d.permittedCallsInHalfOpen(),
                        "limits.breaker.permitted-calls-in-half-open",
                        errors));
        if (breaker.minimumNumberOfCalls() > breaker.slidingWindowSize()) {
            errors.add("limits.breaker.minimum-number-of-calls (" + breaker.minimumNumberOfCalls()
                    + ") must not exceed limits.breaker.sliding-window-size (" + breaker.slidingWindowSize() + ")");
        }
        return breaker;
    }

    /** A percentage from 1 to 100, the default when unset; an error is recorded, not thrown. */
    private static int percent(@Nullable Integer value, int otherwise, String at, List<String> errors) {
        if (value == null) {
            return otherwise;
        }
        if (value < 1 || value > 100) {
            errors.add(at + " must be a percentage from 1 to 100, was " + value);
            return otherwise;
        }
        return value;
    }

    /** The value when it is at least 1, the default when unset; an error is recorded, not thrown. */
    private static long checked(@Nullable Number value, long otherwise, String at, List<String> errors) {
        try {
            return positiveOr(value, otherwise, at);
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
            return otherwise;
        }
    }

    private static ServerSettings server(@Nullable RawServer raw, @Nullable RawManagement management) {
        String managementHost = management == null ? null : address(management.host(), "management.host");
        Integer managementPort = management == null ? null : port(management.port(), "management.port");
        if (raw == null) {
            return new ServerSettings(
                    null,
                    null,
                    managementHost,
                    managementPort,
                    Duration.ofSeconds(DEFAULT_SHUTDOWN_SECONDS),
                    ServerSettings.DEFAULT_MAX_THREADS,
                    ServerSettings.DEFAULT_MAX_CONNECTIONS,
                    Duration.ofMillis(ServerSettings.DEFAULT_CLIENT_IDLE_TIMEOUT_MS),
                    true,
                    null);
        }
        int maxThreads = (int) positiveOr(raw.maxThreads(), ServerSettings.DEFAULT_MAX_THREADS, "server.max-threads");
        if (maxThreads < ServerSettings.MIN_THREADS) {
            throw new IllegalArgumentException("server.max-threads: must be at least " + ServerSettings.MIN_THREADS
                    + " (the listeners' acceptors and selectors and the upstream client's take some), was "
                    + maxThreads);
        }
        return new ServerSettings(
                address(raw.host(), "server.host"),
                port(raw.port(), "server.port"),
                managementHost,
                managementPort,
                Duration.ofSeconds(positiveOr(
                        raw.shutdownTimeoutSeconds(), DEFAULT_SHUTDOWN_SECONDS, "server.shutdown-timeout-seconds")),
                maxThreads,
                (int) positiveOr(
                        raw.maxConnections(), ServerSettings.DEFAULT_MAX_CONNECTIONS, "server.max-connections"),
                Duration.ofMillis(positiveOr(
                        raw.clientIdleTimeoutMs(),
                        ServerSettings.DEFAULT_CLIENT_IDLE_TIMEOUT_MS,
                        "server.client-idle-timeout-ms")),
                raw.watchConfig() == null || raw.watchConfig(),
                raw.accessLog());
    }

    private static @Nullable String address(@Nullable String host, String at) {
        if (host != null && (host.isBlank() || !host.equals(host.strip()))) {
            throw new IllegalArgumentException(at + ": must be an address or host name, was '" + host + "'");
        }
        return host;
    }

    private static @Nullable Integer port(@Nullable Integer port, String at) {
        if (port != null && (port < 0 || port > 65_535)) {
            throw new IllegalArgumentException(at + ": must be from 0 to 65535, was " + port);
        }
        return port;
    }

    /**
     * A model's {@code batch-tokens} window, in the tier-file syntax with a token unit, such as {@code
     * 90000000 tokens/1d}; {@code null} when not set.
     */
    private static @Nullable Window batchTokens(String at, @Nullable String value) {
        if (value == null) {
            return null;
        }
        List<Window> windows = Spending.windows(at, Map.of("batch-tokens", value));
        Window window = windows.get(0);
        if (!window.unit().equals(Window.Unit.TOKENS)) {
            throw new IllegalArgumentException(
                    at + ": a token window such as \"90000000 tokens/1d\", was '" + value + "'");
        }
        return window;
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
    public Map<String, TierConfig> tenants() {
        Map<String, TierConfig> tenants = new LinkedHashMap<>();
        for (ApiKey key : keys) {
            tenants.putIfAbsent(key.tenant(), key.tier());
        }
        return tenants;
    }

    public static byte[] sha256(String key) {
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
