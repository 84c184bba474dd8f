/** What both web stacks share: callers from Spring Security, tiers, paths and {@code @RateLimited} keys. */
@NullMarked
package dev.ratelimit.spring.boot.web;

import org.jspecify.annotations.NullMarked;
