package dev.ratelimit.spring.boot.web.servlet;

import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.web.internal.ContractResponses;
import dev.ratelimit.spring.boot.web.internal.ModelRefusals;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a Spring MVC handler's refused model call ({@link RateLimitExceededException}, from the
 * Spring AI advisor or the LangChain4j decorators) with the HTTP contract: 429 (400 when the call
 * alone is larger than a window) with the headers {@code ratelimit.headers.*} configures, as the
 * filter's own refusals.
 */
public final class RateLimitExceededExceptionResolver implements HandlerExceptionResolver, Ordered {

    private final RateLimitResponses responses;

    /**
     * Creates the resolver.
     *
     * @param properties the settings: headers
     */
    public RateLimitExceededExceptionResolver(RateLimitProperties properties) {
        this.responses = ContractResponses.of(properties);
    }

    @Override
    public @Nullable ModelAndView resolveException(
            HttpServletRequest request, HttpServletResponse response, @Nullable Object handler, Exception error) {
        RateLimitExceededException refusal = ModelRefusals.find(error);
        if (refusal == null || response.isCommitted()) {
            return null;
        }
        try {
            RateLimitFilter.send(response, responses.rejected(refusal.tier(), refusal.decision(), response::setHeader));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ModelAndView();
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
