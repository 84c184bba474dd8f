package dev.ratelimit.testsupport;

import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * Checks, before a test drives them, that the external tools it needs (a browser, its driver,
 * {@code openssl}) are installed: a developer's machine without them skips the test with a one-line notice saying what
 * to install, so that the README's test command passes on a fresh machine; under {@code CI=true}
 * the test fails instead, because CI installs every tool and a skip there would hide a test that
 * never runs.
 */
public final class RequiredTools {

    private RequiredTools() {}

    /**
     * Returns normally when every executable exists; otherwise skips the calling test (a JUnit
     * assumption) or, when the environment variable {@code CI} is {@code true}, fails it.
     *
     * @param install what to run to install the tools, e.g. {@code apt-get install chromium
     *     chromium-driver}
     * @param executables the files the test runs
     * @throws AssertionError when a tool is missing under {@code CI=true} (outside CI, a missing tool
     *     aborts the test through {@link Assumptions#abort(String)}: JUnit reports it skipped)
     * @throws IllegalArgumentException when no executable is given or {@code install} is blank
     */
    public static void require(String install, Path... executables) {
        String test = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .getCallerClass()
                .getSimpleName();
        // Surefire sends System.err to a report file (redirectTestOutputToFile): the process's own standard
        // error reaches the console, so the one line that says what to install is seen where the build runs.
        PrintStream console = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        check(test, install, Arrays.asList(executables), System::getenv, console);
    }

    /**
     * Returns where a command run by its bare name (as {@code ProcessBuilder} runs it) is found: the
     * first executable file of that name in a directory of {@code PATH}, for {@link #require}; when
     * there is none, the bare name, which {@link #require} then reports missing.
     *
     * @param command the command's file name, e.g. {@code openssl}
     * @return the executable, or {@code Path.of(command)} when no directory of {@code PATH} holds one
     * @throws IllegalArgumentException if {@code command} is blank or names a directory
     */
    public static Path onPath(String command) {
        return onPath(command, System.getenv("PATH"));
    }

    /** {@link #onPath(String)} with {@code PATH} as a parameter, so that both outcomes can be tested. */
    static Path onPath(String command, @Nullable String path) {
        Objects.requireNonNull(command, "command must not be null");
        if (command.isBlank() || command.contains(File.separator)) {
            throw new IllegalArgumentException("command must be a bare file name, got '" + command + "'");
        }
        if (path != null) {
            for (String directory : path.split(File.pathSeparator)) {
                if (directory.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(directory, command);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        return Path.of(command);
    }

    /** {@link #require} with the environment and the console as parameters, so that both outcomes can be tested. */
    static void check(
            String test,
            String install,
            List<Path> executables,
            Function<String, @Nullable String> environment,
            PrintStream console) {
        Objects.requireNonNull(install, "install must not be null");
        Objects.requireNonNull(executables, "executables must not be null");
        if (install.isBlank()) {
            throw new IllegalArgumentException("install must say what to install, got a blank string");
        }
        if (executables.isEmpty()) {
            throw new IllegalArgumentException("executables must name at least one file");
        }
        List<Path> missing =
                executables.stream().filter(file -> !Files.isExecutable(file)).collect(Collectors.toList());
        if (missing.isEmpty()) {
            return;
        }
        String notice = "missing " + missing.stream().map(Path::toString).collect(Collectors.joining(", "))
                + ": install with `" + install + "`";
        if ("true".equalsIgnoreCase(environment.apply("CI"))) {
            throw new AssertionError("CI=true, so this test must run, but it is " + notice);
        }
        console.println("[SKIPPED] " + test + ": " + notice);
        Assumptions.abort("skipped, " + notice);
    }
}
