package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The machine a benchmark run measured on, read from the machine itself: cores, CPU model, JVM, Redis
 * version, and the load on it before and after the run.
 */
record Machine(
        int cores,
        String cpuModel,
        String javaVersion,
        String redisVersion,
        String loadBefore,
        String loadAfter,
        int otherJvms,
        boolean quick,
        String startedAt) {

    static Machine now(boolean quick) {
        return new Machine(
                Runtime.getRuntime().availableProcessors(),
                readCpuModel(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                "?",
                load(),
                "?",
                countOtherJvms(),
                quick,
                ZonedDateTime.now(ZoneOffset.UTC)
                                .format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
                                .substring(0, 16) + "Z");
    }

    Machine withRedis(String version) {
        return new Machine(
                cores, cpuModel, javaVersion, version.trim(), loadBefore, loadAfter, otherJvms, quick, startedAt);
    }

    Machine finished() {
        return new Machine(cores, cpuModel, javaVersion, redisVersion, loadBefore, load(), otherJvms, quick, startedAt);
    }

    /**
     * The report's machine line, up to the commit: cores, what shares them, the JVM, the load before
     * and after, the other JVMs, the start time and the commit.
     */
    String line(String sharedWith) {
        return "**Machine**: " + cores + " cores (" + cpuModel + "), shared with " + sharedWith + "; " + javaVersion
                + "; load " + loadBefore + " before, " + loadAfter + " after; " + otherJvms
                + " other JVMs running; started " + startedAt + " (commit " + Report.commit() + ")";
    }

    String describe() {
        return cores + " cores (" + cpuModel + "), " + javaVersion + ", load average " + loadBefore
                + ", other JVMs running: " + otherJvms;
    }

    /** Returns the CPU model that Linux reports, or "CPU model unknown" elsewhere. */
    private static String readCpuModel() {
        try (var lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(line -> line.startsWith("model name"))
                    .map(line -> line.substring(line.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse("CPU model unknown");
        } catch (IOException | RuntimeException e) {
            return "CPU model unknown";
        }
    }

    /** The load averages over 1, 5 and 15 minutes, as {@code a / b / c}, or {@code unknown}. */
    static String load() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " / " + fields[1] + " / " + fields[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    static int countOtherJvms() {
        long self = ProcessHandle.current().pid();
        java.util.Set<Long> mine = new java.util.HashSet<>();
        ProcessHandle.current().descendants().forEach(child -> mine.add(child.pid()));
        return (int) ProcessHandle.allProcesses()
                .filter(process -> process.pid() != self && !mine.contains(process.pid()))
                .filter(process ->
                        process.info().command().map(c -> c.endsWith("/java")).orElse(false))
                .count();
    }
}
