package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.stream.Stream;

/**
 * Counts the instructions Redis executes, where the private {@code redis-server} runs under {@code
 * valgrind --tool=callgrind} ({@code benchmarks/ratelimit-benchmarks/instructions.sh} starts it so): the counters
 * are zeroed before the calls, dumped after them, and the dump's total is divided by the calls. Unlike
 * microseconds of a shared machine, the counts repeat from run to run.
 */
final class Callgrind {

    /** The environment variable naming the folder callgrind writes its dumps to. */
    static final String DUMPS = "CALLGRIND_DIR";

    private final long pid;
    private final Path dumps;

    private Callgrind(long pid, Path dumps) {
        this.pid = pid;
        this.dumps = dumps;
    }

    /**
     * Returns the counter of a server started under callgrind, its dumps in the folder {@value
     * #DUMPS} names.
     */
    static Callgrind of(long pid) {
        String folder = System.getenv(DUMPS);
        if (folder == null || folder.isBlank()) {
            throw new IllegalStateException("--instructions needs redis-server under callgrind and " + DUMPS
                    + " set: run benchmarks/ratelimit-benchmarks/instructions.sh");
        }
        return new Callgrind(pid, Path.of(folder));
    }

    /** Runs {@code calls} calls of {@code decide} and returns the instructions Redis executed per call. */
    double perCall(int calls, IntConsumer decide) {
        control("-z");
        for (int i = 0; i < calls; i++) {
            decide.accept(0);
        }
        control("-d");
        return totals(newestDump()) / (double) calls;
    }

    private void control(String option) {
        try {
            Process process = new ProcessBuilder("callgrind_control", option, Long.toString(pid))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("callgrind_control " + option + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run callgrind_control", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private Path newestDump() {
        try (Stream<Path> files = Files.list(dumps)) {
            return files.filter(f -> f.getFileName().toString().matches("callgrind\\.out\\.\\d+"))
                    .max(Comparator.comparingInt(Callgrind::dumpNumber))
                    .orElseThrow(() -> new IllegalStateException("no callgrind dump in " + dumps));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int dumpNumber(Path file) {
        String name = file.getFileName().toString();
        return Integer.parseInt(name.substring(name.lastIndexOf('.') + 1));
    }

    private static long totals(Path dump) {
        try {
            List<String> lines = Files.readAllLines(dump, StandardCharsets.UTF_8);
            for (String line : lines) {
                if (line.startsWith("totals:")) {
                    return Long.parseLong(
                            line.substring("totals:".length()).trim().split("\\s+")[0]);
                }
            }
            throw new IllegalStateException("no totals in " + dump);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
