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

        public Set<HeaderFamily> getFamilies() {
            return families;
        }

        public void setFamilies(Set<HeaderFamily> families) {
            this.families = families.isEmpty() ? EnumSet.noneOf(HeaderFamily.class) : EnumSet.copyOf(families);
        }

        public boolean isOpenaiErrors() {
            return openaiErrors;
        }

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

        public String getTierClaim() {
            return tierClaim;
        }

        public void setTierClaim(String tierClaim) {
            this.tierClaim = tierClaim;
        }

        public String getTierAuthorityPrefix() {
            return tierAuthorityPrefix;
        }

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

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getOrder() {
            return order;
        }

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

        public float getFailureRateThreshold() {
            return failureRateThreshold;
        }

        public void setFailureRateThreshold(float failureRateThreshold) {
            this.failureRateThreshold = failureRateThreshold;
        }

        public float getSlowCallRateThreshold() {
            return slowCallRateThreshold;
        }

        public void setSlowCallRateThreshold(float slowCallRateThreshold) {
            this.slowCallRateThreshold = slowCallRateThreshold;
        }

        public Duration getSlowCallDurationThreshold() {
            return slowCallDurationThreshold;
        }

        public void setSlowCallDurationThreshold(Duration slowCallDurationThreshold) {
            this.slowCallDurationThreshold = slowCallDurationThreshold;
        }

        public int getSlidingWindowSize() {
            return slidingWindowSize;
        }

        public void setSlidingWindowSize(int slidingWindowSize) {
            this.slidingWindowSize = slidingWindowSize;
        }

        public int getMinimumNumberOfCalls() {
            return minimumNumberOfCalls;
        }

        public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
            this.minimumNumberOfCalls = minimumNumberOfCalls;
        }

        public Duration getWaitDurationInOpenState() {
            return waitDurationInOpenState;
        }

        public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
            this.waitDurationInOpenState = waitDurationInOpenState;
        }

        public int getPermittedNumberOfCallsInHalfOpenState() {
            return permittedNumberOfCallsInHalfOpenState;
        }

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

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isFailOpen() {
        return failOpen;
    }

    public void setFailOpen(boolean failOpen) {
        this.failOpen = failOpen;
    }

    public int getExpectedInstances() {
        return expectedInstances;
    }

    public void setExpectedInstances(int expectedInstances) {
        if (expectedInstances < 1) {
            throw new IllegalArgumentException(
                    "ratelimit.expected-instances must be at least 1, was " + expectedInstances);
        }
        this.expectedInstances = expectedInstances;
    }

    public boolean isRejectionCache() {
        return rejectionCache;
    }

    public void setRejectionCache(boolean rejectionCache) {
        this.rejectionCache = rejectionCache;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public @Nullable StoreType getStore() {
        return store;
    }

    public void setStore(@Nullable StoreType store) {
        this.store = store;
    }

    public Map<String, Map<String, String>> getTiers() {
        return tiers;
    }

    public void setTiers(Map<String, Map<String, String>> tiers) {
        this.tiers = tiers;
    }

    public @Nullable String getDefaultTier() {
        return defaultTier;
    }

    public void setDefaultTier(@Nullable String defaultTier) {
        this.defaultTier = defaultTier;
    }

    public List<String> getPaths() {
        return paths;
    }

    public void setPaths(List<String> paths) {
        this.paths = paths;
    }

    public List<String> getExcludePaths() {
        return excludePaths;
    }

    public void setExcludePaths(List<String> excludePaths) {
        this.excludePaths = excludePaths;
    }

    public List<String> getExemptMethods() {
        return exemptMethods;
    }

    public void setExemptMethods(List<String> exemptMethods) {
        this.exemptMethods = exemptMethods;
    }

    public boolean isShadowMode() {
        return shadowMode;
    }

    public void setShadowMode(boolean shadowMode) {
        this.shadowMode = shadowMode;
    }

    public Duration getUnavailableRetryAfter() {
        return unavailableRetryAfter;
    }

    public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
        this.unavailableRetryAfter = unavailableRetryAfter;
    }

    public Headers getHeaders() {
        return headers;
    }

    public Identity getIdentity() {
        return identity;
    }

    public Filter getFilter() {
        return filter;
    }

    public CircuitBreaker getCircuitBreaker() {
        return circuitBreaker;
    }

    public Redis getRedis() {
        return redis;
    }
}
