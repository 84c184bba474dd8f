package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start banner of a gateway on an operator's own configuration names that configuration's
 * tenants and tiers, never a key (plain or hashed), and never suggests the built-in demo keys.
 */
class BannerTest {

    private static final String SECRET = "sk-acme-live-4f9a2c";
    private static final String HASHED = "sk-globex-live-7b1e0d";

    @Test
    @DisplayName("a custom configuration's banner lists its own tenants and tiers, no key, no demo-free")
    void customConfiguration(@TempDir Path directory) throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: %s, tenant: acme, tier: gold }
                  - { key-sha256: "%s", tenant: globex, tier: silver }
                tiers:
                  gold:
                    max-concurrent: 7
                    windows: { minute: 120/1m, tokens-minute: 90000 tokens/1m }
                  silver:
                    max-concurrent: 3
                    windows: { minute: 30/1m }
                models:
                  gpt-4o: { rpm: 100, tpm: 50000 }
                """.formatted(SECRET, sha256(HASHED)));
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true, Map.of("GATEWAY_CONFIG", config.toString()))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            harness.server.printBanner(new PrintStream(out, true, StandardCharsets.UTF_8));
            String banner = out.toString(StandardCharsets.UTF_8);
            System.out.println(banner);

            assertThat(banner)
                    .contains("config:   " + config + " (")
                    .contains("gold: 120/minute 90000 tokens/minute, 7 concurrent")
                    .contains("silver: 30/minute, 3 concurrent")
                    .contains("tenants:  acme (gold), globex (silver)")
                    .contains("caps:     gpt-4o 100 rpm 50000 tpm; every other model: no upstream cap")
                    .contains("-H 'Authorization: Bearer <your key>'")
                    .contains("one of the configured keys");
            assertThat(banner)
                    .doesNotContain(SECRET)
                    .doesNotContain(HASHED)
                    .doesNotContain(sha256(HASHED))
                    .doesNotContain("demo-")
                    .doesNotContain("the 6th");
        }
    }

    private static String sha256(String key) throws Exception {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    }
}
