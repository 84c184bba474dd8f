package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.ratelimit.gateway.config.GatewayConfig;
import java.io.ByteArrayInputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Budget alerts: a window that reaches 50, 80 and 100 % of its limit is announced once per threshold
 * and period, whichever of two gateways on one Redis admitted the request that crossed it; a webhook
 * that is down gets the alert once it is back, by the retries.
 */
class BudgetAlertsTest {

    private static final String CHAT =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    /** A webhook receiver: a real HTTP server that keeps each POST's body and answers {@code status}. */
    private static final class Receiver implements AutoCloseable {
        final List<JsonNode> received = new CopyOnWriteArrayList<>();
        final AtomicInteger status = new AtomicInteger(204);
        final HttpServer server;

        Receiver(int port) throws Exception {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
            server.createContext("/alerts", exchange -> {
                byte[] body = exchange.getRequestBody().readAllBytes();
                received.add(JSON.readTree(body));
                exchange.sendResponseHeaders(status.get(), -1);
                exchange.close();
            });
            server.start();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    private Harness gateway(int webhookPort) throws Exception {
        Path config = Harness.config(
                Map.of(),
                "alerts:\n  thresholds: []\n  windows:\n    minute: [50, 80, 100]\n  webhook:\n"
                        + "    url: http://127.0.0.1:" + webhookPort + "/alerts\n");
        Harness harness = Harness.start(Harness.Store.REDIS, true, Map.of("GATEWAY_CONFIG", config.toString()));
        opened.add(harness::close);
        return harness;
    }

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Test
    @DisplayName("two gateways on one Redis: one POST per threshold crossed per period, whichever gateway crossed it")
    void oncePerThresholdAndPeriodAcrossGateways() throws Exception {
        Receiver receiver = new Receiver(0);
        opened.add(receiver);
        int port = receiver.server.getAddress().getPort();
        Harness first = gateway(port);
        Harness second = gateway(port); // started before any request: Harness flushes the private Redis
        second.clock.set(first.clock.instant());

        for (int minute = 0; minute < 2; minute++) {
            for (int i = 0; i < 7; i++) { // 5 fit a minute; the 6th and 7th are refused and alert nothing new
                Harness via = i % 2 == 0 ? first : second;
                assertThat(via.chat("demo-free", CHAT).statusCode()).isEqualTo(i < 5 ? 200 : 429);
            }
            int expected = 3 * (minute + 1);
            Harness.await(expected + " alerts", () -> receiver.received.size() >= expected);
            if (minute == 0) {
                JsonNode window =
                        JSON.readTree(first.admin("/status.json").body()).path("tenants").findValues("windows").stream()
                                .flatMap(windows -> java.util.stream.StreamSupport.stream(windows.spliterator(), false))
                                .filter(node -> node.path("name").asText().equals("minute")
                                        && node.path("used").asLong() == 5)
                                .findFirst()
                                .orElseThrow();
                assertThat(window.path("alert").asInt())
                        .as("the status page marks the threshold reached")
                        .isEqualTo(100);
            }
            first.clock.advance(Duration.ofMinutes(1));
            second.clock.advance(Duration.ofMinutes(1));
        }
        Thread.sleep(500); // a duplicate would arrive within the claim's round trip; none may
        assertThat(receiver.received).hasSize(6);
        assertThat(receiver.received)
                .extracting(node -> node.path("threshold").asInt() + "@"
                        + node.path("periodStart").asText())
                .as("the two gateways' alerts are posted as they come, in any order")
                .containsExactlyInAnyOrder(
                        "50@2030-01-01T00:00:00Z",
                        "80@2030-01-01T00:00:00Z",
                        "100@2030-01-01T00:00:00Z",
                        "50@2030-01-01T00:01:00Z",
                        "80@2030-01-01T00:01:00Z",
                        "100@2030-01-01T00:01:00Z");
        // the first minute's 50 % alert: the posts of one minute may arrive in any order
        JsonNode alert = receiver.received.stream()
                .filter(node -> node.path("threshold").asInt() == 50
                        && node.path("periodStart").asText().equals("2030-01-01T00:00:00Z"))
                .findFirst()
                .orElseThrow();
        assertThat(alert.path("level").asText()).isEqualTo("tenant");
        assertThat(alert.path("name").asText()).isEqualTo("demo-user-free");
        assertThat(alert.path("window").asText()).isEqualTo("minute");
        assertThat(alert.path("used").asLong()).isEqualTo(3);
        assertThat(alert.path("limit").asLong()).isEqualTo(5);

        double counted = 0;
        for (Harness harness : List.of(first, second)) {
            counted += harness.admin("/metrics")
                    .body()
                    .lines()
                    .filter(line -> line.startsWith("gateway_budget_alerts_total{"))
                    .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                    .sum();
        }
        assertThat(counted).as("the counter, summed over both gateways").isEqualTo(6);
    }

    @Test
    @DisplayName("a webhook that is down gets the alert once it is back: the POST is retried with doubling waits")
    void retriedUntilTheWebhookIsBack() throws Exception {
        int port = freePort(); // nothing listens there yet
        Harness harness = gateway(port);
        for (int i = 0; i < 3; i++) {
            assertThat(harness.chat("demo-free", CHAT).statusCode()).isEqualTo(200); // the third crosses 50 %
        }
        Thread.sleep(1_500); // the first attempt (refused connection) and the second, a second later, have failed
        Receiver receiver = new Receiver(port);
        opened.add(receiver);
        receiver.status.set(503); // up, but failing once more
        Harness.await("a retry reaches the receiver", () -> !receiver.received.isEmpty());
        receiver.status.set(200);
        Harness.await("and the next one is taken", () -> receiver.received.size() >= 2);
        Thread.sleep(500);
        assertThat(receiver.received)
                .hasSize(2)
                .allSatisfy(node -> assertThat(node.path("threshold").asInt()).isEqualTo(50));
    }

    @Test
    @DisplayName("the alerts section is validated, each error naming its setting")
    void validated() {
        String yaml = """
                keys: [{ key: k, tenant: t, tier: free }]
                tiers: { free: { windows: { minute: 5/1m } } }
                alerts:
                  thresholds: [50, 0]
                  windows: { minute: [120, 5000] }
                  webhook: { url: "ftp://example.com", max-attempts: 0 }
                """;
        assertThatThrownBy(() -> GatewayConfig.parse(
                        new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "alerts.yaml"))
                .hasMessageContaining("alerts.thresholds: each threshold is a per cent from 1 to 1000, was 0")
                .hasMessageContaining("alerts.windows.minute: each threshold is a per cent from 1 to 1000, was 5000")
                .hasMessageContaining("alerts.webhook.url: must be an http(s) URL")
                .hasMessageContaining("alerts.webhook.max-attempts: must be 1 to 30, was 0");
    }
}
