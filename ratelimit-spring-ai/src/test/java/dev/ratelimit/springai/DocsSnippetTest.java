package dev.ratelimit.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/spring-ai.md shows what the build compiles and tests: its example is {@code ChatExample.java}
 * as it is, and its versions are the build's.
 */
class DocsSnippetTest {

    @Test
    void theExampleIsTheCompiledChatExample() throws IOException {
        assertThat(block(section("## Without Spring Boot\n"), "java"))
                .isEqualTo(read(Path.of("src/test/java/com/example/chat/ChatExample.java")));
    }

    @Test
    void theDependenciesNameTheBuildsVersions() throws IOException {
        String pom = read(Path.of("..", "pom.xml"));
        String springAi = property(pom, "spring-ai.version");
        String springBoot = property(pom, "spring-boot.version");
        String project = property(pom, "version");
        String xml = block(section("## Dependencies\n"), "xml");

        assertThat(xml)
                .contains("<artifactId>ratelimit-bom</artifactId>\n      <version>" + project + "</version>")
                .contains("<artifactId>spring-boot-dependencies</artifactId>\n      <version>" + springBoot
                        + "</version>")
                .contains("<artifactId>spring-ai-bom</artifactId>\n      <version>" + springAi + "</version>")
                .contains("<artifactId>ratelimit-spring-ai</artifactId>");
        // Spring Boot's BOM first, so an application keeps the Redis drivers Boot manages (docs/spring-boot.md)
        assertThat(xml.indexOf("<artifactId>spring-boot-dependencies</artifactId>"))
                .isLessThan(xml.indexOf("<artifactId>ratelimit-bom</artifactId>"));
        assertThat(docs()).contains("tested with Spring AI " + springAi + " on Spring Boot " + springBoot);
    }

    private static String docs() throws IOException {
        return read(Path.of("..", "docs", "spring-ai.md"));
    }

    /** The section under {@code heading}, up to the next heading of its level. */
    private static String section(String heading) throws IOException {
        String docs = docs();
        int start = docs.indexOf(heading);
        assertThat(start)
                .as("docs/spring-ai.md has a section '%s'", heading.strip())
                .isNotNegative();
        int end = docs.indexOf("\n## ", start + heading.length());
        return docs.substring(start, end < 0 ? docs.length() : end);
    }

    /** The first fenced block of {@code language} in {@code section}. */
    private static String block(String section, String language) {
        Matcher block =
                Pattern.compile("(?ms)^```" + language + "\\n(.*?)^```$").matcher(section);
        assertThat(block.find()).as("a %s block", language).isTrue();
        return block.group(1);
    }

    /** A property of the parent POM, or its own {@code <version>} (the first one after its artifactId). */
    private static String property(String pom, String name) {
        Matcher value = Pattern.compile(
                        name.equals("version")
                                ? "<artifactId>ratelimit-parent</artifactId>\\s*<version>([^<]+)</version>"
                                : "<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">")
                .matcher(pom);
        assertThat(value.find()).as("pom.xml has %s", name).isTrue();
        return value.group(1);
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
