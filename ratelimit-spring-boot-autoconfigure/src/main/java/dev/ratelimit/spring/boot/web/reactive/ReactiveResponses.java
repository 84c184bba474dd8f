package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.servlet.internal.RateLimitResponses;
import java.nio.charset.StandardCharsets;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/** {@link RateLimitResponses} onto a WebFlux response. */
final class ReactiveResponses {

    private ReactiveResponses() {}

    static RateLimitResponses.Target target(ServerHttpResponse response) {
        return new RateLimitResponses.Target() {
            @Override
            public void status(int status) {
                response.setStatusCode(HttpStatusCode.valueOf(status));
            }

            @Override
            public void header(String name, String value) {
                response.getHeaders().set(name, value);
            }
        };
    }

    static Mono<Void> writeJson(ServerHttpResponse response, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().setContentLength(body.length);
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }
}
