package dev.ratelimit.spring.cloud.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.spring.boot.TierResolver;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.util.ClassUtils;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link RateLimiter} for Spring Cloud Gateway's {@code RequestRateLimiter} filter that checks the
 * key of each request against the windows of a tier: every window at once, shortest first, all or
 * nothing, in one store step of the library's {@link dev.ratelimit.api.RateLimiter}; a request
 * refused by the day window is not charged to the minute window.
 *
 * <p>The key is what the route's {@code KeyResolver} resolves. The tier is the route's {@code
 * tiered-rate-limiter.tier} argument when it has one; else the {@link TierResolver}'s answer for the
 * caller: Spring Security's authenticated {@code Authentication} when its name is the key (as the
 * gateway's {@code PrincipalNameKeyResolver} resolves it), else a {@link Principal} named by the key;
 * else the policy's default tier. The key's budget is shared by
 * every route, unless a route names a budget of its own ({@code tiered-rate-limiter.budget}): routes
 * naming the same budget share it.
 *
 * <p>Every response carries the headers of the HTTP contract as {@link RateLimitResponses} writes
 * them ({@code X-RateLimit-*}, the IETF {@code RateLimit} and {@code RateLimit-Policy}, OpenAI's when
 * configured); a refused request also carries {@code Retry-After}, and the filter answers it with its
 * deny status (429 unless the route sets {@code status-code}). While the store fails, a fail-open
 * limiter allows requests marked {@code X-RateLimit-Degraded: true}; a fail-closed one refuses them
 * with the unavailable {@code Retry-After} of the responses. In shadow mode refusals are counted but
 * the request passes. Instances are thread-safe.
 */
public class TieredRateLimiter extends AbstractRateLimiter<TieredRateLimiter.Config> {

    /** The prefix of this limiter's per-route arguments: {@code tiered-rate-limiter.tier}. */
    public static final String CONFIGURATION_PROPERTY_NAME = "tiered-rate-limiter";

    /** The budget key of requests whose key resolved to the empty string. */
    static final String EMPTY_KEY = "\\empty";

