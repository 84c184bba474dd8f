package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What Jetty itself answers, before any servlet or for an exception that escaped one: OpenAI's error
 * shape, no HTML, no parser or class internals.
 */
class JettyErrorsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "oversized header, 431, headers_too_large",
        "oversized URI, 414, uri_too_long",
        "not HTTP, 400, bad_request",
    })
    @DisplayName("Jetty's own errors are OpenAI-shaped JSON")
    void jsonErrors(String name, int status, String code) throws Exception {
        String request = switch (name) {
            case "oversized header" -> "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000) + "\r\n\r\n";
            case "oversized URI" -> "GET /v1/" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n";
            default -> "NOT-HTTP\r\n\r\n";
        };
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false);
                Socket socket = new Socket("127.0.0.1", harness.server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 " + status);
            assertThat(answer.toLowerCase(java.util.Locale.ROOT)).contains("content-type: application/json");
            JsonNode body = OpenAi.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
            assertThat(body.path("error").path("code").asText()).isEqualTo(code);
            assertThat(answer)
                    .doesNotContain("<html")
                    .doesNotContain("Exception")
                    .doesNotContain("org.eclipse");
        }
    }

    /**
     * A real request whose handling throws out of a servlet: a charset Java does not know in {@code
     * Content-Type} makes Jetty's {@code getContentType()} throw {@code UnsupportedCharsetException}
     * inside the metered servlet, before anything is charged. (It deserves a 415 of its own; until it
     * has one it is the way in to the error handler for an exception no servlet caught.)
     */
    @Test
    @DisplayName("an exception that escapes a servlet is a 500 in OpenAI's shape: no HTML, no class names, uncharged")
    void uncaughtException() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true)) {
            HttpResponse<String> answer = harness.post(
                    "/v1/chat/completions",
                    "demo-free",
                    "application/json; charset=x-unknown-42",
                    "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");

            assertThat(answer.statusCode()).isEqualTo(500);
            assertThat(answer.headers().firstValue("content-type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
            assertThat(error.path("type").asText()).isEqualTo("server_error");
            assertThat(error.path("code").asText()).isEqualTo("server_error");
            assertThat(error.path("message").asText()).isEqualTo("The gateway failed while answering this request.");
            assertThat(answer.body())
                    .doesNotContain("<html")
                    .doesNotContain("Exception")
                    .doesNotContain("java.")
                    .doesNotContain("org.eclipse")
                    .doesNotContain("x-unknown-42");
            assertThat(harness.stub().received()).as("never forwarded").isEmpty();
            assertThat(harness.used("demo-user-free", "minute"))
                    .as("never charged")
                    .isZero();
        }
    }
}
