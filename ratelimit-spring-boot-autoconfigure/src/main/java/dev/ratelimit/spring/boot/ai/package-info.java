/**
 * Spring AI: the {@code RateLimitAdvisor} bean, the {@code ChatClientCustomizer} that adds it to every
 * {@code ChatClient.Builder}, the end user from Spring Security, and the models' caps and prices from
 * {@code ratelimit.spring-ai.*}.
 */
@NullMarked
package dev.ratelimit.spring.boot.ai;

import org.jspecify.annotations.NullMarked;
