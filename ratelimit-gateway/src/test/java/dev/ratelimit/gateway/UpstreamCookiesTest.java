package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An upstream's cookies stay with the upstream's answer: the gateway keeps no cookie jar, so one
 * tenant's {@code Set-Cookie} is neither relayed to its client nor sent back on another tenant's
 * request.
 */
class UpstreamCookiesTest {

    private static final String CHAT =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    @DisplayName("an upstream's Set-Cookie is not relayed, and not sent back upstream on the next request")
    void noCookieJar() throws Exception {
        harness = Harness.start(Harness.Store.MEMORY, true);
        harness.stub().enqueue((body, response) -> {
            response.addHeader("Set-Cookie", "session=free-tenant; Path=/");
            StubUpstream.ok().answer(body, response);
        });

        HttpResponse<String> first = harness.chat("demo-free", CHAT);
        HttpResponse<String> second = harness.chat("demo-pro", CHAT);

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().allValues("set-cookie")).isEmpty();
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(harness.stub().received()).hasSize(2);
        assertThat(harness.stub().received().get(1).cookie())
                .as("the other tenant's request carries no cookie of the first's")
                .isNull();
    }
}
