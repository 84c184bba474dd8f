/**
 * What the two Spring web stacks share that is not API (callers from Spring Security, path patterns,
 * {@code @RateLimited} budgets, the response writer as the properties configure it): it may change
 * in any release.
 */
@NullMarked
package dev.ratelimit.spring.boot.web.internal;

import org.jspecify.annotations.NullMarked;
