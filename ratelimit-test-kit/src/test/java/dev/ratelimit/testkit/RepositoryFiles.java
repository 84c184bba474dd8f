package dev.ratelimit.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads files of this repository (docs, sources) for tests that keep the docs true. */
final class RepositoryFiles {

    private RepositoryFiles() {}

    /**
     * Returns a file's text.
     *
     * @param path the path from the repository root, e.g. {@code docs/writing-a-store.md}
     * @return the file's content
     * @throws IOException if it cannot be read
     */
    static String read(String path) throws IOException {
        return Files.readString(root().resolve(path), StandardCharsets.UTF_8);
    }

    /** The repository root: the nearest directory up from the working directory holding CONFORMANCE.md. */
    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("CONFORMANCE.md"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no CONFORMANCE.md above " + Path.of("").toAbsolutePath());
    }
}
