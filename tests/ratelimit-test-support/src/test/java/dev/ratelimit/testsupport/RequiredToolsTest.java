package dev.ratelimit.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

class RequiredToolsTest {

    private static final String INSTALL = "apt-get install chromium chromium-driver";
    private static final Path MISSING = Path.of("/nonexistent/ratelimit-required-tools/chromedriver");
    private static final Function<String, @Nullable String> DEVELOPER = name -> null;
    private static final Function<String, @Nullable String> CI = Map.of("CI", "true")::get;
    private static final ByteArrayOutputStream PRINTED = new ByteArrayOutputStream();
    private static final PrintStream CONSOLE = new PrintStream(PRINTED, true, StandardCharsets.UTF_8);

    @BeforeEach
    void clearConsole() {
        PRINTED.reset();
    }

    /** Run by the engine test kit: each test needs a tool that is not there. */
    static class NeedsAMissingTool {
        @Test
        void outsideCi() {
            RequiredTools.check("NeedsAMissingTool", INSTALL, List.of(MISSING), DEVELOPER, CONSOLE);
        }

        @Test
        void ciFalse() {
            RequiredTools.check("NeedsAMissingTool", INSTALL, List.of(MISSING), Map.of("CI", "false")::get, CONSOLE);
        }

        @Test
        void inCi() {
            RequiredTools.check("NeedsAMissingTool", INSTALL, List.of(MISSING), CI, CONSOLE);
        }
    }

    @Test
    @DisplayName("a missing tool skips the test outside CI, saying what is missing and what to install;"
            + " under CI=true it fails the test")
    void missingTool() {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(NeedsAMissingTool.class))
                .execute()
                .testEvents();
        assertThat(events.aborted().count()).isEqualTo(2);
        events.aborted().stream()
                .forEach(event -> assertThat(event.getPayload(TestExecutionResult.class)
                                .flatMap(TestExecutionResult::getThrowable)
                                .orElseThrow()
                                .getMessage())
                        .contains(MISSING.toString())
                        .contains(INSTALL));
        assertThat(PRINTED.toString(StandardCharsets.UTF_8))
                .as("one line per skipped test on the console, none for the failure")
                .isEqualTo(("[SKIPPED] NeedsAMissingTool: missing " + MISSING + ": install with `" + INSTALL + "`\n")
                        .repeat(2));
        assertThat(events.failed().count()).isEqualTo(1);
        assertThat(events.failed().stream()
                        .findFirst()
                        .orElseThrow()
                        .getTestDescriptor()
                        .getDisplayName())
                .isEqualTo("inCi()");
    }

    @Test
    @DisplayName("under CI=true the failure names the missing file and what to install")
    void ciMessage() {
        assertThatThrownBy(() -> RequiredTools.check("T", INSTALL, List.of(MISSING), CI, CONSOLE))
                .isExactlyInstanceOf(AssertionError.class)
                .hasMessageContaining("CI=true")
                .hasMessageContaining(MISSING.toString())
                .hasMessageContaining(INSTALL);
    }

    @Test
    @DisplayName("every tool installed: the test goes on, in CI or not")
    void presentToolsPass(@TempDir Path dir) throws Exception {
        Path tool = Files.createFile(
                dir.resolve("tool"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        RequiredTools.check("T", INSTALL, List.of(tool), CI, CONSOLE);
        RequiredTools.check("T", INSTALL, List.of(tool), DEVELOPER, CONSOLE);
        assertThat(PRINTED.size()).isZero();
    }

    @Test
    @DisplayName("a command run by its bare name is looked up on PATH; not found, its bare name is reported missing")
    void commandOnPath(@TempDir Path dir) throws Exception {
        Path tool = Files.createFile(
                dir.resolve("tool"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        assertThat(RequiredTools.onPath("tool", "/nonexistent:" + dir)).isEqualTo(tool);
        assertThat(RequiredTools.onPath("tool", "/nonexistent")).isEqualTo(Path.of("tool"));
        assertThat(RequiredTools.onPath("tool", null)).isEqualTo(Path.of("tool"));
        assertThatThrownBy(() -> RequiredTools.check("T", INSTALL, List.of(Path.of("tool")), CI, CONSOLE))
                .hasMessageContaining("missing tool: install with");
        assertThatThrownBy(() -> RequiredTools.onPath("bin/tool"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bare file name");
    }

    @Test
    @DisplayName("no tool named, or nothing said about installing, is a mistake in the test")
    void badArguments() {
        assertThatThrownBy(() -> RequiredTools.require(INSTALL))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("executables");
        assertThatThrownBy(() -> RequiredTools.require(" ", Path.of("/usr/bin/chromium")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("install");
    }
}
