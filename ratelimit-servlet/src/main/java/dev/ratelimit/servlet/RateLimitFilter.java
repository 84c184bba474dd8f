package dev.ratelimit.servlet;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.http.ErrorShape;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.Refusal;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * A Jakarta Servlet filter that rate-limits each request by its caller's tier and answers {@code
 * 429 Too Many Requests} with an honest {@code Retry-After}.
 *
 * <p>Per request the filter makes exactly one {@link RateLimiter#check(String, Tier)} call, which
 * evaluates all of the tier's windows in one store round trip, shortest first, all or nothing.
 *
 * <h2>Identity and tier</h2>
 *
 * <p>They come from the authentication layer, by default through the request attributes {@value
 * #USER_ATTRIBUTE} and {@value #TIER_ATTRIBUTE}, which an authentication filter mapped before this
 * one sets; an {@link IdentityResolver} can replace this. A request without a user is limited by
 * the client address the container reports, as {@code ip:<address>}, under the policy's default
 * tier. The filter never reads {@code X-Forwarded-For}, query parameters or any other
 * client-supplied value for identity or tier (configure the container's forwarded-header support
 * if it runs behind a trusted proxy).
 *
 * <h2>Responses</h2>
 *
 * <ul>
 *   <li>Allowed: the request proceeds with {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining}
 *       and {@code X-RateLimit-Window} of the window with the least remaining, and never {@code
 *       Retry-After}.
 *   <li>Rejected: {@code 429} with {@code Retry-After} (whole seconds, at least 1), {@code
 *       X-RateLimit-Remaining: 0}, {@code X-RateLimit-Window} naming the window that tripped and a
 *       JSON body: {@code {"error":"rate_limited","window":"minute","limit":5,
 *       "retry_after_seconds":42,"message":"..."}}, or OpenAI's error body with {@link
 *       Builder#openAiErrors}.
 *   <li>Both carry the IETF draft headers {@code RateLimit-Policy: "minute";q=5;w=60,
 *       "day";q=100;w=86400} (the tier's windows, shortest first) and {@code RateLimit:
 *       "minute";r=4;t=60} (remaining, and seconds until the deciding window's budget grows; on a
 *       429 {@code t} equals {@code Retry-After}).
 *   <li>Store unavailable with a fail-closed limiter ({@link RateLimiterUnavailableException}):
 *       {@code 503} with {@code Retry-After} and a JSON body {@code
 *       {"error":"rate_limiter_unavailable",...}} (or OpenAI's), never a 500.
 *   <li>Degraded (the limiter failed open): the request proceeds with {@code X-RateLimit-Degraded:
 *       true} and without remaining counts, which are unknown.
 * </ul>
 *
 * <p>The allowed request's {@link Decision} is stored in the request attribute {@value
 * #DECISION_ATTRIBUTE} for the application. Only {@link DispatcherType#REQUEST} dispatches are
 * checked, and a request already checked (for example by a second mapping of the filter) is not
 * checked again.
 *
 * <h2>Wiring</h2>
 *
 * <p>Any Servlet 6 container:
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
 *         .metrics(MicrometerLimiterMetrics.of(registry)) // ratelimit-micrometer, for the meters
 *         .build();
 * FilterRegistration.Dynamic reg = servletContext.addFilter("rateLimit",
 *         RateLimitFilter.builder(limiter, TierPolicy.defaults()).exemptPaths("/health").build());
 * reg.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), true, "/v1/*"); // after auth
 * }</pre>
 *
 * <p>Spring Boot (order it after the filter that authenticates and sets the attributes):
 *
 * <pre>{@code
 * @Bean
 * FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimiter limiter) {
 *     var bean = new FilterRegistrationBean<>(new RateLimitFilter(limiter, TierPolicy.defaults()));
 *     bean.addUrlPatterns("/v1/*");
 *     bean.setOrder(SecurityProperties.DEFAULT_FILTER_ORDER + 1);
 *     return bean;
 * }
 * }</pre>
 *
 * <p>Instances are thread-safe; {@link #init} and {@link #destroy} do nothing.
 */
public final class RateLimitFilter implements Filter {

    /** The request attribute holding the authenticated user id, read by the default resolver. */
    public static final String USER_ATTRIBUTE = "ratelimit.user";

    /** The request attribute holding the caller's tier name, read by the default resolver. */
    public static final String TIER_ATTRIBUTE = "ratelimit.tier";

    /** The request attribute in which the filter leaves the {@link Decision} of a checked request. */
    public static final String DECISION_ATTRIBUTE = "ratelimit.decision";

    /** The prefix of the budget key of an anonymous request, followed by the client address. */
    public static final String ANONYMOUS_PREFIX = CallerKeys.ANONYMOUS_PREFIX;

    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    private final RateLimiter limiter;
    private final TierPolicy tiers;
    private final IdentityResolver identityResolver;
    private final Set<String> exactExemptions;
    private final Set<String> prefixExemptions;
    private final Set<String> exemptMethods;
    private final boolean enforce;
    private final RateLimitResponses writer;

    /**
     * Creates a filter with the defaults: identity from the request attributes, no exempt paths,
     * both header families, and a 503's {@code Retry-After} of 5 seconds.
     *
     * @param limiter the limiter to check requests with
     * @param tiers the tiers that the identities' tier names resolve in
     */
    public RateLimitFilter(RateLimiter limiter, TierPolicy tiers) {
        this(builder(limiter, tiers));
    }

    private RateLimitFilter(Builder builder) {
        this.limiter = builder.limiter;
        this.tiers = builder.tiers;
        this.identityResolver = builder.identityResolver;
        Set<String> exact = new LinkedHashSet<>();
        Set<String> prefixes = new LinkedHashSet<>();
        for (String path : builder.exemptPaths) {
            if (path.endsWith("/*")) {
                prefixes.add(path.substring(0, path.length() - 2));
            } else {
                exact.add(path);
            }
        }
        this.exactExemptions = Set.copyOf(exact);
        this.prefixExemptions = Set.copyOf(prefixes);
        this.exemptMethods = Set.copyOf(builder.exemptMethods);
        this.enforce = builder.enforce;
        this.writer = builder.responses.build();
    }

    /**
     * Returns a builder of a filter with options.
     *
     * @param limiter the limiter to check requests with
     * @param tiers the tiers that the identities' tier names resolve in
     * @return a new builder
     */
    public static Builder builder(RateLimiter limiter, TierPolicy tiers) {
        return new Builder(limiter, tiers);
    }

    /**
     * Checks the request and lets it proceed, or answers it with 429 or 503.
     *
     * @param req the request
     * @param res the response
     * @param chain the rest of the chain
     * @throws IOException if writing the response fails, or from the chain
     * @throws ServletException from the chain
     */
    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!(req instanceof HttpServletRequest request)
                || !(res instanceof HttpServletResponse response)
                || request.getDispatcherType() != DispatcherType.REQUEST
                || request.getAttribute(DECISION_ATTRIBUTE) != null
                || exemptMethods.contains(request.getMethod())
                || isExempt(request)) {
            chain.doFilter(req, res);
            return;
        }
        IdentityResolver.Identity identity = identityResolver.resolve(request);
        CallerKeys.Subject subject = identity == null
                ? CallerKeys.subject(null, null, request.getRemoteAddr(), tiers)
                : CallerKeys.subject(identity.userId(), identity.tier(), request.getRemoteAddr(), tiers);
        String userId = subject.key();
        Tier tier = subject.tier();
        Decision decision;
        try {
            decision = limiter.check(userId, tier);
        } catch (RateLimiterUnavailableException e) {
            LOG.log(System.Logger.Level.DEBUG, "Rate limiter unavailable, answering 503: {0}", e.getMessage());
            send(response, writer.unavailable(tier, response::setHeader));
            return;
        }
        request.setAttribute(DECISION_ATTRIBUTE, decision);
        if (decision.allowed()) {
            writer.allowed(tier, decision, response::setHeader);
            chain.doFilter(request, response);
        } else if (!enforce) {
            // Shadow mode: the rejection is counted in the metrics and left in the request attribute,
            // but the request proceeds without headers that would tell the client to back off.
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "Shadow mode: would have answered 429 to ''{0}'' (window {1})",
                    userId,
                    decision.window().name());
            chain.doFilter(request, response);
        } else {
            send(response, writer.rejected(tier, decision, response::setHeader));
        }
    }

    /**
     * Sends a refusal whose headers are set, such as {@link RateLimitResponses#rejected}'s: its
     * status and JSON body with its length, completing the response; for servlet components that
     * answer with the filter's contract (Spring MVC's {@code @RateLimited} interceptor).
     *
     * @param response the response
     * @param refusal the status and body
     * @throws IOException if writing fails
     */
    public static void send(HttpServletResponse response, Refusal refusal) throws IOException {
        byte[] body = refusal.bytes();
        response.setStatus(refusal.status());
        response.setContentType(Refusal.CONTENT_TYPE);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(body.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(body);
        }
    }

    private boolean isExempt(HttpServletRequest request) {
        if (exactExemptions.isEmpty() && prefixExemptions.isEmpty()) {
            return false;
        }
        // the container's decoded, normalized path within the application: what it routes by
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
        if (path.isEmpty()) {
            path = "/";
        }
        if (exactExemptions.contains(path)) {
            return true;
        }
        for (String prefix : prefixExemptions) {
            if (path.equals(prefix) || path.startsWith(prefix + "/") || prefix.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "RateLimitFilter{limiter=" + limiter + ", tiers=" + tiers + ", exempt=" + exactExemptions + " "
                + prefixExemptions + ", exemptMethods=" + exemptMethods + (enforce ? "" : ", SHADOW MODE") + "}";
    }

    /** Builds a {@link RateLimitFilter}; not thread-safe. */
    public static final class Builder {

        private final RateLimiter limiter;
        private final TierPolicy tiers;
        private IdentityResolver identityResolver = IdentityResolver.requestAttributes();
        private final Set<String> exemptPaths = new LinkedHashSet<>();
        private final RateLimitResponses.Builder responses = RateLimitResponses.builder();
        private final Set<String> exemptMethods = new LinkedHashSet<>(Set.of("OPTIONS"));
        private boolean enforce = true;

        private Builder(RateLimiter limiter, TierPolicy tiers) {
            this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
            this.tiers = Objects.requireNonNull(tiers, "tiers must not be null");
        }

        /**
         * Replaces how a request's user and tier are found; the default reads the request
         * attributes {@value RateLimitFilter#USER_ATTRIBUTE} and {@value
         * RateLimitFilter#TIER_ATTRIBUTE}.
         *
         * @param identityResolver the resolver
         * @return this builder
         */
        public Builder identityResolver(IdentityResolver identityResolver) {
            this.identityResolver = Objects.requireNonNull(identityResolver, "identityResolver must not be null");
            return this;
        }

        /**
         * Exempts paths from limiting, such as health checks. A path is matched against the
         * request's path within the application (servlet path plus path info): {@code /health}
         * matches exactly that path, {@code /internal/*} that path and everything below it.
         *
         * @param paths the paths, each starting with {@code /}
         * @return this builder
         */
        public Builder exemptPaths(String... paths) {
            Objects.requireNonNull(paths, "paths must not be null");
            for (String path : paths) {
                Objects.requireNonNull(path, "paths must not contain null");
                if (!path.startsWith("/")) {
                    throw new IllegalArgumentException("exempt path must start with '/', was '" + path + "'");
                }
                if (path.indexOf('*') >= 0 && !(path.endsWith("/*") && path.indexOf('*') == path.length() - 1)) {
                    throw new IllegalArgumentException(
                            "exempt path may only end with '/*' as a wildcard, was '" + path + "'");
                }
                exemptPaths.add(path);
            }
            return this;
        }

        /**
         * Replaces the HTTP methods that are never checked nor counted; by default {@code OPTIONS},
         * so CORS preflights do not spend a caller's budget. Call with no argument to check every
         * method.
         *
         * @param methods the methods, such as {@code "OPTIONS"} or {@code "HEAD"}
         * @return this builder
         */
        public Builder exemptMethods(String... methods) {
            Objects.requireNonNull(methods, "methods must not be null");
            Set<String> chosen = new LinkedHashSet<>();
            for (String method : methods) {
                Objects.requireNonNull(method, "methods must not contain null");
                if (method.isBlank()) {
                    throw new IllegalArgumentException("methods must not contain a blank method");
                }
                chosen.add(method.trim().toUpperCase(java.util.Locale.ROOT));
            }
            exemptMethods.clear();
            exemptMethods.addAll(chosen);
            return this;
        }

        /**
         * Chooses whether rejections are enforced (the default) or only observed: with {@code
         * false} (shadow mode) every request proceeds; would-be rejections still count in the
         * {@code ratelimit.decisions} metric (outcome {@code rejected}) and leave their {@link
         * Decision} in {@value RateLimitFilter#DECISION_ATTRIBUTE}, but get no 429 and no headers that
         * tell the client to back off. For rolling limits out safely: watch, then enforce.
         *
         * @param enforce whether to answer rejections with 429
         * @return this builder
         */
        public Builder enforce(boolean enforce) {
            this.enforce = enforce;
            return this;
        }

        /**
         * Switches one family of rate-limit headers on or off, as {@link
         * RateLimitResponses.Builder#header} does: by default {@link HeaderFamily#X_RATELIMIT}
         * ({@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Window}, {@code -Degraded}) and
         * {@link HeaderFamily#IETF} ({@code RateLimit}, {@code RateLimit-Policy}) are on; {@link
         * HeaderFamily#OPENAI} ({@code x-ratelimit-limit-requests}, {@code
         * x-ratelimit-remaining-requests}, {@code x-ratelimit-reset-requests} and, on a 429, {@code
         * retry-after-ms}, which OpenAI's SDKs read before {@code Retry-After}) and {@link
         * HeaderFamily#ANTHROPIC} (its reset times are times: it needs a {@link #clock}) are off.
         *
         * @param family the family
         * @param enabled whether to send it
         * @return this builder
         * @throws NullPointerException if {@code family} is {@code null}
         */
        public Builder header(HeaderFamily family, boolean enabled) {
            responses.header(family, enabled);
            return this;
        }

        /**
         * Sets the clock that {@link HeaderFamily#ANTHROPIC}'s reset times are counted from, which
         * that family requires ({@link #build()} refuses it without one): the limiter's own.
         *
         * @param clock the clock
         * @return this builder
         * @throws NullPointerException if {@code clock} is {@code null}
         */
        public Builder clock(Clock clock) {
            responses.clock(Objects.requireNonNull(clock, "clock must not be null"));
            return this;
        }

        /**
         * Switches the 429 and 503 bodies to OpenAI's error shape, on or off (the default), for
         * APIs that OpenAI's clients call (their SDKs raise an exception with {@code error.message}).
         * A 429: {@code {"error":{"message":"...","type":"requests","param":null,
         * "code":"rate_limit_exceeded","window":"minute"}}}, {@code type} being {@code tokens} when a
         * token window tripped; a 503: {@code {"error":{"message":"...","type":"server_error",
         * "param":null,"code":"rate_limiter_unavailable"}}}. Status and headers stay as they are.
         *
         * @param enabled whether to answer in OpenAI's error shape
         * @return this builder
         */
        public Builder openAiErrors(boolean enabled) {
            responses.openAiErrors(enabled);
            return this;
        }

        /**
         * Sets the shape of the 429 and 503 bodies ({@link ErrorShape}); the default is the plain
         * one, and {@link #openAiErrors} is {@code errorShape(ErrorShape.OPENAI)}. For APIs whose
         * clients read another provider's shape, such as {@link ErrorShape#GEMINI} for Google's
         * Gen AI SDKs. Status and headers stay as they are.
         *
         * @param shape the shape
         * @return this builder
         * @throws NullPointerException if {@code shape} is {@code null}
         */
        public Builder errorShape(ErrorShape shape) {
            responses.errorShape(Objects.requireNonNull(shape, "shape must not be null"));
            return this;
        }

        /**
         * Sets the {@code Retry-After} of a 503 answered while the limiter is unavailable; defaults
         * to 5 seconds.
         *
         * @param unavailableRetryAfter the delay, rounded up to whole seconds, at least one second
         * @return this builder
         */
        public Builder unavailableRetryAfter(Duration unavailableRetryAfter) {
            responses.unavailableRetryAfter(
                    Objects.requireNonNull(unavailableRetryAfter, "unavailableRetryAfter must not be null"));
            return this;
        }

        /**
         * Builds the filter.
         *
         * @return the filter
         * @throws IllegalStateException if {@link HeaderFamily#ANTHROPIC} is on without a {@link
         *     #clock}
         */
        public RateLimitFilter build() {
            return new RateLimitFilter(this);
        }
    }
}
