package dev.ratelimit.spring.boot;

import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.HeaderFamily;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The rate limiter's settings, under {@code ratelimit.*}.
 *
 * <pre>{@code
 * ratelimit:
 *   tiers:
 *     free: { minute: 5/1m, day: 100/1d }
 *     pro:  { minute: 60/1m, day: 5000/1d@1m, tokens-day: 1000000 tokens/1d@1m }
 *   default-tier: free
 *   paths: [/api/*]
 *   exclude-paths: [/api/health]
 * }</pre>
 */
@ConfigurationProperties(prefix = "ratelimit")
public class RateLimitProperties {

    /**
     * Whether requests are limited. {@code false} is the kill switch: every request is allowed and
     * nothing is counted (as is {@code RATE_LIMIT_DISABLED=true} in the environment, or the system
     * property {@code ratelimit.disabled=true}, which apply while this is left {@code true}).
     */
    private boolean enabled = true;

    /**
     * What happens while the store fails: allow requests, marked degraded ({@code true}), or answer
     * 503 ({@code false}).
     */
    private boolean failOpen = true;

    /**
     * How many instances of the application share the store: a window marked {@code fail-local}
     * admits its limit divided by this while the store cannot decide, so the instances together
     * never admit more than the limit.
     */
    private int expectedInstances = 1;

    /**
     * Whether rejections by request windows are repeated locally until their retry time, with no
     * store call (the limiter's exact rejection cache; see the README).
     */
    private boolean rejectionCache = true;

    /** The limiter's name: the {@code limiter} tag of its metrics and the circuit breaker's name suffix. */
    private String name = "default";

    /**
     * Where counts are kept: {@code in-memory}, {@code lettuce} or {@code jedis}. Unset: {@code lettuce}
     * when ratelimit-redis-lettuce, Lettuce and spring-boot-data-redis are on the class path and
     * {@code spring.data.redis.*} names a server, else {@code jedis} likewise, else {@code in-memory}.
     */
    private @Nullable StoreType store;

    /**
     * Tiers by name, each a map of window name to {@code <limit>[ <unit>]/<length>[@<step>]} or {@code $<dollars>/<length>[@<step>]}, the syntax
     * of tier files: {@code ratelimit.tiers.free.minute=5/1m}, {@code
     * ratelimit.tiers.pro.tokens-day=1000000 tokens/1d@1m}; calendar windows as {@code
     * ratelimit.tiers.pro.spend-month=$500/month} or {@code 1000000 tokens/day@calendar(Europe/Paris)};
     * {@code ratelimit.tiers.pro.minute-trial=20/1m shadow} counts a window without enforcing it.
     * Empty: the built-in free, pro and enterprise tiers.
     */
    private Map<String, Map<String, String>> tiers = new LinkedHashMap<>();

    /** The tier of anonymous callers and of callers whose tier is unknown; unset: free, else the first tier. */
    private @Nullable String defaultTier;

    /**
     * The paths the filter limits, as servlet URL patterns ({@code /*}: everything, {@code /api/*}: a
     * path and everything below it, {@code /chat}: exactly that path).
     */
    private List<String> paths = new ArrayList<>(List.of("/*"));

    /** Paths never limited nor counted, such as health checks: {@code /health} or {@code /internal/*}. */
    private List<String> excludePaths = new ArrayList<>();

    /** HTTP methods never limited nor counted; CORS preflights by default. */
    private List<String> exemptMethods = new ArrayList<>(List.of("OPTIONS"));

    /**
     * Shadow mode: decide and count every request (would-be rejections show in the {@code
     * ratelimit.decisions} metric with outcome {@code rejected}) but never answer 429.
     */
    private boolean shadowMode;

    /** The {@code Retry-After} of a 503 answered while a fail-closed limiter cannot reach its store. */
    private Duration unavailableRetryAfter = Duration.ofSeconds(5);

    /** Which header families responses carry. */
    private final Headers headers = new Headers();

    /** How a caller's tier is found on the authenticated principal. */
    private final Identity identity = new Identity();

    /** The request filter (servlet) or web filter (WebFlux). */
    private final Filter filter = new Filter();

    /** The circuit breaker in front of the store. */
    private final CircuitBreaker circuitBreaker = new CircuitBreaker();

    /** Settings of the Redis stores. */
    private final Redis redis = new Redis();

    /**
     * Returns the tier policy these properties describe: the configured tiers, parsed by {@link
     * TierPolicy#fromMap}, or the built-in tiers when none is configured.
     *
     * @return the policy
     * @throws IllegalArgumentException naming the bad {@code ratelimit.*} entry
     */
    public TierPolicy tierPolicy() {
        Map<String, Object> entries = new LinkedHashMap<>();
        entries.put("tier", tiers);
        if (defaultTier != null) {
            entries.put("default-tier", defaultTier);
        }
        try {
            if (!tiers.isEmpty()) {
                return TierPolicy.fromMap(entries);
            }
            if (defaultTier == null) {
                return TierPolicy.defaults();
            }
            TierPolicy.Builder builder = TierPolicy.builder();
            TierPolicy.defaults().tiers().values().forEach(builder::tier);
            return builder.defaultTier(defaultTier).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Invalid ratelimit.tiers / ratelimit.default-tier (entries read as 'tier.<tier>.<window>'): "
                            + e.getMessage(),
                    e);
        }
    }

    /** Where counts are kept. */
    public enum StoreType {
        /** Caffeine, in this JVM only: one instance, tests. */
        IN_MEMORY,
        /** Redis through Lettuce: the client Spring Boot created where there is one. */
        LETTUCE,
        /** Redis through Jedis, configured from {@code spring.data.redis.*}. */
        JEDIS
    }

    /** Which header families responses carry. */
    public static class Headers {

        /**
         * The header families of every answer, as {@link HeaderFamily} names: {@code x-ratelimit}
         * ({@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Window}, {@code -Degraded}), {@code
         * ietf} ({@code RateLimit}, {@code RateLimit-Policy}), {@code openai} ({@code
         * x-ratelimit-*-requests}, {@code retry-after-ms}; without {@code x-ratelimit} also {@code
         * x-ratelimit-window} on a 429), {@code anthropic} ({@code anthropic-ratelimit-*}).
         */
        private Set<HeaderFamily> families = EnumSet.of(HeaderFamily.X_RATELIMIT, HeaderFamily.IETF);

        /** Answer 429 and 503 with OpenAI's error body {@code {"error":{"message","type","param","code"}}}. */
        private boolean openaiErrors;

        /**
         * Returns {@code ratelimit.headers.families}.
         *
         * @return its value
         */
        public Set<HeaderFamily> getFamilies() {
            return families;
        }

        /**
         * Sets {@code ratelimit.headers.families}.
         *
         * @param families its value
         */
        public void setFamilies(Set<HeaderFamily> families) {
            this.families = families.isEmpty() ? EnumSet.noneOf(HeaderFamily.class) : EnumSet.copyOf(families);
        }

        /**
         * Returns {@code ratelimit.headers.openai-errors}.
         *
         * @return its value
         */
        public boolean isOpenaiErrors() {
            return openaiErrors;
        }

        /**
         * Sets {@code ratelimit.headers.openai-errors}.
         *
         * @param openaiErrors its value
         */
        public void setOpenaiErrors(boolean openaiErrors) {
            this.openaiErrors = openaiErrors;
        }
    }

    /** How a caller's tier is found on the authenticated principal (Spring Security). */
    public static class Identity {

        /**
         * The claim (of a JWT, or attribute of an OAuth2 principal) naming the caller's tier; empty to
         * ignore claims.
         */
        private String tierClaim = "plan";

        /**
         * The prefix of a granted authority naming the tier: with {@code TIER_}, authority {@code
         * TIER_pro} gives tier {@code pro}; empty to ignore authorities. A claim wins over an authority.
         */
        private String tierAuthorityPrefix = "TIER_";

        /**
         * Returns {@code ratelimit.identity.tier-claim}.
         *
         * @return its value
         */
        public String getTierClaim() {
            return tierClaim;
        }

        /**
         * Sets {@code ratelimit.identity.tier-claim}.
         *
         * @param tierClaim its value
         */
        public void setTierClaim(String tierClaim) {
            this.tierClaim = tierClaim;
        }

        /**
         * Returns {@code ratelimit.identity.tier-authority-prefix}.
         *
         * @return its value
         */
        public String getTierAuthorityPrefix() {
            return tierAuthorityPrefix;
        }

        /**
         * Sets {@code ratelimit.identity.tier-authority-prefix}.
         *
         * @param tierAuthorityPrefix its value
         */
        public void setTierAuthorityPrefix(String tierAuthorityPrefix) {
            this.tierAuthorityPrefix = tierAuthorityPrefix;
        }
    }

    /** The request filter (servlet) or web filter (WebFlux). */
    public static class Filter {

        /** Whether to register the filter; {@code @RateLimited} works without it. */
        private boolean enabled = true;

        /**
         * The filter's order: after Spring Security's filter chain (order -100 on both stacks), so the
         * caller is authenticated when it runs.
         */
        private int order = -99;

        /**
         * Returns {@code ratelimit.filter.enabled}.
         *
         * @return its value
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code ratelimit.filter.enabled}.
         *
         * @param enabled its value
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * Returns {@code ratelimit.filter.order}.
         *
         * @return its value
         */
        public int getOrder() {
            return order;
        }

        /**
         * Sets {@code ratelimit.filter.order}.
         *
         * @param order its value
         */
        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** The resilience4j circuit breaker in front of the store; the defaults are the library's. */
    public static class CircuitBreaker {

        /** Percentage of failed calls at which the breaker opens. */
        private float failureRateThreshold = 50;

        /** Percentage of slow calls at which the breaker opens. */
        private float slowCallRateThreshold = 50;

        /** A call slower than this counts as slow. */
        private Duration slowCallDurationThreshold = Duration.ofSeconds(1);

        /** The number of most recent calls the rates are computed over. */
        private int slidingWindowSize = 10;

        /** Calls needed before the rates are computed. */
        private int minimumNumberOfCalls = 5;

        /** How long the breaker stays open (no store call at all) before probing. */
        private Duration waitDurationInOpenState = Duration.ofMillis(500);

        /** Probe calls let through while half open. */
        private int permittedNumberOfCallsInHalfOpenState = 3;

        /**
         * Returns {@code ratelimit.circuit-breaker.failure-rate-threshold}.
         *
         * @return its value
         */
        public float getFailureRateThreshold() {
            return failureRateThreshold;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.failure-rate-threshold}.
         *
         * @param failureRateThreshold its value
         */
        public void setFailureRateThreshold(float failureRateThreshold) {
            this.failureRateThreshold = failureRateThreshold;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.slow-call-rate-threshold}.
         *
         * @return its value
         */
        public float getSlowCallRateThreshold() {
            return slowCallRateThreshold;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.slow-call-rate-threshold}.
         *
         * @param slowCallRateThreshold its value
         */
        public void setSlowCallRateThreshold(float slowCallRateThreshold) {
            this.slowCallRateThreshold = slowCallRateThreshold;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.slow-call-duration-threshold}.
         *
         * @return its value
         */
        public Duration getSlowCallDurationThreshold() {
            return slowCallDurationThreshold;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.slow-call-duration-threshold}.
         *
         * @param slowCallDurationThreshold its value
         */
        public void setSlowCallDurationThreshold(Duration slowCallDurationThreshold) {
            this.slowCallDurationThreshold = slowCallDurationThreshold;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.sliding-window-size}.
         *
         * @return its value
         */
        public int getSlidingWindowSize() {
            return slidingWindowSize;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.sliding-window-size}.
         *
         * @param slidingWindowSize its value
         */
        public void setSlidingWindowSize(int slidingWindowSize) {
            this.slidingWindowSize = slidingWindowSize;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.minimum-number-of-calls}.
         *
         * @return its value
         */
        public int getMinimumNumberOfCalls() {
            return minimumNumberOfCalls;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.minimum-number-of-calls}.
         *
         * @param minimumNumberOfCalls its value
         */
        public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
            this.minimumNumberOfCalls = minimumNumberOfCalls;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.wait-duration-in-open-state}.
         *
         * @return its value
         */
        public Duration getWaitDurationInOpenState() {
            return waitDurationInOpenState;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.wait-duration-in-open-state}.
         *
         * @param waitDurationInOpenState its value
         */
        public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
            this.waitDurationInOpenState = waitDurationInOpenState;
        }

        /**
         * Returns {@code ratelimit.circuit-breaker.permitted-number-of-calls-in-half-open-state}.
         *
         * @return its value
         */
        public int getPermittedNumberOfCallsInHalfOpenState() {
            return permittedNumberOfCallsInHalfOpenState;
        }

        /**
         * Sets {@code ratelimit.circuit-breaker.permitted-number-of-calls-in-half-open-state}.
         *
         * @param permittedNumberOfCallsInHalfOpenState its value
         */
        public void setPermittedNumberOfCallsInHalfOpenState(int permittedNumberOfCallsInHalfOpenState) {
            this.permittedNumberOfCallsInHalfOpenState = permittedNumberOfCallsInHalfOpenState;
        }
    }

    /** Settings of the Redis stores; the server itself comes from {@code spring.data.redis.*}. */
    public static class Redis {

        /** Bounds each Redis call of the store. */
        private Duration commandTimeout = Duration.ofMillis(500);

        /** The prefix of every key; instances with different prefixes never share budgets. */
        private String keyPrefix = "ratelimit";

        /**
         * Returns {@code ratelimit.redis.command-timeout}.
         *
         * @return its value
         */
        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        /**
         * Sets {@code ratelimit.redis.command-timeout}.
         *
         * @param commandTimeout its value
         */
        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        /**
         * Returns {@code ratelimit.redis.key-prefix}.
         *
         * @return its value
         */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /**
         * Sets {@code ratelimit.redis.key-prefix}.
         *
         * @param keyPrefix its value
         */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /**
     * Returns {@code ratelimit.enabled}.
     *
     * @return its value
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets {@code ratelimit.enabled}.
     *
     * @param enabled its value
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Returns {@code ratelimit.fail-open}.
     *
     * @return its value
     */
    public boolean isFailOpen() {
        return failOpen;
    }

    /**
     * Sets {@code ratelimit.fail-open}.
     *
     * @param failOpen its value
     */
    public void setFailOpen(boolean failOpen) {
        this.failOpen = failOpen;
    }

    /**
     * Returns {@code ratelimit.expected-instances}.
     *
     * @return its value
     */
    public int getExpectedInstances() {
        return expectedInstances;
    }

    /**
     * Sets {@code ratelimit.expected-instances}.
     *
     * @param expectedInstances its value
     */
    public void setExpectedInstances(int expectedInstances) {
        if (expectedInstances < 1) {
            throw new IllegalArgumentException(
                    "ratelimit.expected-instances must be at least 1, was " + expectedInstances);
        }
        this.expectedInstances = expectedInstances;
    }

    /**
     * Returns {@code ratelimit.rejection-cache}.
     *
     * @return its value
     */
    public boolean isRejectionCache() {
        return rejectionCache;
    }

    /**
     * Sets {@code ratelimit.rejection-cache}.
     *
     * @param rejectionCache its value
     */
    public void setRejectionCache(boolean rejectionCache) {
        this.rejectionCache = rejectionCache;
    }

    /**
     * Returns {@code ratelimit.name}.
     *
     * @return its value
     */
    public String getName() {
        return name;
    }

    /**
     * Sets {@code ratelimit.name}.
     *
     * @param name its value
     */
    public void setName(String name) {
        this.name = name;
    }

    /**
     * Returns {@code ratelimit.store}.
     *
     * @return its value
     */
    public @Nullable StoreType getStore() {
        return store;
    }

    /**
     * Sets {@code ratelimit.store}.
     *
     * @param store its value
     */
    public void setStore(@Nullable StoreType store) {
        this.store = store;
    }

    /**
     * Returns {@code ratelimit.tiers}.
     *
     * @return its value
     */
    public Map<String, Map<String, String>> getTiers() {
        return tiers;
    }

    /**
     * Sets {@code ratelimit.tiers}.
     *
     * @param tiers its value
     */
    public void setTiers(Map<String, Map<String, String>> tiers) {
        this.tiers = tiers;
    }

    /**
     * Returns {@code ratelimit.default-tier}.
     *
     * @return its value
     */
    public @Nullable String getDefaultTier() {
        return defaultTier;
    }

    /**
     * Sets {@code ratelimit.default-tier}.
     *
     * @param defaultTier its value
     */
    public void setDefaultTier(@Nullable String defaultTier) {
        this.defaultTier = defaultTier;
    }

    /**
     * Returns {@code ratelimit.paths}.
     *
     * @return its value
     */
    public List<String> getPaths() {
        return paths;
    }

    /**
     * Sets {@code ratelimit.paths}.
     *
     * @param paths its value
     */
    public void setPaths(List<String> paths) {
        this.paths = paths;
    }

    /**
     * Returns {@code ratelimit.exclude-paths}.
     *
     * @return its value
     */
    public List<String> getExcludePaths() {
        return excludePaths;
    }

    /**
     * Sets {@code ratelimit.exclude-paths}.
     *
     * @param excludePaths its value
     */
    public void setExcludePaths(List<String> excludePaths) {
        this.excludePaths = excludePaths;
    }

    /**
     * Returns {@code ratelimit.exempt-methods}.
     *
     * @return its value
     */
    public List<String> getExemptMethods() {
        return exemptMethods;
    }

    /**
     * Sets {@code ratelimit.exempt-methods}.
     *
     * @param exemptMethods its value
     */
    public void setExemptMethods(List<String> exemptMethods) {
        this.exemptMethods = exemptMethods;
    }

    /**
     * Returns {@code ratelimit.shadow-mode}.
     *
     * @return its value
     */
    public boolean isShadowMode() {
        return shadowMode;
    }

    /**
     * Sets {@code ratelimit.shadow-mode}.
     *
     * @param shadowMode its value
     */
    public void setShadowMode(boolean shadowMode) {
        this.shadowMode = shadowMode;
    }

    /**
     * Returns {@code ratelimit.unavailable-retry-after}.
     *
     * @return its value
     */
    public Duration getUnavailableRetryAfter() {
        return unavailableRetryAfter;
    }

    /**
     * Sets {@code ratelimit.unavailable-retry-after}.
     *
     * @param unavailableRetryAfter its value
     */
    public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
        this.unavailableRetryAfter = unavailableRetryAfter;
    }

    /**
     * Returns the properties under {@code ratelimit.headers.*}.
     *
     * @return them
     */
    public Headers getHeaders() {
        return headers;
    }

    /**
     * Returns the properties under {@code ratelimit.identity.*}.
     *
     * @return them
     */
    public Identity getIdentity() {
        return identity;
    }

    /**
     * Returns the properties under {@code ratelimit.filter.*}.
     *
     * @return them
     */
    public Filter getFilter() {
        return filter;
    }

    /**
     * Returns the properties under {@code ratelimit.circuit-breaker.*}.
     *
     * @return them
     */
    public CircuitBreaker getCircuitBreaker() {
        return circuitBreaker;
    }

    /**
     * Returns the properties under {@code ratelimit.redis.*}.
     *
     * @return them
     */
    public Redis getRedis() {
        return redis;
    }
}
