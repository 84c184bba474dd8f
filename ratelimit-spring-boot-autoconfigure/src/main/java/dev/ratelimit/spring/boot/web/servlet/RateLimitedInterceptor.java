package dev.ratelimit.spring.boot.web.servlet;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.servlet.IdentityResolver;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.RateLimited;
import dev.ratelimit.spring.boot.web.internal.Callers;
import dev.ratelimit.spring.boot.web.internal.ContractResponses;
import dev.ratelimit.spring.boot.web.internal.RateLimitedSupport;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Applies {@link RateLimited} on Spring MVC handler methods: one check of the method's own budget
 * before the handler runs; a rejection is answered 429 (503 while a fail-closed limiter cannot reach
 * its store) with the filter's headers and body.
 */
final class RateLimitedInterceptor implements HandlerInterceptor {

    private static final System.Logger LOG = System.getLogger(RateLimitedInterceptor.class.getName());

    private final RateLimiter limiter;
    private final TierPolicy policy;
    private final IdentityResolver identities;
    private final RateLimitedSupport support;
    private final RateLimitResponses responses;
    private final boolean enforce;

    /**
     * Creates the interceptor.
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param identities finds the caller
     * @param properties the settings: shadow mode, headers
     */
    RateLimitedInterceptor(
            RateLimiter limiter, TierPolicy policy, IdentityResolver identities, RateLimitProperties properties) {
        this.limiter = limiter;
        this.policy = policy;
        this.identities = identities;
        this.support = new RateLimitedSupport(policy);
        this.responses = ContractResponses.of(properties);
        this.enforce = !properties.isShadowMode();
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws IOException {
        if (!(handler instanceof HandlerMethod method)) {
            return true;
        }
        RateLimitedSupport.Budget budget = support.budget(method);
        if (budget == null) {
            return true;
        }
        IdentityResolver.Identity identity = identities.resolve(request);
        CallerKeys.Subject subject = identity == null
                ? CallerKeys.subject(null, null, request.getRemoteAddr(), policy)
                : CallerKeys.subject(identity.userId(), identity.tier(), request.getRemoteAddr(), policy);
        String user = subject.key();
        Tier tier = budget.tierFor(subject.tier());
        @SuppressWarnings("unchecked")
        Map<String, String> variables =
                (Map<String, String>) request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        String key = budget.keyFor(new RateLimitedSupport.KeyRoot(
                request, Callers.current(request.getUserPrincipal()), user, variables == null ? Map.of() : variables));
        Decision decision;
        try {
            decision = limiter.check(key, tier);
        } catch (RateLimiterUnavailableException e) {
            RateLimitFilter.send(response, responses.unavailable(tier, response::setHeader));
            return false;
        }
        if (decision.allowed()) {
            return true;
        }
        if (!enforce) {
            LOG.log(System.Logger.Level.DEBUG, "Shadow mode: would have answered 429 to ''{0}''", key);
            return true;
        }
        RateLimitFilter.send(response, responses.rejected(tier, decision, response::setHeader));
        return false;
    }
}
