/**
 * A drop-in {@link org.springframework.cloud.gateway.filter.ratelimit.RateLimiter} for Spring Cloud
 * Gateway's {@code RequestRateLimiter} filter: {@link dev.ratelimit.spring.cloud.gateway.TieredRateLimiter},
 * auto-configured by {@link dev.ratelimit.spring.cloud.gateway.RateLimitGatewayAutoConfiguration}.
 */
@NullMarked
package dev.ratelimit.spring.cloud.gateway;

import org.jspecify.annotations.NullMarked;
