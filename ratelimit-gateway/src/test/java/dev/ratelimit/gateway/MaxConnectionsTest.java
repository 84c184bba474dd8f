package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code server.max-connections}: a connection opened beyond the limit is answered at once, 503 in
 * the shape of the caller's API with {@code Retry-After}, and closed, never queued; nothing is
 * charged or forwarded for it, and the connections within the limit are served.
 */
class MaxConnectionsTest {

    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String MESSAGE = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":16,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    private Harness harness;
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Socket socket : sockets) {
            socket.close();
        }
        if (harness != null) {
            harness.close();
        }
    }

    private Socket open() throws Exception {
        Socket socket = RawHttp.connect(harness.server.port(), 0);
        sockets.add(socket);
        return socket;
    }

    private static RawHttp.Answer chat(Socket socket, InputStream in) throws Exception {
        RawHttp.post(socket, "/v1/chat/completions", "demo-pro", PLAIN);
        return RawHttp.read(in);
    }

    @Test
    @DisplayName("beyond server.max-connections: 503 server_overloaded with Retry-After in OpenAI's or Anthropic's"
            + " shape, the connection closed, nothing charged; within it, served")
    void refusedBeyondTheLimit() throws Exception {
        Path config = Harness.config(Map.of(), "server:\n  max-connections: 2\n");
        harness = Harness.start(Harness.Store.MEMORY, true, Map.of("GATEWAY_CONFIG", config.toString()));
        Socket first = open();
        Socket second = open();
        InputStream firstIn = new BufferedInputStream(first.getInputStream());
        assertThat(chat(first, firstIn).status()).isEqualTo(200);
        assertThat(chat(second, new BufferedInputStream(second.getInputStream()))
                        .status())
                .isEqualTo(200);
        assertThat(harness.metric("gateway_connections_open")).isEqualTo(2);

        Socket third = open();
        InputStream thirdIn = new BufferedInputStream(third.getInputStream());
        RawHttp.Answer refused = chat(third, thirdIn);

        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("Retry-After")).isEqualTo("1");
        assertThat(refused.header("Connection")).isEqualTo("close");
        JsonNode error = OpenAi.JSON.readTree(refused.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("server_overloaded");
        assertThat(error.path("type").asText()).isEqualTo("server_error");
        assertThat(error.path("message").asText()).contains("server.max-connections");
        assertThat(thirdIn.read()).as("the gateway closed the connection").isEqualTo(-1);

        Socket fourth = open();
        RawHttp.post(fourth, "/v1/messages", "demo-pro", MESSAGE);
        RawHttp.Answer anthropic = RawHttp.read(new BufferedInputStream(fourth.getInputStream()));
        assertThat(anthropic.status()).isEqualTo(503);
        JsonNode body = OpenAi.JSON.readTree(anthropic.body());
        assertThat(body.path("type").asText()).isEqualTo("error");
        assertThat(body.path("error").path("type").asText()).isEqualTo("api_error");

        assertThat(harness.stub().received())
                .as("only the two within the limit were forwarded")
                .hasSize(2);
        assertThat(harness.used("demo-user-pro", "minute")).isEqualTo(2);
        assertThat(harness.metric("gateway_refusals_total", "endpoint", "connection", "status", "503"))
                .isEqualTo(2);

        first.close();
        Harness.await("the refused and the closed connections are gone", () -> {
            try {
                return harness.metric("gateway_connections_open") == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Socket fifth = open();
        assertThat(chat(fifth, new BufferedInputStream(fifth.getInputStream())).status())
                .as("room again once a connection closed")
                .isEqualTo(200);
    }
}
