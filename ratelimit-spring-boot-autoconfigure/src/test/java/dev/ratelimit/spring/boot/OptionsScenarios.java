package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Shadow mode and the header families, as the subclasses set them: {@code ratelimit.shadow-mode=true},
 * {@code ratelimit.headers.families=ietf,openai} (the X-RateLimit family off, OpenAI's on).
 */
public abstract class OptionsScenarios {

    /** The properties every subclass's application runs with. */
    public static final String SHADOW_MODE = "ratelimit.shadow-mode=true";

    /** In the names of {@code HeaderFamily}, as users write them (a dash for the underscore, any case). */
    public static final String IETF_AND_OPENAI_HEADERS = "ratelimit.headers.families=ietf,openai";

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meterRegistry;

    @Test
    public void shadowModeCountsWouldBeRejectionsButNeverAnswers429() {
        Http http = new Http(port);
        String token = TestJwts.token("shadowed", null);
        for (int i = 1; i <= 7; i++) {
            HttpResponse<String> response = http.get("/api/hello", token);
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
            if (i <= 5) {
                assertThat(response.headers().firstValue("x-ratelimit-limit-requests"))
                        .hasValue("5");
                assertThat(response.headers().firstValue("x-ratelimit-remaining-requests"))
                        .hasValue(String.valueOf(5 - i));
                assertThat(response.headers().firstValue("RateLimit-Policy")).isPresent();
            } else {
                assertThat(response.headers().firstValue("Retry-After")).isEmpty();
            }
        }
        Counter rejected = meterRegistry
                .find("ratelimit.decisions")
                .tags("tier", "free", "outcome", "rejected")
                .counter();
        assertThat(rejected).isNotNull();
        assertThat(rejected.count()).isEqualTo(2.0);
    }
}
