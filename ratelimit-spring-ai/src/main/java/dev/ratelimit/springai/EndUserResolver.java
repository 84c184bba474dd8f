package dev.ratelimit.springai;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.client.ChatClientRequest;
import reactor.core.publisher.Mono;

/**
 * Finds the end user of a model call when the call names none in the {@link RateLimitAdvisor#USER}
 * advisor parameter, and the tier of every call that names none in {@link RateLimitAdvisor#TIER}.
 * With the Spring Boot starter, the default is the authenticated principal (Spring Security), with
 * the tier the web filters' {@code TierResolver} finds on it.
 */
@FunctionalInterface
public interface EndUserResolver {

    /**
     * Returns the end user of a call made with {@code ChatClient.call()}, on the calling thread.
     *
     * @param request the request as the advisor chain passes it to the model
     * @return the end user, or {@code null} when there is none
     */
    @Nullable
    EndUser resolve(ChatClientRequest request);

    /**
     * Returns the end user of a call made with {@code ChatClient.stream()}, when the stream is
     * subscribed to; the subscriber's Reactor context is visible here (WebFlux keeps Spring
     * Security's context there). By default {@link #resolve(ChatClientRequest)} on the subscribing
     * thread.
     *
     * @param request the request as the advisor chain passes it to the model
     * @return the end user, or an empty {@code Mono} when there is none
     */
    default Mono<EndUser> resolveStreaming(ChatClientRequest request) {
        return Mono.fromCallable(() -> resolve(request));
    }
}