    private static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.core.context.ReactiveSecurityContextHolder",
            TieredRateLimiter.class.getClassLoader());

    private final dev.ratelimit.api.RateLimiter limiter;
    private final TierPolicy policy;
    private final TierResolver tiers;
    private final RateLimitResponses responses;
    private final boolean enforce;
    private final boolean offload;

    private TieredRateLimiter(Builder builder) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, builder.configurationService);
        this.limiter = builder.limiter;
        this.policy = builder.policy;
        this.tiers = builder.tiers;
        this.responses = builder.responses;
        this.enforce = !builder.shadowMode;
        this.offload = builder.offload;
    }

    /**
     * Returns a builder over the library's limiter and tiers.
     *
     * @param limiter the limiter that decides and counts
     * @param policy the tiers
     * @return a new builder
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Builder builder(dev.ratelimit.api.RateLimiter limiter, TierPolicy policy) {
        return new Builder(limiter, policy);
    }

    /**
     * Checks one request of {@code id} on route {@code routeId}, without blocking the caller's thread.
     *
     * @param routeId the route's id
     * @param id the key the route's {@code KeyResolver} resolved
     * @return the response: whether the request is allowed, and the headers to add
     */
    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        Config config = getConfig().get(routeId);
        Principal key = new Key(id);
        Mono<Principal> principal =
                SECURITY ? SecurityPrincipals.authenticatedAs(id).defaultIfEmpty(key) : Mono.just(key);
        return principal.flatMap(caller -> check(config, id, caller));
    }

    private Mono<Response> check(@Nullable Config config, String id, Principal caller) {
        Tier tier = tier(config, caller);
        String key = key(config, id);
        Mono<Decision> decision = Mono.defer(() -> Mono.fromCompletionStage(limiter.checkAsync(key, tier)));
        return (offload ? decision.subscribeOn(Schedulers.boundedElastic()) : decision)
                .map(decided -> respond(tier, decided))
                .onErrorResume(TieredRateLimiter::unavailable, failure -> Mono.just(unavailable(tier)));
    }

    /** The route's tier, else the resolver's for the caller, else the default tier. */
    Tier tier(@Nullable Config config, Principal caller) {
        String name = config == null ? null : config.getTier();
        if (name == null || name.isBlank()) {
            name = tiers.resolveTier(caller);
        }
        return policy.resolve(name);
    }

    /**
     * The budget key: the resolved key, escaped as the web filters escape user ids, or within the
     * route's named budget.
     */
    static String key(@Nullable Config config, String id) {
        String key = id.isEmpty() ? EMPTY_KEY : CallerKeys.authenticated(id);
        String budget = config == null ? null : config.getBudget();
        if (budget == null || budget.isBlank()) {
            return key;
        }
        // "\b" starts no escaped id nor the empty key; the length keeps "a:b" + "c" apart from "a" + "b:c"
        return "\\budget:" + budget.length() + ":" + budget + ":" + key;
    }

    private Response respond(Tier tier, Decision decision) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (decision.allowed()) {
            responses.allowed(tier, decision, headers::put);
            return new Response(true, headers);
        }
        if (!enforce) {
            return new Response(true, Map.of());
        }
        responses.rejected(tier, decision, headers::put);
        return new Response(false, headers);
    }

    private Response unavailable(Tier tier) {
        Map<String, String> headers = new LinkedHashMap<>();
        responses.unavailable(tier, headers::put);
        return new Response(false, headers);
    }

    /** Whether a failure means a fail-closed limiter could not reach its store. */
    private static boolean unavailable(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof RateLimiterUnavailableException;
    }

    @Override
    public String toString() {
        return "TieredRateLimiter{limiter=" + limiter + ", offload=" + offload + (enforce ? "" : ", SHADOW MODE")
                + ", routes=" + getConfig().keySet() + "}";
    }

    /** The key as the principal a {@link TierResolver} reads: its name is the key. */
    private record Key(String name) implements Principal {

        @Override
        public String getName() {
            return name;
        }
    }

    /**
     * A route's arguments, bound from {@code tiered-rate-limiter.*}:
     *
     * <pre>{@code
     * filters:
     *   - name: RequestRateLimiter
     *     args:
     *       key-resolver: "#{@apiKeyResolver}"
     *       tiered-rate-limiter.tier: pro
     *       tiered-rate-limiter.budget: exports
     * }</pre>
     */
    public static class Config {

        private @Nullable String tier;
        private @Nullable String budget;

        /** Creates an empty configuration: the key's tier and its shared budget. */
        public Config() {}

        /**
         * Returns the tier every request of the route is checked against.
         *
         * @return the tier's name, or {@code null} to resolve it from the key
         */
        public @Nullable String getTier() {
            return tier;
        }

        /**
         * Sets the tier every request of the route is checked against; an unknown name selects the
         * default tier (logged once).
         *
         * @param tier the tier's name, or {@code null} to resolve it from the key
         * @return this configuration
         */
        public Config setTier(@Nullable String tier) {
            this.tier = tier;
            return this;
        }

        /**
         * Returns the name of the route's own budget.
         *
         * @return the name, or {@code null} when the key's budget is shared by every route
         */
        public @Nullable String getBudget() {
            return budget;
        }

        /**
         * Gives the route a budget of its own, shared with the routes naming the same budget.
         *
         * @param budget the budget's name, or {@code null} to share the key's budget with every route
         * @return this configuration
         */
        public Config setBudget(@Nullable String budget) {
            this.budget = budget;
            return this;
        }

        @Override
        public String toString() {
            return "Config{tier=" + tier + ", budget=" + budget + "}";
        }
    }

    /** Builds a {@link TieredRateLimiter}; not thread-safe. */
    public static final class Builder {

        private final dev.ratelimit.api.RateLimiter limiter;
        private final TierPolicy policy;
        private TierResolver tiers = principal -> null;
        private RateLimitResponses responses = RateLimitResponses.builder().build();
        private boolean shadowMode;
        private boolean offload = true;
        private @Nullable ConfigurationService configurationService;

        private Builder(dev.ratelimit.api.RateLimiter limiter, TierPolicy policy) {
            this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
            this.policy = Objects.requireNonNull(policy, "policy must not be null");
        }

        /**
         * Sets what finds the tier of a key on routes that name none; by default none is found (the
         * default tier).
         *
         * @param tiers called with a principal whose name is the key
         * @return this builder
         */
        public Builder tierResolver(TierResolver tiers) {
            this.tiers = Objects.requireNonNull(tiers, "tiers must not be null");
            return this;
        }

        /**
         * Sets the writer of the headers; by default {@code X-RateLimit-*} and the IETF headers.
         *
         * @param responses the writer
         * @return this builder
         */
        public Builder responses(RateLimitResponses responses) {
            this.responses = Objects.requireNonNull(responses, "responses must not be null");
            return this;
        }

        /**
         * Shadow mode: count every request but never refuse one (the default is off).
         *
         * @param shadowMode whether refusals let the request pass
         * @return this builder
         */
        public Builder shadowMode(boolean shadowMode) {
            this.shadowMode = shadowMode;
            return this;
        }

        /**
         * Whether the limiter is called on Reactor's bounded-elastic scheduler, off the event loop:
         * needed when its store blocks (Jedis); the default is {@code true}.
         *
         * @param offload whether to leave the event loop
         * @return this builder
         */
        public Builder offload(boolean offload) {
            this.offload = offload;
            return this;
        }

        /**
         * Sets the gateway's configuration service, which binds and validates the routes' arguments.
         *
         * @param configurationService the gateway's bean
         * @return this builder
         */
        public Builder configurationService(@Nullable ConfigurationService configurationService) {
            this.configurationService = configurationService;
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @return the limiter
         */
        public TieredRateLimiter build() {
            return new TieredRateLimiter(this);
        }
    }
}
