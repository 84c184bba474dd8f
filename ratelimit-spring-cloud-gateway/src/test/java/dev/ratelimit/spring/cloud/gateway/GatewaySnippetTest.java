package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Spring Cloud Gateway section of docs/spring-boot.md shows the application the tests run: its
 * Java source as it is, and its application.yml with the backend on port 8081.
 */
class GatewaySnippetTest {

    private static final String HEADING = "## Spring Cloud Gateway\n";

    @Test
    void theDocsShowTheTestedApplicationAndItsConfiguration() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "spring-boot.md"), StandardCharsets.UTF_8);
        int start = docs.indexOf(HEADING);
        assertThat(start)
                .as("docs/spring-boot.md has a section '%s'", HEADING.strip())
                .isNotNegative();
        int end = docs.indexOf("\n## ", start + HEADING.length());
        String section = docs.substring(start, end < 0 ? docs.length() : end);

        assertThat(block(section, "java"))
                .isEqualTo(read("src/test/java/com/example/gateway/ApiGatewayApplication.java"));
        assertThat(block(section, "yaml"))
                .isEqualTo(read("src/test/resources/application.yml").replace("${backend.port}", "8081"));
        assertThat(block(section, "xml"))
                .contains("<artifactId>ratelimit-spring-cloud-gateway</artifactId>")
                .contains("<artifactId>spring-cloud-dependencies</artifactId><version>2025.1.4</version>");
    }

    private static String block(String section, String language) {
        Matcher block =
                Pattern.compile("(?ms)^```" + language + "\\n(.*?)^```$").matcher(section);
        assertThat(block.find()).as("a %s block", language).isTrue();
        return block.group(1);
    }

    private static String read(String file) throws IOException {
        return Files.readString(Path.of(file), StandardCharsets.UTF_8);
    }
}
