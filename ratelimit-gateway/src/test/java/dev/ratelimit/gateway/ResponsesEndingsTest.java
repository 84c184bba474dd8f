package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every way a Responses API answer (and a legacy completion) can end, against a stub upstream the
 * test controls, in memory and on a private redis-server: each settles once, to the upstream's usage
 * when it reported one, to what was relayed when it did not, or not at all when nothing was produced.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class ResponsesEndingsTest {

    private static final String MODEL = "gpt-4o-mini";
    private static final String PLAIN = "{\"model\":\"gpt-4o-mini\",\"instructions\":\"Be brief.\",\"input\":\"Hi\"}";
    private static final String STREAM = PLAIN.replace("{", "{\"stream\":true,");
    private static final String PRO = "demo-user-pro";
    private static final long STUB_TOTAL = StubUpstream.INPUT + StubUpstream.OUTPUT;

    @Parameter
    Harness.Store store;

    private Harness harness;
    private final TokenCounter tokens = new TokenCounter();

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    private Harness start() throws Exception {
        harness = Harness.start(store, true);
        return harness;
    }

    private long inputEstimate(String body) throws Exception {
        JsonNode json = OpenAi.JSON.readTree(body);
        return tokens.responsesInput(MODEL, json.get("instructions"), json.get("input"));
    }

    private void awaitSettled(String outcome, String ending) throws InterruptedException {
        harness.awaitSettled(outcome, ending, PRO);
    }

    @Test
    @DisplayName("plain: reserves the counted input + max_output_tokens, commits input_tokens + output_tokens")
    void plain() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.response("response.completed", StubUpstream.INPUT, StubUpstream.OUTPUT));
        String body = PLAIN.replace("{", "{\"max_output_tokens\":300,");

        HttpResponse<String> answer = harness.post("/v1/responses", "demo-pro", "application/json", body);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("x-ratelimit-remaining-tokens"))
                .as("the reservation: counted input + max_output_tokens")
                .contains(String.valueOf(200_000 - inputEstimate(body) - 300));
        awaitSettled("committed", "completed");
        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(STUB_TOTAL);
        StubUpstream.Received received = harness.stub().received().get(0);
        assertThat(received.path()).isEqualTo("/v1/responses");
        assertThat(received.authorization()).isEqualTo("Bearer " + Harness.UPSTREAM_KEY);
        assertThat(received.body()).isEqualTo(OpenAi.JSON.readTree(body));
    }

    @Test
    @DisplayName(
            "previous_response_id: the counted part + max_output_tokens is reserved; the upstream's larger usage is charged")
    void previousResponseOverrun() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.response("response.completed", 5_000, 20));
        String body = "{\"model\":\"gpt-4o-mini\",\"previous_response_id\":\"resp_earlier\",\"max_output_tokens\":50}";

        HttpResponse<String> answer = harness.post("/v1/responses", "demo-pro", "application/json", body);

        assertThat(answer.statusCode()).isEqualTo(200);
        long reserved = inputEstimate(body) + 50;
        assertThat(answer.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(String.valueOf(200_000 - reserved));
        awaitSettled("committed", "completed");
        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(5_020).isGreaterThan(reserved);
    }

    @Test
    @DisplayName("background: answered queued without usage, so the whole reservation is committed")
    void background() throws Exception {
        start();
        harness.stub().enqueue((body, response) -> {
            response.json(200, "{\"id\":\"resp_bg\",\"object\":\"response\",\"status\":\"queued\",\"usage\":null}");
        });
        String body = PLAIN.replace("{", "{\"background\":true,\"max_output_tokens\":300,");

        HttpResponse<String> answer = harness.post("/v1/responses", "demo-pro", "application/json", body);

        assertThat(answer.statusCode()).isEqualTo(200);
        awaitSettled("committed", "completed");
        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(inputEstimate(body) + 300);
    }

    @Test
    @DisplayName(
            "stream completed: typed events relayed as they came (no [DONE]); response.completed's usage committed")
    void streamCompleted() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.response("response.completed", StubUpstream.INPUT, StubUpstream.OUTPUT));

        List<String> lines = streamLines(STREAM);

        assertThat(lines).contains("event: response.created", "event: response.completed");
        assertThat(lines.stream().filter(line -> line.equals("event: response.output_text.delta")))
                .hasSize(StubUpstream.OUTPUT);
        assertThat(lines).noneMatch(line -> line.contains("[DONE]"));
        awaitSettled("committed", "stream_completed");
        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(STUB_TOTAL);
        assertThat(harness.stub().received().get(0).body().has("stream_options"))
                .as("the Responses API reports usage unasked")
                .isFalse();
    }

    @Test
    @DisplayName("stream incomplete and failed: each commits its event's usage")
    void streamIncompleteAndFailed() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.response("response.incomplete", StubUpstream.INPUT, 3));
        harness.stub().enqueue(StubUpstream.response("response.failed", StubUpstream.INPUT, 2));

        assertThat(streamLines(STREAM)).contains("event: response.incomplete");
        awaitSettled("committed", "stream_incomplete");
        assertThat(streamLines(STREAM)).contains("event: response.failed");
        awaitSettled("committed", "stream_failed");

        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(2L * StubUpstream.INPUT + 3 + 2);
    }

    @Test
    @DisplayName(
            "client disconnect mid-stream: the input and the deltas relayed so far are committed, the upstream aborted")
    void clientDisconnect() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.responseStream(3, release, StubUpstream.Then.ENDLESS, ended));

        try (Socket socket = openStream("/v1/responses", STREAM)) {
            BufferedReader reader = reader(socket);
            assertThat(reader.readLine()).startsWith("HTTP/1.1 200");
            readUntil(reader, "event: response.output_text.delta");
        }
        release.countDown();

        awaitSettled("committed", "client_disconnected");
        assertThat(ended.await(20, TimeUnit.SECONDS))
                .as("the upstream stream was aborted")
                .isTrue();
        long atLeast = inputEstimate(STREAM) + tokens.count(MODEL, StubUpstream.WORD.repeat(3));
        assertThat(harness.used(PRO, "tokens-minute"))
                .isGreaterThanOrEqualTo(atLeast)
                .isLessThan(1_024);
    }

    @Test
    @DisplayName(
            "broken stream: what was relayed is committed and the client gets an error event; nothing relayed: cancelled")
    void brokenStream() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        release.countDown();
        harness.stub().enqueue(StubUpstream.responseStream(2, release, StubUpstream.Then.DROP, new CountDownLatch(1)));

        List<String> lines = streamLines(STREAM);

        assertThat(lines).contains("event: error");
        JsonNode notice = OpenAi.JSON.readTree(
                lines.get(lines.indexOf("event: error") + 1).substring(6));
        assertThat(notice.path("type").asText()).isEqualTo("error");
        assertThat(notice.path("code").asText()).isEqualTo("stream_broken");
        assertThat(notice.path("sequence_number").asLong()).isEqualTo(3);
        awaitSettled("committed", "stream_broken");
        assertThat(harness.used(PRO, "tokens-minute"))
                .isEqualTo(inputEstimate(STREAM) + tokens.count(MODEL, StubUpstream.WORD.repeat(2)));

        harness.stub().enqueue(StubUpstream.responseStream(0, release, StubUpstream.Then.DROP, new CountDownLatch(1)));
        assertThat(streamLines(STREAM)).contains("event: error");
        awaitSettled("cancelled", "stream_broken");
    }

    @Test
    @DisplayName("legacy completions stream: usage asked of the upstream, stripped for the client, committed")
    void completionsStream() throws Exception {
        start();
        String body = "{\"model\":\"gpt-4o-mini\",\"prompt\":\"Hi\",\"stream\":true,\"max_tokens\":20}";

        List<String> lines = streamLines("/v1/completions", body);

        assertThat(lines).contains("data: [DONE]");
        assertThat(lines).noneMatch(line -> line.contains("\"usage\""));
        assertThat(harness.stub().received().get(0).path()).isEqualTo("/v1/completions");
        assertThat(harness.stub()
                        .received()
                        .get(0)
                        .body()
                        .path("stream_options")
                        .path("include_usage")
                        .asBoolean())
                .isTrue();
        awaitSettled("committed", "stream_completed");
        assertThat(harness.used(PRO, "tokens-minute")).isEqualTo(StubUpstream.PROMPT + StubUpstream.COMPLETION);
    }

    @Test
    @DisplayName("bad input is an OpenAI-shaped 400 naming the field, never forwarded and never charged")
    void badInput() throws Exception {
        start();
        String[][] cases = {
            {"/v1/responses", "{\"model\":\"gpt-4o-mini\"}", "input", "missing_required_parameter"},
            {"/v1/responses", "{\"model\":\"gpt-4o-mini\",\"input\":5}", "input", "invalid_value"},
            {"/v1/responses", "{\"model\":\"gpt-4o-mini\",\"input\":[\"x\"]}", "input[0]", "invalid_value"},
            {
                "/v1/responses",
                "{\"model\":\"gpt-4o-mini\",\"input\":\"x\",\"max_output_tokens\":0}",
                "max_output_tokens",
                "invalid_value"
            },
            {
                "/v1/responses",
                "{\"model\":\"gpt-4o-mini\",\"input\":\"x\",\"instructions\":[1]}",
                "instructions",
                "invalid_value"
            },
            {"/v1/responses", "{\"input\":\"x\"}", "model", "missing_required_parameter"},
            {"/v1/completions", "{\"model\":\"gpt-4o-mini\"}", "prompt", "missing_required_parameter"},
            {"/v1/completions", "{\"model\":\"gpt-4o-mini\",\"prompt\":[]}", "prompt", "invalid_value"},
            {
                "/v1/completions",
                "{\"model\":\"gpt-4o-mini\",\"prompt\":\"x\",\"n\":3,\"best_of\":2}",
                "best_of",
                "invalid_value"
            },
        };
        for (String[] bad : cases) {
            HttpResponse<String> answer = harness.post(bad[0], "demo-free", "application/json", bad[1]);
            assertThat(answer.statusCode()).as(bad[1]).isEqualTo(400);
            JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
            assertThat(error.path("type").asText()).as(bad[1]).isEqualTo("invalid_request_error");
            assertThat(error.path("param").asText()).as(bad[1]).isEqualTo(bad[2]);
            assertThat(error.path("code").asText()).as(bad[1]).isEqualTo(bad[3]);
        }
        assertThat(harness.stub().received()).isEmpty();
        assertThat(harness.used("demo-user-free", "minute")).isZero();
    }

    @Test
    @DisplayName("legacy completions reserve prompts x max(n, best_of) x max_tokens; too many is request_too_large")
    void completionsEstimate() throws Exception {
        start();
        String body = "{\"model\":\"gpt-4o-mini\",\"prompt\":[\"a\",\"b\"],\"n\":2,\"best_of\":3,\"max_tokens\":100}";

        HttpResponse<String> answer = harness.post("/v1/completions", "demo-pro", "application/json", body);

        long prompt = tokens.completionPrompt(MODEL, OpenAi.JSON.readTree(body).get("prompt"));
        assertThat(answer.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(String.valueOf(200_000 - prompt - 2 * 3 * 100));
        HttpResponse<String> huge =
                harness.post("/v1/completions", "demo-free", "application/json", body.replace("100}", "4000}"));
        assertThat(huge.statusCode()).isEqualTo(400);
        assertThat(huge.body()).contains("\"code\":\"request_too_large\"");
    }

    private List<String> streamLines(String body) throws Exception {
        return streamLines("/v1/responses", body);
    }

    /** Reads a whole streamed answer (to its end or the gateway's error event) as lines. */
    private List<String> streamLines(String path, String body) throws Exception {
        List<String> lines = new ArrayList<>();
        try (Socket socket = openStream(path, body)) {
            BufferedReader reader = reader(socket);
            assertThat(reader.readLine()).startsWith("HTTP/1.1 200");
            String line;
            while ((line = reader.readLine()) != null && !line.equals("0")) {
                lines.add(line);
            }
        }
        return lines;
    }

    private static void readUntil(BufferedReader reader, String wanted) throws Exception {
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.equals(wanted)) {
                return;
            }
        }
        throw new AssertionError("the stream ended before " + wanted);
    }

    private Socket openStream(String path, String body) throws Exception {
        return harness.openStream(path, "demo-pro", body);
    }

    private static BufferedReader reader(Socket socket) throws Exception {
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    }
}
