package dev.ratelimit.gateway;

import static dev.ratelimit.gateway.AdminKeysTest.ADMIN_KEY;
import static dev.ratelimit.gateway.AdminKeysTest.admin;
import static dev.ratelimit.gateway.AdminKeysTest.chat;
import static dev.ratelimit.gateway.AdminKeysTest.create;
import static dev.ratelimit.gateway.AdminKeysTest.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Managed keys on a Redis of this test's own, which it stops: a gateway started after a key was
 * created knows it at once, and while Redis is down the admin API answers 503 (nothing changed)
 * and the keys already known keep working.
 */
class AdminKeysRedisTest {

    @RegisterExtension
    final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private Harness gateway(Path config) throws Exception {
        return Harness.start(
                Harness.Store.MEMORY,
                false,
                Map.of(
                        "GATEWAY_CONFIG",
                        config.toString(),
                        "REDIS_URL",
                        redis.get().uri()));
    }

    @Test
    @DisplayName("a gateway that starts after a key was created reads it at start")
    void readAtStart() throws Exception {
        Path config = AdminKeysTest.adminConfig();
        try (Harness first = gateway(config)) {
            String secret = create(first, "{\"tenant\":\"acme\",\"tier\":\"pro\"}")
                    .path("key")
                    .asText();
            try (Harness later = gateway(config)) {
                assertThat(chat(later, secret)).isEqualTo(200);
                assertThat(json(admin(later, "GET", "/admin/keys", ADMIN_KEY, ""))
                                .path("data"))
                        .hasSize(1);
            }
        }
    }

    @Test
    @DisplayName("Redis down: admin calls get 503 JSON and change nothing; known keys keep working")
    void redisDown() throws Exception {
        try (Harness harness = gateway(AdminKeysTest.adminConfig())) {
            String secret = create(harness, "{\"tenant\":\"acme\",\"tier\":\"pro\"}")
                    .path("key")
                    .asText();
            String id = json(admin(harness, "GET", "/admin/keys", ADMIN_KEY, ""))
                    .path("data")
                    .path(0)
                    .path("id")
                    .asText();
            redis.get().stop();
            for (String[] call : new String[][] {
                {"POST", "/admin/keys", "{\"tenant\":\"other\",\"tier\":\"pro\"}"},
                {"GET", "/admin/keys", ""},
                {"GET", "/admin/keys/" + id, ""},
                {"DELETE", "/admin/keys/" + id, ""},
            }) {
                HttpResponse<String> refused = admin(harness, call[0], call[1], ADMIN_KEY, call[2]);
                assertThat(refused.statusCode()).as(call[0] + " " + call[1]).isEqualTo(503);
                assertThat(json(refused).path("error").path("code").asText()).isEqualTo("store_unavailable");
            }
            // the limiter fails open by default: the request passes on the key this process knows
            assertThat(chat(harness, secret)).isEqualTo(200);
        }
    }

    @Test
    @DisplayName("on Redis a key is one field of <prefix>:admin-keys holding its secret's SHA-256, never the secret")
    void storedAsDigestUnderThePrefix() throws Exception {
        Path config = Harness.config(
                Map.of(),
                "admin:\n  prefix: gw-east\n  keys:\n    - key-sha256: "
                        + ManagedKeys.hex(GatewayConfig.sha256(ADMIN_KEY)) + "\n");
        try (Harness harness = gateway(config)) {
            com.fasterxml.jackson.databind.JsonNode created = create(harness, "{\"tenant\":\"acme\",\"tier\":\"pro\"}");
            String secret = created.path("key").asText();
            Object stored = redis.get()
                    .call("HGET", "gw-east:admin-keys", created.path("id").asText());
            String text = stored instanceof byte[] bytes
                    ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
                    : String.valueOf(stored);
            assertThat(text)
                    .contains(ManagedKeys.hex(GatewayConfig.sha256(secret)))
                    .doesNotContain(secret)
                    .contains("\"tenant\":\"acme\"");
            assertThat(redis.get().call("EXISTS", "ratelimit:admin-keys")).isEqualTo(0L);
            assertThat(redis.get().call("HLEN", "gw-east:admin-keys"))
                    .as("the key and the version")
                    .isEqualTo(2L);
            assertThat(json(admin(harness, "GET", "/admin/keys", ADMIN_KEY, "")).path("data"))
                    .as("the version is no key")
                    .hasSize(1);
            assertThat(admin(harness, "GET", "/admin/keys/~version", ADMIN_KEY, "")
                            .statusCode())
                    .isEqualTo(404);
        }
    }

    @Test
    @DisplayName("a change whose announcement never came is read within 1 s by the version check")
    void missedAnnouncement() throws Exception {
        try (Harness harness = gateway(AdminKeysTest.adminConfig())) {
            String secret = "rlk-written-behind-the-gateways-back";
            java.time.Instant now = harness.clock.instant();
            ManagedKeys.Key key = new ManagedKeys.Key(
                    "key-quiet",
                    "acme",
                    "pro",
                    null,
                    null,
                    Map.of(),
                    Map.of(),
                    now,
                    now,
                    ManagedKeys.hex(GatewayConfig.sha256(secret)),
                    null,
                    null);
            // written as a gateway writes, without the PUBLISH
            redis.get().call("HSET", "ratelimit:admin-keys", key.id(), key.stored(), "~version", "v1");
            AdminKeysTest.within(
                    AdminKeysTest.PROPAGATION, "the unannounced key works", () -> chat(harness, secret) == 200);
            redis.get().call("HDEL", "ratelimit:admin-keys", key.id());
            redis.get().call("HSET", "ratelimit:admin-keys", "~version", "v2");
            AdminKeysTest.within(
                    AdminKeysTest.PROPAGATION,
                    "the unannounced revocation is honoured",
                    () -> chat(harness, secret) == 401);
        }
    }
}
