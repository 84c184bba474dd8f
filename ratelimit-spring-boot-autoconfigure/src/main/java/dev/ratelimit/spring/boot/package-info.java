/** Spring Boot auto-configuration of the rate limiter: properties, store, limiter, {@link dev.ratelimit.spring.boot.RateLimited}. */
@NullMarked
package dev.ratelimit.spring.boot;

import org.jspecify.annotations.NullMarked;
