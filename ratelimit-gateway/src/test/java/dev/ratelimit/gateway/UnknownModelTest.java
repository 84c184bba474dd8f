package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A model no upstream serves, asked for on each of OpenAI's metered endpoints and on Anthropic's:
 * a 404 in the caller's API shape, never forwarded, never charged.
 */
class UnknownModelTest extends UpstreamsTest {

    private static final String UNKNOWN = "mistral-large";

    @Test
    @DisplayName("a model nobody serves: 404 model_not_found on chat, completions, responses, embeddings; uncharged")
    void openAiEndpoints() throws Exception {
        assertOpenAiNotFound(harness.post(
                "/v1/chat/completions",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + UNKNOWN + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"));
        assertOpenAiNotFound(harness.post(
                "/v1/completions",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + UNKNOWN + "\",\"prompt\":\"Hi\",\"max_tokens\":20}"));
        assertOpenAiNotFound(harness.post(
                "/v1/completions",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + UNKNOWN + "\",\"stream\":true,\"prompt\":\"Hi\",\"max_tokens\":20}"));
        assertOpenAiNotFound(harness.post(
                "/v1/responses",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + UNKNOWN + "\",\"input\":\"Hi\",\"max_output_tokens\":20}"));
        assertOpenAiNotFound(harness.post(
                "/v1/responses",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + UNKNOWN + "\",\"stream\":true,\"input\":\"Hi\",\"max_output_tokens\":20}"));
        assertOpenAiNotFound(harness.post(
                "/v1/embeddings", "demo-pro", "application/json", "{\"model\":\"" + UNKNOWN + "\",\"input\":\"Hi\"}"));

        HttpResponse<String> claude = harness.post(
                "/v1/responses",
                "demo-pro",
                "application/json",
                "{\"model\":\"" + MODEL + "\",\"input\":\"Hi\",\"max_output_tokens\":20}");
        assertOpenAiNotFound(claude);
        assertThat(claude.body())
                .as("a model served over the other API says where")
                .contains("Anthropic's Messages API");

        assertUncharged(7);
    }

    @Test
    @DisplayName("a model nobody serves on /v1/messages: Anthropic's 404 not_found_error, uncharged")
    void anthropicEndpoint() throws Exception {
        HttpResponse<String> answer = Upstreams.messages(harness, "demo-pro", Upstreams.body(UNKNOWN, false));
        assertThat(answer.statusCode()).isEqualTo(404);
        JsonNode body = OpenAi.JSON.readTree(answer.body());
        assertThat(body.path("type").asText()).isEqualTo("error");
        assertThat(body.path("error").path("type").asText()).isEqualTo("not_found_error");
        assertThat(body.path("error").path("message").asText()).contains(UNKNOWN);

        assertThat(Upstreams.messages(harness, "demo-pro", Upstreams.body(UNKNOWN, true))
                        .statusCode())
                .isEqualTo(404);
        assertUncharged(2);
    }

    private static void assertOpenAiNotFound(HttpResponse<String> answer) throws Exception {
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(404);
        assertThat(answer.headers().firstValue("content-type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
        assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.path("code").asText()).isEqualTo("model_not_found");
        assertThat(error.path("param").asText()).isEqualTo("model");
    }

    /** Nothing reached an upstream, nothing was charged, and each refusal was counted. */
    private void assertUncharged(int refusals) throws Exception {
        assertThat(upstreams.openai.received()).isEmpty();
        assertThat(upstreams.anthropic.received()).isEmpty();
        assertThat(harness.used("demo-user-pro", "minute")).isZero();
        assertThat(harness.used("demo-user-pro", "tokens-minute")).isZero();
        assertThat(harness.metric("gateway_refusals_total", "code", "model_not_found"))
                .isEqualTo(refusals);
    }
}
