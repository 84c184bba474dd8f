/** The WebFlux stack: a non-blocking {@code WebFilter} on {@code checkAsync}, {@code @RateLimited} on WebFlux handlers. */
@NullMarked
package dev.ratelimit.spring.boot.web.reactive;

import org.jspecify.annotations.NullMarked;
