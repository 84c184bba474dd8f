package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The example store a newcomer copies from {@code docs/writing-a-store.md} is the one that passes the kit. */
class WritingAStoreDocTest {

    /** A {@code <!-- file: path -->} marker and the java block under it. */
    private static final Pattern BLOCK =
            Pattern.compile("<!-- file: (\\S+) -->\\n```java\\n(.*?)```\\n", Pattern.DOTALL);

    @Test
    @DisplayName(
            "each code block of docs/writing-a-store.md marked with a file is that compiled file, to the character")
    void blocksAreTheCompiledFiles() throws IOException {
        String doc = RepositoryFiles.read("docs/writing-a-store.md");
        Matcher block = BLOCK.matcher(doc);
        List<String> files = new ArrayList<>();
        while (block.find()) {
            String file = block.group(1);
            assertThat(block.group(2))
                    .as("the block under <!-- file: %s --> in docs/writing-a-store.md: copy the file into it", file)
                    .isEqualTo(RepositoryFiles.read(file));
            files.add(file);
        }
        assertThat(files)
                .as("the files docs/writing-a-store.md shows")
                .containsExactly(
                        "ratelimit-test-kit/src/test/java/com/example/store/ExampleStore.java",
                        "ratelimit-test-kit/src/test/java/com/example/store/ExampleStoreConformanceTest.java");
    }
}
