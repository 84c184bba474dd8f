package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.core.http.StreamResponse;
import com.openai.errors.RateLimitException;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The built-in mock model misbehaves on demand ({@code [mock:status=NNN]}, {@code [mock:break]},
 * {@code [mock:slow]} in the last user text on OpenAI's endpoints; {@code [mock:slow]}, {@code
 * [mock:error]}, {@code [mock:break]}, {@code [mock:429]} on Anthropic's {@code /v1/messages}, whose
 * {@code [mock:529]} {@code AnthropicClientTest} covers), so the Quickstart can show every ending
 * with nothing installed; the gateway settles each as it does a real upstream's.
 */
class MockDemandTest extends MockGatewayTest {

    @Test
    @DisplayName("[mock:status=503] on chat: relayed, cancelled, nothing charged")
    void statusOnDemand() throws Exception {
        HttpResponse<String> answer = harness.chat(
                "demo-pro",
                "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"[mock:status=503]\"}]}");

        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.headers().firstValue("retry-after")).contains("2");
        harness.awaitSettled("cancelled", "upstream_error", "demo-user-pro");
        assertThat(harness.used("demo-user-pro", "tokens-minute")).isZero();
    }

    @Test
    @DisplayName("[mock:status=429] on responses: openai-java raises RateLimitException, and the request is given back")
    void upstream429OnDemand() throws Exception {
        assertThatThrownBy(() -> harness.openAi("demo-pro")
                        .responses()
                        .create(ResponseCreateParams.builder()
                                .model("gpt-4o-mini")
                                .input("[mock:status=429]")
                                .build()))
                .isInstanceOfSatisfying(
                        RateLimitException.class,
                        e -> assertThat(e.headers().values("retry-after")).containsExactly("2"));
        harness.awaitSettled("cancelled", "upstream_429", "demo-user-pro");
        assertThat(harness.used("demo-user-pro", "minute")).isZero();
    }

    @Test
    @DisplayName("[mock:break] on a responses stream: the client gets an error event, what was relayed is committed")
    void breakOnDemand() throws Exception {
        String body = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"input\":\"[mock:break] one two three four\"}";
        List<String> lines = new ArrayList<>();
        try (Socket socket = harness.openStream("/v1/responses", "demo-pro", body)) {
            BufferedReader reader =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null && !line.equals("0")) {
                lines.add(line);
            }
        }

        assertThat(lines).contains("event: response.output_text.delta", "event: error");
        assertThat(lines).noneMatch(line -> line.equals("event: response.completed"));
        harness.awaitSettled("committed", "stream_broken", "demo-user-pro");
        assertThat(harness.used("demo-user-pro", "tokens-minute")).isPositive();
    }

    @Test
    @DisplayName("[mock:slow] on a completions stream: every word still arrives, and the stream settles")
    void slowOnDemand() throws Exception {
        StringBuilder text = new StringBuilder();
        try (StreamResponse<Completion> stream = harness.openAi("demo-pro")
                .completions()
                .createStreaming(CompletionCreateParams.builder()
                        .model("gpt-4o-mini")
                        .prompt("[mock:slow] hi")
                        .build())) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(choice -> text.append(choice.text())));
        }

        assertThat(text.toString()).isEqualTo(dev.ratelimit.fakemodel.Echo.reply("[mock:slow] hi"));
        harness.awaitSettled("committed", "stream_completed", "demo-user-pro");
    }

    private static final String CLAUDE = "claude-sonnet-4-5";

    /** A Messages API request whose last user message carries {@code text}, markers included. */
    private static String messages(String text, boolean stream) {
        return "{\"model\":\"" + CLAUDE + "\",\"max_tokens\":100,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + text + "\"}]}";
    }

    /** The {@code event:} names of a server-sent event stream, in order. */
    private static List<String> events(String body) {
        return body.lines()
                .filter(line -> line.startsWith("event: "))
                .map(line -> line.substring("event: ".length()))
                .toList();
    }

    @Test
    @DisplayName("[mock:slow] on a messages stream: every event still arrives, the stream settles to its usage")
    void anthropicSlowOnDemand() throws Exception {
        HttpResponse<String> answer = Upstreams.messages(harness, "demo-pro", messages("[mock:slow] hi", true));

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(events(answer.body()))
                .startsWith("message_start", "content_block_start", "ping")
                .endsWith("content_block_stop", "message_delta", "message_stop");
        String reply = dev.ratelimit.fakemodel.Echo.reply("[mock:slow] hi");
        assertThat(answer.body()).contains("\"output_tokens\":" + MockModel.anthropicText(reply));
        harness.awaitSettled("committed", "stream_completed", "demo-user-pro");
        assertThat(harness.tokens("demo-user-pro"))
                .as("the mock's input and output, as its message_start and message_delta said")
                .isEqualTo(MockModel.anthropicInput(OpenAi.JSON.readTree(messages("[mock:slow] hi", true)))
                        + MockModel.anthropicText(reply));
    }

    @Test
    @DisplayName("[mock:error] on a messages stream: the error event is relayed, what was produced is committed")
    void anthropicErrorOnDemand() throws Exception {
        HttpResponse<String> answer = Upstreams.messages(harness, "demo-pro", messages("[mock:error] hi", true));

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(events(answer.body())).contains("content_block_delta").endsWith("error");
        assertThat(answer.body()).contains("\"type\":\"overloaded_error\"").doesNotContain("message_stop");
        harness.awaitSettled("committed", "stream_error", "demo-user-pro");
        assertThat(harness.tokens("demo-user-pro")).isPositive();
    }

    @Test
    @DisplayName(
            "[mock:break] on a messages stream: the client gets the gateway's error event, what was relayed is committed")
    void anthropicBreakOnDemand() throws Exception {
        HttpResponse<String> answer = Upstreams.messages(harness, "demo-pro", messages("[mock:break] hi", true));

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(events(answer.body())).contains("content_block_delta").endsWith("error");
        assertThat(answer.body())
                .contains("\"type\":\"api_error\"", "broke off")
                .doesNotContain("message_stop");
        harness.awaitSettled("committed", "stream_broken", "demo-user-pro");
        assertThat(harness.tokens("demo-user-pro")).isPositive();
    }

    @Test
    @DisplayName("[mock:429] on messages: Anthropic's 429 with retry-after: 5 is passed on, nothing charged")
    void anthropic429OnDemand() throws Exception {
        HttpResponse<String> answer = Upstreams.messages(harness, "demo-pro", messages("[mock:429] hi", false));

        assertThat(answer.statusCode()).isEqualTo(429);
        assertThat(answer.headers().firstValue("retry-after")).contains("5");
        assertThat(OpenAi.JSON
                        .readTree(answer.body())
                        .path("error")
                        .path("type")
                        .asText())
                .isEqualTo("rate_limit_error");
        harness.awaitSettled("cancelled", "upstream_429", "demo-user-pro");
        assertThat(harness.used("demo-user-pro", "minute")).isZero();
        assertThat(harness.tokens("demo-user-pro")).isZero();
    }
}
