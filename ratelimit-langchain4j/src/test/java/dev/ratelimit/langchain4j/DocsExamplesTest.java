package dev.ratelimit.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/langchain4j.md shows the examples this module compiles, each as one java block, as it is. */
class DocsExamplesTest {

    private static final Pattern JAVA_BLOCK = Pattern.compile("(?ms)^```java\\n(.*?)^```$");

    @Test
    void theDocsShowTheCompiledExamplesAsTheyAre() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "langchain4j.md"), StandardCharsets.UTF_8);
        List<String> blocks = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(docs);
        while (block.find()) {
            blocks.add(block.group(1));
        }
        for (String example : List.of(
                "src/test/java/com/example/assistant/AssistantExample.java",
                "src/test/java/com/example/assistant/SpendExample.java")) {
            assertThat(blocks)
                    .as("a java block of docs/langchain4j.md equal to %s", example)
                    .contains(Files.readString(Path.of(example), StandardCharsets.UTF_8));
        }
    }
}
