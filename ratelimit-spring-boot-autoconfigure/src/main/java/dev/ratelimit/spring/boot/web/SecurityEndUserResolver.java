package dev.ratelimit.spring.boot.web;

import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.internal.Callers;
import dev.ratelimit.springai.EndUser;
import dev.ratelimit.springai.EndUserResolver;
import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.util.ClassUtils;
import reactor.core.publisher.Mono;

/**
 * The starter's default {@link EndUserResolver}: the authenticated principal, as the web filters
 * find it (Spring Security's {@code Authentication#getName}), with the tier the {@link TierResolver}
 * finds on it. {@code call()} reads the calling thread's security context; {@code stream()} the
 * subscriber's Reactor context first (WebFlux), then the subscribing thread's.
 */
public final class SecurityEndUserResolver implements EndUserResolver {

    private static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.core.context.ReactiveSecurityContextHolder",
            SecurityEndUserResolver.class.getClassLoader());

    private final TierResolver tiers;

    /**
     * Creates the resolver.
     *
     * @param tiers finds the tier of an authenticated caller
     */
    public SecurityEndUserResolver(TierResolver tiers) {
        this.tiers = tiers;
    }

    @Override
    public @Nullable EndUser resolve(ChatClientRequest request) {
        return endUser(Callers.current(null));
    }

    @Override
    public Mono<EndUser> resolveStreaming(ChatClientRequest request) {
        Mono<EndUser> thread = Mono.fromCallable(() -> resolve(request));
        if (!SECURITY) {
            return thread;
        }
        return ReactiveSecurityContextHolder.getContext()
                .mapNotNull(SecurityContext::getAuthentication)
                .mapNotNull(this::endUser)
                .switchIfEmpty(thread);
    }

    private @Nullable EndUser endUser(@Nullable Principal principal) {
        if (principal == null || !Callers.authenticated(principal)) {
            return null;
        }
        return new EndUser(principal.getName(), tiers.resolveTier(principal));
    }
}
