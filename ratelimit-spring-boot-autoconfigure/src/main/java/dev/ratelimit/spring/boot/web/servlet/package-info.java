/** The servlet stack: {@code RateLimitFilter} after Spring Security, {@code @RateLimited} on Spring MVC handlers. */
@NullMarked
package dev.ratelimit.spring.boot.web.servlet;

import org.jspecify.annotations.NullMarked;
