package dev.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A private {@code redis-server} process for tests: a free port on 127.0.0.1, its own temporary
 * directory, no persistence ({@code --save "" --appendonly no}), killed when the JVM exits.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *     RedisClient client = RedisClient.create(redis.uri());
 *     ...
 * }
 * }</pre>
 *
 * <p>{@link #stop()}, {@link #kill()}, {@link #restart()} and {@link #startAgain()} simulate an
 * outage; the server comes back on the same port, empty unless started with persistence
 * arguments. Never touches any other Redis. Thread-safe.
 */
public final class RedisServer implements AutoCloseable {

    /** The host every server binds to. */
    public static final String HOST = "127.0.0.1";

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(20);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    private static final String DIRECTORY_PREFIX = "ratelimit-redis-";
    private static final String OWNER_FILE = "owner.pid";
    private static final String SERVER_FILE = "server.pid";

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "redis-server-reaper"));
    }

    /**
     * Kills the servers of earlier test JVMs that died without stopping them: each server's
     * directory records the pid of the JVM that started it and its own pid.
     */
    static synchronized void reapOrphans() {
        Path temp = Path.of(System.getProperty("java.io.tmpdir"));
        try (var directories = Files.newDirectoryStream(temp, DIRECTORY_PREFIX + "*")) {
            for (Path directory : directories) {
                try {
                    long owner = Long.parseLong(
                            Files.readString(directory.resolve(OWNER_FILE)).trim());
                    if (ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) {
                        continue;
                    }
                    Path serverFile = directory.resolve(SERVER_FILE);
                    if (Files.exists(serverFile)) {
                        long server =
                                Long.parseLong(Files.readString(serverFile).trim());
                        ProcessHandle.of(server)
                                // the executable may be a link (Debian: redis-server -> redis-check-rdb)
                                .filter(handle -> handle.info()
                                        .command()
                                        .map(command -> command.contains("redis"))
                                        .orElse(false))
                                .ifPresent(ProcessHandle::destroyForcibly);
                    }
                    deleteRecursively(directory);
                } catch (IOException | RuntimeException e) {
                    // not one of ours, or already gone: leave it
                }
            }
        } catch (IOException e) {
            // nothing to reap
        }
    }

    private final int port;
    private final Path directory;
    private final List<String> extraArguments;
    private final @Nullable String adminPassword;
    private final boolean sentinel;
    private @Nullable Process process;

    private RedisServer(
            int port, Path directory, List<String> extraArguments, @Nullable String adminPassword, boolean sentinel) {
        this.port = port;
        this.directory = directory;
        this.extraArguments = List.copyOf(extraArguments);
        this.adminPassword = adminPassword;
        this.sentinel = sentinel;
    }

    /**
     * Starts a server whose {@code default} user needs a password ({@code --requirepass}); this
     * fixture's own calls authenticate with it. Add ACL users with {@code --user} arguments, for
     * example {@code List.of("--user", "ratelimit on >secret ~ratelimit:* +evalsha")}.
     *
     * @param adminPassword the {@code default} user's password
     * @param extraArguments arguments appended to the command line
     * @return the running server
     * @throws IllegalStateException if no server could be started
     */
    public static RedisServer startWithPassword(String adminPassword, List<String> extraArguments) {
        Objects.requireNonNull(adminPassword, "adminPassword must not be null");
        List<String> arguments = new ArrayList<>(List.of("--requirepass", adminPassword));
        arguments.addAll(Objects.requireNonNull(extraArguments, "extraArguments must not be null"));
        return start(arguments, false, adminPassword, false);
    }

    /**
     * Starts {@code redis-server <config> --sentinel}: the config file must leave the port, bind
     * address and directory to this fixture.
     *
     * @param directive the Sentinel directives, one per line ({@code sentinel monitor ...})
     * @return the running Sentinel
     */
    static RedisServer startSentinel(List<String> directive) {
        return start(directive, false, null, true);
    }

    /**
     * Starts a server on a free port and waits until it answers {@code PING}.
     *
     * @return the running server
     * @throws IllegalStateException if no server could be started
     */
    public static RedisServer start() {
        return start(List.of(), false);
    }

    /**
     * Starts a server with extra {@code redis-server} arguments, for example {@code
     * List.of("--maxclients", "100")}.
     *
     * @param extraArguments arguments appended to the command line
     * @return the running server
     * @throws IllegalStateException if no server could be started
     */
    public static RedisServer start(List<String> extraArguments) {
        Objects.requireNonNull(extraArguments, "extraArguments must not be null");
        return start(extraArguments, false);
    }

    static RedisServer start(List<String> extraArguments, boolean needsBusPort) {
        return start(extraArguments, needsBusPort, null, false);
    }

    private static RedisServer start(
            List<String> extraArguments, boolean needsBusPort, @Nullable String adminPassword, boolean sentinel) {
        // A JVM killed outright (SIGKILL: a timed-out fork, say) runs no shutdown hook: reap what it left.
        reapOrphans();
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            int port = needsBusPort ? freePortWithBus() : freePort();
            Path directory;
            try {
                directory = Files.createTempDirectory(DIRECTORY_PREFIX + port + "-");
                Files.writeString(
                        directory.resolve(OWNER_FILE),
                        Long.toString(ProcessHandle.current().pid()));
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot create a directory for redis-server", e);
            }
            RedisServer server = new RedisServer(port, directory, extraArguments, adminPassword, sentinel);
            try {
                server.launch();
                return server;
            } catch (IllegalStateException e) {
                // most likely another process took the port between the probe and the start
                server.close();
                last = e;
            }
        }
        throw Objects.requireNonNull(last);
    }

    /**
     * Returns the port the server listens on, the same across restarts.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Returns the host, {@value #HOST}.
     *
     * @return the host
     */
    public String host() {
        return HOST;
    }

    /**
     * Returns the server's URI, such as {@code redis://127.0.0.1:34567}.
     *
     * @return the URI
     */
    public String uri() {
        return "redis://" + HOST + ":" + port;
    }

    /**
     * Returns the server's working directory (its log is {@code redis.log} there).
     *
     * @return the directory
     */
    public Path directory() {
        return directory;
    }

    /**
     * Tells whether the process is alive.
     *
     * @return {@code true} while running
     */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Stops the server (SIGTERM, then SIGKILL after five seconds); a no-op when stopped.
     */
    public synchronized void stop() {
        Process running = process;
        process = null;
        if (running == null) {
            return;
        }
        running.destroy();
        try {
            if (!running.waitFor(5, TimeUnit.SECONDS)) {
                running.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            running.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            LIVE.remove(running);
        }
    }

    /**
     * Stops the server and starts it again on the same port, and waits until it answers {@code
     * PING}: empty without persistence, with its data when started with an append-only file.
     *
     * @throws IllegalStateException if it does not come back
     */
    public synchronized void restart() {
        stop();
        startAgain();
    }

    /**
     * Runs one command on a fresh connection and returns its reply; see {@link RespClient}.
     *
     * @param command the command and its arguments
     * @return the reply
     */
    public @Nullable Object call(String... command) {
        try (RespClient client = connect()) {
            return client.call(command);
        }
    }

    /**
     * Opens a raw connection to the server; the caller closes it.
     *
     * @return a connected client with a ten-second read timeout
     */
    public RespClient connect() {
        RespClient client = RespClient.connect(HOST, port, Duration.ofSeconds(10));
        authenticate(client);
        return client;
    }

    private void authenticate(RespClient client) {
        if (adminPassword != null) {
            try {
                client.call("AUTH", adminPassword);
            } catch (RuntimeException e) {
                client.close();
                throw e;
            }
        }
    }

    /**
     * Returns the process id, for signals such as {@code SIGSTOP}.
     *
     * @return the pid
     * @throws IllegalStateException if the server is stopped
     */
    public synchronized long pid() {
        Process running = process;
        if (running == null) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return running.pid();
    }

    /**
     * Kills the server at once ({@code SIGKILL}): no shutdown, no final save; a no-op when stopped.
     */
    public synchronized void kill() {
        Process running = process;
        process = null;
        if (running == null) {
            return;
        }
        running.destroyForcibly();
        try {
            running.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            LIVE.remove(running);
        }
    }

    /**
     * Starts the server again on the same port, keeping its directory (and so its append-only
     * file when persistence is on), and waits until it answers {@code PING}.
     *
     * @throws IllegalStateException if it is running or does not come back
     */
    public synchronized void startAgain() {
        if (isRunning()) {
            throw new IllegalStateException("redis-server on port " + port + " is running");
        }
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                launch();
                return;
            } catch (IllegalStateException e) {
                last = e;
                sleep(200);
            }
        }
        throw Objects.requireNonNull(last);
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        stop();
        deleteRecursively(directory);
    }

    @Override
    public String toString() {
        return "RedisServer{" + uri() + (isRunning() ? "" : ", stopped") + "}";
    }

    private synchronized void launch() {
        List<String> command = new ArrayList<>();
        command.add(binary("REDIS_SERVER", "redis-server"));
        if (sentinel) {
            // Sentinel rewrites its config file, so it gets one of its own, kept across restarts
            Path config = directory.resolve("sentinel.conf");
            try {
                if (!Files.exists(config)) {
                    Files.write(config, extraArguments, StandardCharsets.UTF_8);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot write " + config, e);
            }
            command.add(config.toString());
            command.add("--sentinel");
        }
        command.addAll(List.of(
                "--port",
                Integer.toString(port),
                "--bind",
                HOST,
                "--dir",
                directory.toString(),
                "--daemonize",
                "no",
                "--logfile",
                ""));
        if (!sentinel) {
            command.addAll(List.of("--save", "", "--appendonly", "no"));
            command.addAll(extraArguments);
        }
        Path log = directory.resolve("redis.log");
        Process started;
        try {
            started = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run " + command.get(0) + " (is Redis installed?)", e);
        }
        LIVE.add(started);
        process = started;
        try {
            Files.writeString(directory.resolve(SERVER_FILE), Long.toString(started.pid()));
        } catch (IOException e) {
            // only the orphan reaper reads it
        }
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!started.isAlive()) {
                LIVE.remove(started);
                process = null;
                throw new IllegalStateException(
                        "redis-server on port " + port + " exited with " + started.exitValue() + ": " + tail(log));
            }
            if (answersPing()) {
                return;
            }
            sleep(20);
        }
        stop();
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING: " + tail(log));
    }

    private boolean answersPing() {
        try (RespClient client = RespClient.connect(HOST, port, Duration.ofMillis(500))) {
            authenticate(client);
            return "PONG".equals(client.call("PING"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    static String binary(String variable, String name) {
        String configured = System.getenv(variable);
        return configured == null || configured.isBlank() ? name : configured;
    }

    /**
     * A free port below the ephemeral range (and below the cluster nodes' range): a client that keeps
     * reconnecting to a stopped server on an ephemeral port can be given that very port as its own
     * source port (a TCP self-connect) and hold it, so the server could not start again on it.
     */
    static int freePort() {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(10_000, 16_000);
            if (isFree(port)) {
                return port;
            }
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free port", e);
        }
    }

    /** A port p such that p and the cluster bus port p + 10000 are both free, below the ephemeral range. */
    private static int freePortWithBus() {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(16_000, 22_000);
            if (isFree(port) && isFree(port + 10_000)) {
                return port;
            }
        }
        throw new IllegalStateException("No free port pair for a cluster node");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
            socket.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e + ")";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
    }

    static void deleteRecursively(Path directory) {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    // best effort: a temp directory left behind is harmless
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // best effort
        }
    }
}
