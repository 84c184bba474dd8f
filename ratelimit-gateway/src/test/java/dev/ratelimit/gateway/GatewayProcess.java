package dev.ratelimit.gateway;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A gateway in a JVM of its own, as users start it: with the test JVM's class path, or with {@code
 * java -jar} on the packaged jar. Its output is kept; {@link #port()} waits for the banner.
 */
final class GatewayProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on http://[^:]+:(\\d+)");
    private static final Pattern MANAGEMENT = Pattern.compile("^management: http://[^:]+:(\\d+)");
    /** Variables of the test's own environment that would change what the gateway does. */
    private static final List<String> CLEARED = List.of(
            "HOST",
            "PORT",
            "MANAGEMENT_HOST",
            "MANAGEMENT_PORT",
            "REDIS_URL",
            "REDIS_CLUSTER_URL",
            "GATEWAY_CONFIG",
            "UPSTREAM_URL",
            "UPSTREAM_API_KEY",
            "RATE_LIMIT_DISABLED");

    final Process process;
    final long startedNanos;
    private final List<String> output = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Integer> port = new CompletableFuture<>();
    private final CompletableFuture<Integer> managementPort = new CompletableFuture<>();
    /** Completes when the output ends: the process closed its stdout, so {@link #output()} is whole. */
    private final CompletableFuture<Void> outputEnded = new CompletableFuture<>();

    private GatewayProcess(List<String> command, Map<String, String> environment) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command);
        CLEARED.forEach(builder.environment()::remove);
        builder.environment().put("PORT", "0");
        builder.environment().put("MANAGEMENT_PORT", "0");
        builder.environment().putAll(environment);
        builder.redirectErrorStream(true);
        startedNanos = System.nanoTime();
        process = builder.start();
        Thread reader = new Thread(this::read, "gateway-process-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@link GatewayServer} on the test JVM's class path. */
    static GatewayProcess onClassPath(Map<String, String> environment) throws Exception {
        return new GatewayProcess(
                List.of(java(), "-cp", System.getProperty("java.class.path"), GatewayServer.class.getName()),
                environment);
    }

    /** Starts the packaged {@code target/ratelimit-gateway.jar} with {@code java -jar}. */
    static GatewayProcess jar(Map<String, String> environment) throws Exception {
        Path jar = Path.of("target", "ratelimit-gateway.jar").toAbsolutePath();
        if (!jar.toFile().isFile()) {
            throw new IllegalStateException(jar + " is missing: the *IT tests run after package");
        }
        List<String> command = new ArrayList<>(defaultHangup());
        command.addAll(List.of(java(), "-jar", jar.toString()));
        return new GatewayProcess(command, environment);
    }

    /**
     * Starts another command that runs the gateway and prints its banner, such as {@code podman run}
     * of the image in the foreground ({@code GatewayImageIT}).
     */
    static GatewayProcess command(List<String> command, Map<String, String> environment) throws Exception {
        return new GatewayProcess(command, environment);
    }

    /**
     * The prefix that starts the gateway with SIGHUP's default disposition, as a service manager
     * starts it: a build run under {@code nohup} passes SIGHUP on ignored, and a JVM leaves an
     * ignored SIGHUP ignored (the gateway then says so at start). GNU {@code env} resets it; without
     * that option, nothing.
     */
    private static List<String> defaultHangup() {
        try {
            Process probe = new ProcessBuilder("env", "--default-signal=HUP", "true")
                    .redirectErrorStream(true)
                    .start();
            probe.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            return probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0
                    ? List.of("env", "--default-signal=HUP")
                    : List.of();
        } catch (java.io.IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private void read() {
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            int listening = -1;
            while ((line = lines.readLine()) != null) {
                output.add(line);
                Matcher matcher = LISTENING.matcher(line);
                if (matcher.find()) {
                    listening = Integer.parseInt(matcher.group(1));
                }
                Matcher management = MANAGEMENT.matcher(line);
                if (management.find()) {
                    managementPort.complete(Integer.parseInt(management.group(1)));
                }
                if (listening >= 0 && line.startsWith("see:")) { // the banner's last line
                    port.complete(listening);
                }
            }
        } catch (Exception e) {
            port.completeExceptionally(e);
        } finally {
            outputEnded.complete(null);
            port.completeExceptionally(new IllegalStateException("gateway exited before listening: " + output));
            managementPort.completeExceptionally(
                    new IllegalStateException("gateway exited before listening: " + output));
        }
    }

    /** The port from the banner, once the gateway has printed it. */
    int port() throws Exception {
        try {
            // generous: ColdStartTest starts it on a machine it keeps busy on purpose
            return port.get(240, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the gateway printed no banner within 240 s; its output: " + output(), e);
        }
    }

    /** Where the status page and the metrics are: the management listener from the banner. */
    String managementBase() throws Exception {
        port();
        return "http://127.0.0.1:" + managementPort.get(120, TimeUnit.SECONDS);
    }

    String base() throws Exception {
        return "http://127.0.0.1:" + port();
    }

    /** Everything the process printed so far. */
    String output() {
        return String.join("\n", output);
    }

    /** Sends SIGTERM, as a service manager or Kubernetes does, and returns the exit code. */
    int terminate(long timeoutSeconds) throws Exception {
        sigterm();
        return awaitExit(timeoutSeconds);
    }

    /**
     * Sends SIGTERM and returns at once. Through the process's handle, not {@link Process#destroy()}:
     * that one also closes the pipe of the process's output, so everything it prints while it drains
     * would be lost (and a test waiting for such a line would wait for ever).
     */
    void sigterm() {
        process.toHandle().destroy();
    }

    /** Waits for the process to exit, and for the last of its output, and returns the exit code. */
    int awaitExit(long timeoutSeconds) throws Exception {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            throw new AssertionError("the gateway did not exit within " + timeoutSeconds + " s: " + output());
        }
        // the reader may still be on the last lines, which the exit does not wait for
        outputEnded.get(10, TimeUnit.SECONDS);
        return process.exitValue();
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            sigterm();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
