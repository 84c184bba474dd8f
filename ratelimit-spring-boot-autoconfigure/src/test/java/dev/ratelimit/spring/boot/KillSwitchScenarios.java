package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/** {@code ratelimit.enabled=false}: every request passes, nothing is counted, health says so. */
public abstract class KillSwitchScenarios {

    @LocalServerPort
    int port;

    @Test
    public void everyRequestPassesAndNothingIsCounted() {
        Http http = new Http(port);
        for (int i = 0; i < 12; i++) {
            assertThat(http.get("/api/hello").statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(http.get("/api/export").statusCode()).as("export %d", i).isEqualTo(200);
        }
        HttpResponse<String> health = http.get("/actuator/health/rateLimit");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"").contains("\"disabled\":true");
        String admin = TestJwts.token("admin", null, List.of("ADMIN"));
        assertThat(http.get("/actuator/ratelimit/ip:127.0.0.1", admin).body()).contains("\"windows\":[]");
    }
}
