package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.web.JsonErrors;
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
     * An exception that escapes a servlet reaches the error handler the gateway installs on its server
     * and contexts ({@link JsonErrors}); it is shown on a Jetty server of the test's own with that
     * handler and a servlet that throws, over real HTTP, since no request to the gateway's own
     * servlets is meant to throw (bad input is refused in the caller's shape before that).
     */
    @Test
    @DisplayName("an exception that escapes a servlet is a 500 in OpenAI's shape: no HTML, no class names")
    void uncaughtException() throws Exception {
        org.eclipse.jetty.server.Server server = new org.eclipse.jetty.server.Server();
        org.eclipse.jetty.server.ServerConnector connector = new org.eclipse.jetty.server.ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        org.eclipse.jetty.ee10.servlet.ServletContextHandler context =
                new org.eclipse.jetty.ee10.servlet.ServletContextHandler();
        context.addServlet(
                new org.eclipse.jetty.ee10.servlet.ServletHolder(new jakarta.servlet.http.HttpServlet() {
                    private static final long serialVersionUID = 1L;

                    @Override
                    protected void service(
                            jakarta.servlet.http.HttpServletRequest request,
                            jakarta.servlet.http.HttpServletResponse response) {
                        throw new IllegalStateException("internal detail x-secret-42");
                    }
                }),
                "/*");
        context.setErrorHandler(new JsonErrors());
        server.setErrorHandler(new JsonErrors());
        server.setHandler(context);
        server.start();
        try {
            HttpResponse<String> answer = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                            "http://127.0.0.1:" + connector.getLocalPort() + "/v1/anything"))
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
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
                    .doesNotContain("x-secret-42");
        } finally {
            server.stop();
        }
    }

    @Test
    @DisplayName("a charset Java does not know is a 415 and a query that is not a valid URI a 400, both uncharged")
    void unknownCharsetAndBadQuery() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true)) {
            HttpResponse<String> charset = harness.post(
                    "/v1/chat/completions",
                    "demo-free",
                    "application/json; charset=x-unknown-42",
                    "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
            assertThat(charset.statusCode()).isEqualTo(415);
            assertThat(OpenAi.JSON
                            .readTree(charset.body())
                            .path("error")
                            .path("code")
                            .asText())
                    .isEqualTo("unsupported_content_type");

            // java.net.http refuses such a URL: a raw request, as a client that does not check would send it
            try (Socket socket = new Socket("127.0.0.1", harness.server.port())) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                out.write(("GET /v1/models?x=%zz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-free\r\n"
                                + "Connection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(answer).startsWith("HTTP/1.1 400");
                JsonNode body = OpenAi.JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
                assertThat(body.path("error").path("code").asText()).isEqualTo("invalid_request_url");
            }

            assertThat(harness.stub().received()).as("never forwarded").isEmpty();
            assertThat(harness.used("demo-user-free", "minute"))
                    .as("never charged")
                    .isZero();
        }
    }
}
