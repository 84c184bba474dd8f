package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.config.GatewayConfig;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What docs/gateway.md says of the gateway's configuration is what the gateway does. */
class DocsTest {

    @Test
    @DisplayName("the built-in default in docs/gateway.md is the jar's default-gateway.yaml, and its limits and"
            + " server settings are the defaults")
    void builtInDefault() throws Exception {
        String docs = Files.readString(Path.of("..", "docs", "gateway.md"));
        int at = docs.indexOf("The built-in default (");
        assertThat(at).as("the section in docs/gateway.md").isPositive();
        int start = docs.indexOf("```yaml\n", at) + "```yaml\n".length();
        String block = docs.substring(start, docs.indexOf("\n```", start));

        GatewayConfig documented = GatewayConfig.parse(
                new ByteArrayInputStream(block.getBytes(StandardCharsets.UTF_8)), "docs/gateway.md");
        GatewayConfig builtIn;
        try (InputStream resource = GatewayConfig.class.getResourceAsStream(GatewayConfig.DEFAULT_RESOURCE)) {
            builtIn = GatewayConfig.parse(resource, GatewayConfig.DEFAULT_RESOURCE);
        }
        assertThat(documented.keys()).as("keys").usingRecursiveComparison().isEqualTo(builtIn.keys());
        assertThat(documented.tiers()).as("tiers").isEqualTo(builtIn.tiers());
        assertThat(documented.models()).as("models").isEqualTo(builtIn.models());
        assertThat(documented.spending())
                .as("prices")
                .usingRecursiveComparison()
                .isEqualTo(builtIn.spending());
        assertThat(documented.passthrough()).as("passthrough").isEqualTo(builtIn.passthrough());
        // the block spells out every default the file leaves to the gateway
        assertThat(documented.limits()).as("limits").isEqualTo(builtIn.limits());
        // left unset, the management listener and the access log take their defaults where they start
        assertThat(documented.server())
                .as("server")
                .usingRecursiveComparison()
                .ignoringFields("managementHost", "managementPort", "accessLog")
                .isEqualTo(builtIn.server());
        assertThat(builtIn.server().managementPort()).isNull();
        assertThat(documented.server().managementPort()).isEqualTo(GatewayServer.DEFAULT_MANAGEMENT_PORT);
        assertThat(documented.server().managementHost()).isEqualTo(GatewayServer.DEFAULT_HOST);
        assertThat(builtIn.server().accessLog()).isNull();
        assertThat(documented.server().accessLog()).isEqualTo("stdout");
    }
}
