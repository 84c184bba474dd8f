package dev.ratelimit.spring.boot.web.internal;

import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.spring.boot.RateLimited;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.web.method.HandlerMethod;

/** Reads {@link RateLimited} off handler methods and computes their budgets, for both web stacks. Not API. */
public final class RateLimitedSupport {

    private final TierPolicy policy;
    private final ExpressionParser parser = new SpelExpressionParser();
    private final ConcurrentMap<Method, Optional<Budget>> budgets = new ConcurrentHashMap<>();

    /**
     * Creates the support.
     *
     * @param policy the tiers that {@link RateLimited#tier()} names
     */
    public RateLimitedSupport(TierPolicy policy) {
        this.policy = policy;
    }

    /**
     * Returns the budget of a handler method, or {@code null} when neither it nor its class is
     * annotated.
     *
     * @param handler the handler method
     * @return the budget, or {@code null}
     * @throws IllegalStateException if the annotation names an unknown tier or a malformed key
     */
    public @Nullable Budget budget(HandlerMethod handler) {
        return budgets.computeIfAbsent(handler.getMethod(), method -> Optional.ofNullable(parse(handler)))
                .orElse(null);
    }

    private @Nullable Budget parse(HandlerMethod handler) {
        Method method = handler.getMethod();
        RateLimited annotation = AnnotatedElementUtils.findMergedAnnotation(method, RateLimited.class);
        if (annotation == null) {
            annotation = AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), RateLimited.class);
        }
        if (annotation == null) {
            return null;
        }
        String where = handler.getBeanType().getName() + "#" + method.getName();
        Tier tier = null;
        if (!annotation.tier().isEmpty()) {
            tier = policy.tiers().get(annotation.tier());
            if (tier == null) {
                throw new IllegalStateException("@RateLimited(tier = \"" + annotation.tier() + "\") on " + where
                        + " names no tier of ratelimit.tiers; defined: "
                        + policy.tiers().keySet());
            }
        }
        Expression key = null;
        if (!annotation.key().isBlank()) {
            try {
                key = parser.parseExpression(annotation.key());
            } catch (RuntimeException e) {
                throw new IllegalStateException(
                        "@RateLimited(key = \"" + annotation.key() + "\") on " + where + " is not valid SpEL: "
                                + e.getMessage(),
                        e);
            }
        }
        String name = annotation.name().isEmpty()
                ? handler.getBeanType().getSimpleName() + "#" + method.getName()
                : annotation.name();
        return new Budget(name, tier, key);
    }

    /**
     * One annotated method's budget.
     *
     * @param name the budget's name
     * @param tier the annotation's tier, or {@code null} for the caller's
     * @param key the key expression, or {@code null} for the caller
     */
    public record Budget(
            String name, @Nullable Tier tier, @Nullable Expression key) {

        /**
         * Returns the tier that applies.
         *
         * @param callerTier the caller's own tier
         * @return the annotation's tier, else the caller's
         */
        public Tier tierFor(Tier callerTier) {
            Tier own = tier;
            return own == null ? callerTier : own;
        }

        /**
         * Returns the budget key of one call: {@code <name>|<key>}.
         *
         * @param root what the expression sees
         * @return the key
         */
        public String keyFor(KeyRoot root) {
            Expression expression = key;
            Object value = null;
            if (expression != null) {
                SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
                        .withInstanceMethods()
                        .withRootObject(root)
                        .build();
                context.setVariable("request", root.request());
                context.setVariable("principal", root.principal());
                context.setVariable("user", root.user());
                context.setVariable("pathVariables", root.pathVariables());
                value = expression.getValue(context);
            }
            String part = value == null || value.toString().isEmpty() ? root.user() : value.toString();
            return name + "|" + part;
        }
    }

    /**
     * What a {@link RateLimited#key()} expression sees.
     *
     * @param request the request: {@code HttpServletRequest} or {@code ServerHttpRequest}
     * @param principal the authenticated caller, or {@code null}
     * @param user the caller's budget key
     * @param pathVariables the handler's URI template variables
     */
    public record KeyRoot(
            Object request, @Nullable Principal principal, String user, Map<String, String> pathVariables) {}
}
