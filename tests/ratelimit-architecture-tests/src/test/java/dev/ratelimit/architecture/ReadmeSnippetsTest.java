package dev.ratelimit.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java a newcomer copies from README.md compiles against the modules as they are: each {@code
 * java} block, its imports as written and its statements wrapped in a method (a block that declares
 * a type is compiled as it stands), is compiled with this module's test class path, which holds every
 * published module, the Lettuce driver, Spring's web annotations and the OpenAI and Anthropic Java SDKs.
 */
class ReadmeSnippetsTest {

    private static final Pattern JAVA_BLOCK = Pattern.compile("(?m)^```java\\n(.*?)^```$", Pattern.DOTALL);
    private static final Pattern TYPE_DECLARATION =
            Pattern.compile("^(@\\w+|(public |final |abstract )*(class|record|interface|enum) )");

    /** One block: where it starts in the README, and the compilation unit made of it. */
    record Snippet(int line, String name, String source) {}

    @Test
    @DisplayName("every java block of README.md compiles, with the imports it shows")
    void readmeJavaCompiles(@TempDir Path out) throws IOException {
        List<Snippet> snippets = snippets(Files.readString(readme(), StandardCharsets.UTF_8));
        assertThat(snippets)
                .as("java blocks in README.md (the library, Spring Boot and the gateway each show one)")
                .hasSizeGreaterThanOrEqualTo(3);
        for (Snippet snippet : snippets) {
            assertThat(compile(snippet, out))
                    .as("README.md's java block at line %d, as compiled:\n%s", snippet.line(), snippet.source())
                    .isEmpty();
        }
    }

    @Test
    @DisplayName("a block that does not compile is caught, and a block declaring a type is compiled as it stands")
    void brokenBlocksAreCaught(@TempDir Path out) {
        List<Snippet> snippets =
                snippets("text\n\n```java\nimport java.time.Duration;\n\nDuration d = Duration.ofMinutes(1);\n"
                        + "long n = d.toMinutes();\n```\n\n```java\nimport java.util.List;\n\nList<String> l = List.of(1);\n```\n\n"
                        + "```java\n@Deprecated\nclass Declared {}\n```\n");
        assertThat(snippets).extracting(Snippet::line).containsExactly(3, 10, 16);
        assertThat(compile(snippets.get(0), out)).isEmpty();
        assertThat(compile(snippets.get(1), out)).contains("incompatible types");
        assertThat(snippets.get(2).source()).doesNotContain("void run()");
        assertThat(compile(snippets.get(2), out)).isEmpty();
    }

    /** Compiles one block; returns its errors, empty when it compiled. */
    private static String compile(Snippet snippet, Path out) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        boolean compiled = javac.getTask(
                        null,
                        null,
                        diagnostics,
                        List.of("--release", "17", "-proc:none", "-classpath", classPath, "-d", out.toString()),
                        null,
                        List.of(new Source(snippet.name(), snippet.source())))
                .call();
        String errors = diagnostics.getDiagnostics().stream()
                .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> "line " + d.getLineNumber() + " of the compiled block: " + d.getMessage(Locale.ROOT))
                .collect(Collectors.joining("\n"));
        return compiled ? "" : errors.isEmpty() ? "javac failed without an error" : errors;
    }

    /** Splits each block into its imports and the rest, and wraps the rest unless it declares a type. */
    static List<Snippet> snippets(String readme) {
        List<Snippet> snippets = new ArrayList<>();
        Matcher block = JAVA_BLOCK.matcher(readme);
        while (block.find()) {
            int line = (int) readme.substring(0, block.start())
                            .chars()
                            .filter(c -> c == '\n')
                            .count()
                    + 1;
            String name = "ReadmeSnippetAtLine" + line;
            StringBuilder imports = new StringBuilder();
            StringBuilder body = new StringBuilder();
            for (String text : block.group(1).split("\n", -1)) {
                (text.startsWith("import ") ? imports : body).append(text).append('\n');
            }
            String code = body.toString().strip();
            String source = TYPE_DECLARATION.matcher(code).find()
                    ? imports + "\n" + code + "\n"
                    : imports + "\nclass " + name + " {\n    void run() throws Exception {\n" + code + "\n    }\n}\n";
            snippets.add(new Snippet(line, name, source));
        }
        return snippets;
    }

    /** README.md at the repository root: the nearest directory up from here holding CONFORMANCE.md. */
    private static Path readme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("CONFORMANCE.md"))) {
                return dir.resolve("README.md");
            }
        }
        throw new IllegalStateException("no CONFORMANCE.md above " + Path.of("").toAbsolutePath());
    }

    /** A compilation unit held in memory. */
    private static final class Source extends SimpleJavaFileObject {
        private final String code;

        Source(String name, String code) {
            super(URI.create("string:///" + name + Kind.SOURCE.extension), Kind.SOURCE);
            this.code = code;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }
}
