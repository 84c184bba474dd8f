package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.admin.AdminServlet;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Keys managed through the admin API, with a real HTTP client: on two gateways sharing one private
 * Redis (or Redis Cluster) a created key works on both, and a revoked one is refused on both, within
 * a second of the admin's answer; a rotated key's old secret works during its grace only; the admin
 * API opens to an admin key alone and only on the management listener.
 */
class AdminKeysTest {

    static final String ADMIN_KEY = "admin-test-secret";
    static final String CHAT = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    /** How soon every gateway honours a change, as docs/gateway.md promises. */
    static final Duration PROPAGATION = Duration.ofSeconds(1);

    static Path adminConfig() throws Exception {
        return Harness.config(Map.of(), "admin:\n  keys:\n    - key: " + ADMIN_KEY + "\n");
    }

    static Harness gateway(Harness.Store store, Path config) throws Exception {
        return Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    static HttpResponse<String> admin(Harness harness, String method, String path, @Nullable String key, String body)
            throws Exception {
        return call(harness, harness.server.managementUrl(), method, path, key, body);
    }

    static HttpResponse<String> call(
            Harness harness, String base, String method, String path, @Nullable String key, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .method(
                        method,
                        body.isEmpty()
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        if (!body.isEmpty()) {
            request.header("Content-Type", "application/json");
        }
        return harness.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> response) throws Exception {
        return OpenAi.JSON.readTree(response.body());
    }

    static JsonNode create(Harness harness, String body) throws Exception {
        HttpResponse<String> created = admin(harness, "POST", "/admin/keys", ADMIN_KEY, body);
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        return json(created);
    }

    static int chat(Harness harness, String key) {
        try {
            return harness.chat(key, CHAT).statusCode();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Polls until the condition holds, and fails if that took longer than {@code within}. */
    static void within(Duration within, String what, BooleanSupplier condition) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + within.toMillis() + " ms: " + what);
            }
            Thread.sleep(10);
        }
        System.out.println("admin keys: " + what + " after " + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    @ParameterizedTest
    @EnumSource(
            value = Harness.Store.class,
            names = {"REDIS", "CLUSTER"})
    @DisplayName("two gateways on one Redis: a created key works on both within 1 s, a revoked one gets 401 on both"
            + " within 1 s")
    void createAndRevokeOnTwoGateways(Harness.Store store) throws Exception {
        Path config = adminConfig();
        try (Harness first = gateway(store, config);
                Harness second = gateway(store, config)) {
            second.clock.set(first.clock.instant());
            JsonNode created =
                    create(first, "{\"tenant\":\"acme\",\"tier\":\"enterprise\",\"metadata\":{\"owner\":\"billing\"}}");
            String secret = created.path("key").asText();
            assertThat(secret).startsWith("rlk-").hasSizeGreaterThan(40);
            within(
                    PROPAGATION,
                    "the new key works on both gateways",
                    () -> chat(first, secret) == 200 && chat(second, secret) == 200);

            String id = created.path("id").asText();
            HttpResponse<String> read = admin(second, "GET", "/admin/keys/" + id, ADMIN_KEY, "");
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(json(read).path("tenant").asText()).isEqualTo("acme");
            assertThat(json(read).path("metadata").path("owner").asText()).isEqualTo("billing");
            assertThat(read.body()).as("the secret is shown once").doesNotContain(secret);
            HttpResponse<String> list = admin(second, "GET", "/admin/keys", ADMIN_KEY, "");
            assertThat(json(list).path("data")).hasSize(1);
            assertThat(list.body()).doesNotContain(secret);

            HttpResponse<String> revoked = admin(second, "DELETE", "/admin/keys/" + id, ADMIN_KEY, "");
            assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);
            within(
                    PROPAGATION,
                    "the revoked key gets 401 on both gateways",
                    () -> chat(first, secret) == 401 && chat(second, secret) == 401);
            assertThat(admin(first, "GET", "/admin/keys/" + id, ADMIN_KEY, "").statusCode())
                    .isEqualTo(404);
        }
    }

    @Test
    @DisplayName("a rotated key's old secret works on both gateways during its grace, and gets 401 after it")
    void rotationGrace() throws Exception {
        Path config = adminConfig();
        try (Harness first = gateway(Harness.Store.REDIS, config);
                Harness second = gateway(Harness.Store.REDIS, config)) {
            second.clock.set(first.clock.instant());
            JsonNode created = create(first, "{\"tenant\":\"acme\",\"tier\":\"enterprise\"}");
            String old = created.path("key").asText();
            String id = created.path("id").asText();
            within(PROPAGATION, "the key works on both", () -> chat(first, old) == 200 && chat(second, old) == 200);

            HttpResponse<String> rotated =
                    admin(second, "POST", "/admin/keys/" + id + "/rotate", ADMIN_KEY, "{\"grace-seconds\":60}");
            assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
            String fresh = json(rotated).path("key").asText();
            assertThat(fresh).startsWith("rlk-").isNotEqualTo(old);
            assertThat(json(rotated).path("previous-key-valid-until").asText())
                    .isEqualTo(first.clock.instant().plusSeconds(60).toString());
            within(
                    PROPAGATION,
                    "the new secret works on both",
                    () -> chat(first, fresh) == 200 && chat(second, fresh) == 200);
            assertThat(chat(first, old)).as("the old secret during its grace").isEqualTo(200);
            assertThat(chat(second, old)).as("the old secret during its grace").isEqualTo(200);

            first.clock.advance(Duration.ofSeconds(59));
            second.clock.advance(Duration.ofSeconds(59));
            assertThat(chat(first, old)).as("a second before the grace ends").isEqualTo(200);
            first.clock.advance(Duration.ofSeconds(1));
            second.clock.advance(Duration.ofSeconds(1));
            assertThat(chat(first, old)).as("the grace has ended").isEqualTo(401);
            assertThat(chat(second, old)).as("the grace has ended").isEqualTo(401);
            assertThat(chat(first, fresh)).isEqualTo(200);
            assertThat(chat(second, fresh)).isEqualTo(200);
        }
    }

    @Test
    @DisplayName("the admin API refuses a client key, a wrong key and no key (401), and is 404 on the API listener")
    void onlyAnAdminKeyOnTheManagementListener() throws Exception {
        try (Harness harness = gateway(Harness.Store.MEMORY, adminConfig())) {
            for (String key : new String[] {null, "demo-enterprise", "demo-free", "wrong"}) {
                HttpResponse<String> refused = admin(harness, "GET", "/admin/keys", key, "");
                assertThat(refused.statusCode()).as("key %s", key).isEqualTo(401);
                assertThat(json(refused).path("error").path("code").asText()).isEqualTo("invalid_admin_key");
                HttpResponse<String> create =
                        admin(harness, "POST", "/admin/keys", key, "{\"tenant\":\"x\",\"tier\":\"free\"}");
                assertThat(create.statusCode()).as("create with key %s", key).isEqualTo(401);
            }
            assertThat(admin(harness, "GET", "/admin/keys", ADMIN_KEY, "").statusCode())
                    .isEqualTo(200);
            for (String path : new String[] {"/admin/keys", "/admin/keys/key-1", "/admin/openapi.yaml"}) {
                for (String method : new String[] {"GET", "POST"}) {
                    HttpResponse<String> api =
                            call(harness, harness.base(), method, path, ADMIN_KEY, method.equals("GET") ? "" : "{}");
                    assertThat(api.statusCode())
                            .as(method + " " + path + " on the API listener")
                            .isEqualTo(404);
                    assertThat(json(api).path("error").path("code").asText()).isEqualTo("unknown_url");
                }
            }
        }
    }

    @Test
    @DisplayName("without admin.keys every admin call gets 401 saying no admin key is configured")
    void noAdminKeyConfigured() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false)) {
            HttpResponse<String> refused = admin(harness, "GET", "/admin/keys", "anything", "");
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(json(refused).path("error").path("code").asText()).isEqualTo("admin_api_disabled");
            assertThat(json(refused).path("error").path("message").asText()).contains("admin.keys");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Harness.Store.class,
            names = {"MEMORY", "REDIS"})
    @DisplayName("a key's own windows limit that key alone, beside its tenant's: created and updated through the API,"
            + " honoured by every gateway within 1 s, in shadow when the window says so; a bad one is a 400 naming it")
    void perKeyWindows(Harness.Store store) throws Exception {
        Path config = adminConfig();
        Harness first = gateway(store, config);
        Harness another = store == Harness.Store.MEMORY ? null : gateway(store, config);
        Harness second = another != null ? another : first;
        try {
            second.clock.set(first.clock.instant());
            JsonNode limited = create(first, "{\"tenant\":\"acme\",\"tier\":\"pro\",\"windows\":{\"rpm\":\"2/1m\"}}");
            String secret = limited.path("key").asText();
            String id = limited.path("id").asText();
            assertThat(limited.path("windows").path("rpm").asText()).isEqualTo("2/1m");
            String other = create(first, "{\"tenant\":\"acme\",\"tier\":\"pro\"}")
                    .path("key")
                    .asText();
            within(PROPAGATION, "the limited key works on the second gateway", () -> chat(second, secret) == 200);
            assertThat(chat(first, secret))
                    .as("the key's 2nd request of its 2 a minute")
                    .isEqualTo(200);
            HttpResponse<String> third = second.chat(secret, CHAT);
            assertThat(third.statusCode())
                    .as("the key's 3rd request: its own window refuses")
                    .isEqualTo(429);
            assertThat(third.body()).contains("rpm");
            assertThat(chat(first, other))
                    .as("the tenant's other key is not limited by it")
                    .isEqualTo(200);

            HttpResponse<String> raised =
                    admin(first, "PATCH", "/admin/keys/" + id, ADMIN_KEY, "{\"windows\":{\"rpm\":\"4/1m\"}}");
            assertThat(raised.statusCode()).as(raised.body()).isEqualTo(200);
            within(PROPAGATION, "the raised window on the second gateway", () -> chat(second, secret) == 200);
            assertThat(chat(first, secret)).as("the 4th of 4").isEqualTo(200);
            assertThat(chat(second, secret)).as("the 5th of 4").isEqualTo(429);

            HttpResponse<String> trial =
                    admin(first, "PATCH", "/admin/keys/" + id, ADMIN_KEY, "{\"windows\":{\"rpm\":\"1/1m shadow\"}}");
            assertThat(trial.statusCode()).as(trial.body()).isEqualTo(200);
            within(PROPAGATION, "the shadow window on the second gateway", () -> {
                try {
                    HttpResponse<String> response = second.chat(secret, CHAT);
                    return response.statusCode() == 200
                            && response.headers()
                                    .firstValue("X-RateLimit-Shadow")
                                    .isEmpty();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            HttpResponse<String> marked = first.chat(secret, CHAT);
            assertThat(marked.statusCode())
                    .as("a shadow window refuses nothing")
                    .isEqualTo(200);
            assertThat(marked.headers().firstValue("X-RateLimit-Shadow"))
                    .as("the 2nd of a shadow 1 a minute is marked")
                    .contains("rpm");

            HttpResponse<String> cleared = admin(first, "PATCH", "/admin/keys/" + id, ADMIN_KEY, "{\"windows\":{}}");
            assertThat(json(cleared).path("windows").size()).isZero();

            HttpResponse<String> bad = admin(
                    first,
                    "POST",
                    "/admin/keys",
                    ADMIN_KEY,
                    "{\"tenant\":\"acme\",\"tier\":\"pro\",\"windows\":{\"rpm\":\"ten a minute\"}}");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("windows.rpm");
        } finally {
            if (another != null) {
                another.close();
            }
            first.close();
        }
    }

    @Test
    @DisplayName("in memory (one process): create, update, expiry by the gateway's clock, revoke; each change"
            + " audited without its secret")
    void inMemory() throws Exception {
        try (Harness harness = gateway(Harness.Store.MEMORY, adminConfig());
                ConfigReloadTest.LogCapture log = ConfigReloadTest.LogCapture.start()) {
            java.io.ByteArrayOutputStream banner = new java.io.ByteArrayOutputStream();
            harness.server.printBanner(new java.io.PrintStream(banner, true, java.nio.charset.StandardCharsets.UTF_8));
            assertThat(banner.toString(java.nio.charset.StandardCharsets.UTF_8))
                    .contains(
                            "admin:    " + harness.server.managementUrl() + "/admin/keys, 1 admin key; managed keys in"
                                    + " this process's memory (per process, gone when it stops)");
            String expires = harness.clock.instant().plusSeconds(120).toString();
            JsonNode created =
                    create(harness, "{\"tenant\":\"acme\",\"tier\":\"free\",\"expires-at\":\"" + expires + "\"}");
            String secret = created.path("key").asText();
            String id = created.path("id").asText();
            assertThat(created.path("expires-at").asText()).isEqualTo(expires);
            assertThat(chat(harness, secret)).isEqualTo(200);
            assertThat(harness.server.gateway().config().tiers()).containsKey("free");

            HttpResponse<String> patched = admin(
                    harness, "PATCH", "/admin/keys/" + id, ADMIN_KEY, "{\"tier\":\"pro\",\"metadata\":{\"a\":\"b\"}}");
            assertThat(patched.statusCode()).as(patched.body()).isEqualTo(200);
            assertThat(json(patched).path("tier").asText()).isEqualTo("pro");
            // the free tier allows 5 a minute: 6 more pass on pro
            for (int i = 0; i < 6; i++) {
                assertThat(chat(harness, secret)).as("request %d on pro", i).isEqualTo(200);
            }

            harness.clock.advance(Duration.ofSeconds(120));
            assertThat(chat(harness, secret)).as("expired").isEqualTo(401);
            HttpResponse<String> extended =
                    admin(harness, "PATCH", "/admin/keys/" + id, ADMIN_KEY, "{\"expires-at\":null}");
            assertThat(extended.statusCode()).as(extended.body()).isEqualTo(200);
            assertThat(chat(harness, secret)).as("no longer expires").isEqualTo(200);

            assertThat(admin(harness, "DELETE", "/admin/keys/" + id, ADMIN_KEY, "")
                            .statusCode())
                    .isEqualTo(200);
            assertThat(chat(harness, secret)).as("revoked").isEqualTo(401);
            String text = log.text();
            assertThat(text)
                    .contains("action=create id=" + id + " tenant=acme tier=free")
                    .contains("action=update id=" + id)
                    .contains("action=revoke id=" + id)
                    .contains("by=sha256:"
                            + ManagedKeys.hex(GatewayConfig.sha256(ADMIN_KEY)).substring(0, 8))
                    .doesNotContain(secret)
                    .doesNotContain(ADMIN_KEY);
        }
    }

    @Test
    @DisplayName("bad input gets a 4xx JSON error naming the argument, never a 500")
    void badInput() throws Exception {
        try (Harness harness = gateway(Harness.Store.MEMORY, adminConfig())) {
            String id = create(harness, "{\"tenant\":\"acme\",\"tier\":\"free\"}")
                    .path("id")
                    .asText();
            Object[][] cases = {
                {"POST", "/admin/keys", "{not json", 400, "invalid_json", null},
                {"POST", "/admin/keys", "[1]", 400, "invalid_json", null},
                {"POST", "/admin/keys", "", 400, "invalid_json", null},
                {
                    "POST",
                    "/admin/keys",
                    "{\"tenant\":\"a\",\"tier\":\"free\",\"colour\":1}",
                    400,
                    "invalid_value",
                    "colour"
                },
                {"POST", "/admin/keys", "{\"tier\":\"free\"}", 400, "missing_required_parameter", "tenant"},
                {"POST", "/admin/keys", "{\"tenant\":\"ip:1.2.3.4\",\"tier\":\"free\"}", 400, "invalid_value", "tenant"
                },
                {"POST", "/admin/keys", "{\"tenant\":\"a\",\"tier\":\"gold\"}", 400, "invalid_value", "tier"},
                {
                    "POST",
                    "/admin/keys",
                    "{\"tenant\":\"a\",\"tier\":\"free\",\"team\":\"nobody\"}",
                    400,
                    "invalid_value",
                    "team"
                },
                {
                    "POST",
                    "/admin/keys",
                    "{\"tenant\":\"a\",\"tier\":\"free\",\"expires-at\":\"tomorrow\"}",
                    400,
                    "invalid_value",
                    "expires-at"
                },
                {
                    "POST",
                    "/admin/keys",
                    "{\"tenant\":\"a\",\"tier\":\"free\",\"expires-at\":\"2000-01-01T00:00:00Z\"}",
                    400,
                    "invalid_value",
                    "expires-at"
                },
                {
                    "POST",
                    "/admin/keys",
                    "{\"tenant\":\"a\",\"tier\":\"free\",\"metadata\":{\"n\":1}}",
                    400,
                    "invalid_value",
                    "metadata"
                },
                // a tenant of the file keeps its tier
                {"POST", "/admin/keys", "{\"tenant\":\"demo-user-free\",\"tier\":\"pro\"}", 400, "invalid_value", "tier"
                },
                {"POST", "/admin/keys", "{\"tenant\":\"acme\",\"tier\":\"pro\"}", 400, "invalid_value", "tier"},
                {"PATCH", "/admin/keys/" + id, "{\"tenant\":\"other\"}", 400, "invalid_value", "tenant"},
                {"PATCH", "/admin/keys/" + id, "{\"tier\":\"gold\"}", 400, "invalid_value", "tier"},
                {
                    "POST",
                    "/admin/keys/" + id + "/rotate",
                    "{\"grace-seconds\":-1}",
                    400,
                    "invalid_value",
                    "grace-seconds"
                },
                {
                    "POST",
                    "/admin/keys/" + id + "/rotate",
                    "{\"grace-seconds\":\"1h\"}",
                    400,
                    "invalid_value",
                    "grace-seconds"
                },
                {"GET", "/admin/keys/key-nope", "", 404, "key_not_found", "id"},
                {"DELETE", "/admin/keys/key-nope", "", 404, "key_not_found", "id"},
                {"POST", "/admin/keys/key-nope/rotate", "", 404, "key_not_found", "id"},
                {"GET", "/admin/keys/" + id + "/other", "", 404, "unknown_url", null},
                {"GET", "/admin/other", "", 404, "unknown_url", null},
                {"PUT", "/admin/keys/" + id, "{}", 405, "method_not_allowed", null},
                {"DELETE", "/admin/keys", "", 405, "method_not_allowed", null},
            };
            for (Object[] c : cases) {
                String what = c[0] + " " + c[1] + " " + c[2];
                HttpResponse<String> response = admin(harness, (String) c[0], (String) c[1], ADMIN_KEY, (String) c[2]);
                assertThat(response.statusCode())
                        .as(what + ": " + response.body())
                        .isEqualTo(c[3]);
                assertThat(response.headers().firstValue("Content-Type").orElse(""))
                        .as(what)
                        .startsWith("application/json");
                JsonNode error = json(response).path("error");
                assertThat(error.path("code").asText()).as(what).isEqualTo(c[4]);
                assertThat(
                                error.path("param").isNull()
                                        ? null
                                        : error.path("param").asText())
                        .as(what)
                        .isEqualTo(c[5]);
                assertThat(error.path("message").asText()).as(what).isNotBlank();
                if ((int) c[3] == 405) {
                    assertThat(response.headers().firstValue("Allow")).as(what).isPresent();
                }
            }
        }
    }

    @Test
    @DisplayName("the OpenAPI description in the repo lists every route the admin servlet serves, and is served")
    void openApiDescribesEveryRoute() throws Exception {
        JsonNode description;
        try (java.io.InputStream in = AdminServlet.class.getResourceAsStream(AdminServlet.OPENAPI)) {
            description = new com.fasterxml.jackson.databind.ObjectMapper(
                            new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                    .readTree(in);
        }
        java.util.Set<String> described = new java.util.TreeSet<>();
        description
                .path("paths")
                .fields()
                .forEachRemaining(path -> path.getValue().fieldNames().forEachRemaining(method -> {
                    if (!method.equals("parameters")) {
                        described.add(method.toUpperCase(java.util.Locale.ROOT) + " " + path.getKey());
                    }
                }));
        assertThat(described).containsExactlyInAnyOrderElementsOf(AdminServlet.ROUTES);
        try (Harness harness = gateway(Harness.Store.MEMORY, adminConfig())) {
            HttpResponse<String> served = admin(harness, "GET", "/admin/openapi.yaml", null, "");
            assertThat(served.statusCode())
                    .as("no key needed for the description")
                    .isEqualTo(200);
            assertThat(served.body()).contains("openapi: 3.0.3").contains("/admin/keys/{id}/rotate:");
        }
    }

    @Test
    @DisplayName("an admin key that is also a client key is an error at load, naming the entry")
    void adminKeyEqualToAClientKey() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayConfig.load(
                        Harness.config(Map.of(), "admin:\n  keys:\n    - key: demo-pro\n")
                                .toString(),
                        Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("admin.keys[0]: the same key as the client key of tenant 'demo-user-pro'")
                .hasMessageNotContaining("demo-pro\n");
    }

    @Test
    @DisplayName("a reload that adds a managed key to the file is refused, and the managed key keeps working")
    void reloadRefusesAManagedKeyInTheFile() throws Exception {
        Path config = adminConfig();
        try (Harness harness = gateway(Harness.Store.MEMORY, config)) {
            String secret = create(harness, "{\"tenant\":\"acme\",\"tier\":\"pro\"}")
                    .path("key")
                    .asText();
            String text = java.nio.file.Files.readString(config)
                    .replace(
                            "keys:\n  - key: demo-free",
                            "keys:\n  - key: " + secret + "\n    tenant: copied\n    tier: free\n  - key: demo-free");
            Path next = config.resolveSibling(config.getFileName() + ".next");
            java.nio.file.Files.writeString(next, text);
            java.nio.file.Files.move(
                    next,
                    config,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            Harness.await("the file with a managed key is refused", () -> {
                try {
                    return harness.metric("gateway_config_reload_failures_total") == 1;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(harness.server.gateway().config().tenants()).doesNotContainKey("copied");
            assertThat(chat(harness, secret)).isEqualTo(200);
        }
    }

    @Test
    @DisplayName("admin.prefix with a brace, or an empty admin key entry, is an error at load naming the entry")
    void badAdminSection() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayConfig.load(
                        Harness.config(Map.of(), "admin:\n  prefix: 'a{b}'\n  keys:\n    - {}\n")
                                .toString(),
                        Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("admin.prefix: printable ASCII without spaces or braces")
                .hasMessageContaining("admin.keys[0].key: missing (set key or key-sha256)");
    }
}
