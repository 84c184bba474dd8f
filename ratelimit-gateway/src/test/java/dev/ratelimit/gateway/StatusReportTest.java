package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code /status.json} on a private redis-server shared by two gateway processes: it reads the
 * store, so each gateway shows the other's traffic, and it answers (never a 500) while Redis is down.
 */
class StatusReportTest {

    private static final String HELLO =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";

    private final RedisServer redis = RedisServer.start();
    private Harness first;
    private Harness second;

    @AfterEach
    void stop() {
        if (first != null) {
            first.close();
        }
        if (second != null) {
            second.close();
        }
        redis.close();
    }

    private Harness gateway() throws Exception {
        return gateway(Harness.testConfig());
    }

    private Harness gateway(Path config) throws Exception {
        return Harness.start(
                Harness.Store.MEMORY, false, Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()));
    }

    private static JsonNode model(JsonNode status, String name) {
        for (JsonNode cap : status.path("models")) {
            if (cap.path("model").asText().equals(name)) {
                return cap;
            }
        }
        throw new AssertionError("no cap of " + name + " in " + status);
    }

    private static JsonNode status(Harness harness) throws Exception {
        HttpResponse<String> response = harness.admin("/status.json");
        assertThat(response.statusCode()).isEqualTo(200);
        return OpenAi.JSON.readTree(response.body());
    }

    private static JsonNode window(JsonNode owner, String name) {
        for (JsonNode window : owner.path("windows")) {
            if (window.path("name").asText().equals(name)) {
                return window;
            }
        }
        throw new AssertionError("no window " + name + " in " + owner);
    }

    @Test
    @DisplayName("a gateway's status shows the requests another gateway process admitted on the same Redis")
    void sharedAcrossProcesses() throws Exception {
        first = gateway();
        second = gateway();
        for (int i = 0; i < 3; i++) {
            assertThat(first.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
        }
        assertThat(second.chat("demo-pro", HELLO).statusCode()).isEqualTo(200);

        JsonNode seenBySecond = status(second);
        JsonNode free = seenBySecond.path("tenants").get(0);
        assertThat(free.path("tenant").asText()).isEqualTo("demo-user-free");
        assertThat(window(free, "minute").path("used").asLong()).isEqualTo(3);
        assertThat(window(free, "minute").path("resetSeconds").asLong()).isEqualTo(60);
        assertThat(window(free, "tokens-minute").path("used").asLong()).isPositive();
        assertThat(window(seenBySecond.path("models").get(0), "rpm")
                        .path("used")
                        .asLong())
                .as("gpt-4o-mini's upstream cap, charged through both gateways")
                .isEqualTo(4);
        assertThat(window(status(first).path("tenants").get(1), "minute")
                        .path("used")
                        .asLong())
                .as("and the first sees the second's")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("a leased cap lists the lease this gateway process holds (the other's lists none); the store counts"
            + " it whole")
    void leaseHeldByThisProcess() throws Exception {
        Path config = Harness.config(
                Map.of("  gpt-4o: { rpm: 500, tpm: 300000 }", "  gpt-4o: { rpm: 120, tpm: 300000, lease: auto }"), "");
        first = gateway(config);
        second = gateway(config);
        int admitted = 8; // the first 3 reserve on the cap directly, then leases: 1, 2, 4 requests...
        for (int i = 0; i < admitted; i++) {
            assertThat(first.chat("demo-enterprise", HELLO.replace("gpt-4o-mini", "gpt-4o"))
                            .statusCode())
                    .isEqualTo(200);
        }

        JsonNode cap = model(status(first), "gpt-4o");
        assertThat(cap.path("leases")).as(cap.toString()).hasSize(1);
        JsonNode lease = cap.path("leases").get(0);
        assertThat(lease.path("endsAt").asText())
                .as("a second after it was taken, on the gateway's clock")
                .isEqualTo(first.clock.instant().plusSeconds(1).toString());
        JsonNode requests = lease.path("units").get(0);
        assertThat(requests.path("unit").asText()).isEqualTo("requests");
        long size = requests.path("size").asLong();
        long used = requests.path("used").asLong();
        assertThat(used).isBetween(1L, size);
        assertThat(size).as("a tenth of the cap at most").isLessThanOrEqualTo(12);
        assertThat(lease.path("units").get(1).path("unit").asText()).isEqualTo("tokens");
        assertThat(window(cap, "rpm").path("used").asLong())
                .as("the store counts what was admitted and the lease's unused part")
                .isEqualTo(admitted + size - used);

        JsonNode other = model(status(second), "gpt-4o");
        assertThat(other.path("leases")).as("the second process holds no lease").isEmpty();
        assertThat(window(other, "rpm").path("used").asLong()).isEqualTo(admitted + size - used);
        assertThat(model(status(first), "gpt-4o-mini").has("leases"))
                .as("a cap not leased")
                .isFalse();
    }

    @Test
    @DisplayName("while Redis is down the status answers 200: every card says the store cannot be read")
    void storeDown() throws Exception {
        first = gateway();
        redis.stop();

        JsonNode status = status(first);

        for (JsonNode owner : status.path("tenants")) {
            assertThat(owner.path("error").asText()).startsWith("the store cannot be read");
            assertThat(owner.path("inFlight").asInt())
                    .as("the slots cannot tell either")
                    .isEqualTo(-1);
            assertThat(window(owner, "minute").path("used").isNull()).isTrue();
        }
        for (JsonNode cap : status.path("models")) {
            assertThat(cap.path("error").asText()).startsWith("the store cannot be read");
        }
        assertThat(first.admin("/").statusCode()).isEqualTo(200);
    }
}
