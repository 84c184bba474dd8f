package dev.ratelimit.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits one controller method (or every handler method of a controller class) with its own budget,
 * on Spring MVC and WebFlux alike, in addition to the filter's limit on the whole API:
 *
 * <pre>{@code
 * @RateLimited(tier = "export")                                   // the caller's own "export" budget
 * @GetMapping("/reports/{id}/export")
 * Report export(@PathVariable String id) { ... }
 *
 * @RateLimited(tier = "per-tenant", key = "#pathVariables['tenant']")  // one budget per tenant
 * @PostMapping("/tenants/{tenant}/jobs")
 * Job submit(@PathVariable String tenant) { ... }
 * }</pre>
 *
 * <p>The budget is the method's own: {@code <name>|<key>}, so it never drains the caller's API-wide
 * budget nor another method's. A rejected call is answered 429 with the same headers and body as the
 * filter's; a fail-closed limiter that cannot reach its store answers 503.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface RateLimited {

    /**
     * The tier whose windows apply, one of {@code ratelimit.tiers}; empty: the caller's own tier.
     *
     * @return the tier's name
     */
    String tier() default "";

    /**
     * A SpEL expression giving the budget key, evaluated per call on: {@code request} (the {@code
     * HttpServletRequest} or WebFlux {@code ServerHttpRequest}), {@code principal} (the authenticated
     * caller or {@code null}), {@code user} (the caller's budget key: its name, or {@code
     * ip:<address>}) and {@code pathVariables} (a map), each as a property of the root and as a
     * variable ({@code #pathVariables['tenant']}). Empty, or a {@code null} result: the caller.
     * Only property access and method calls on these are allowed (no type references or
     * constructors).
     *
     * @return the expression
     */
    String key() default "";

    /**
     * The budget's name; empty: {@code <simple class name>#<method name>}. Methods that give the same
     * name share one budget.
     *
     * @return the name
     */
    String name() default "";
}
