package dev.ratelimit.gateway.config;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Re-reads the configuration file without a restart: when its content changes (checked every
 * {@link #POLL_EVERY}) or on {@code SIGHUP}. The new file is validated as a whole; a valid one
 * replaces the old in one atomic swap, so a request sees one configuration from start to end (those
 * in flight finish and settle under the one they started with); an invalid one is refused with every
 * error logged at once (a key that is also managed by the admin API, or a tier or team a managed key
 * needs and the file dropped, refuses it too), the old one stays, and {@code gateway_config_reload_failures_total} counts it.
 */
public final class ConfigReloader implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ConfigReloader.class.getName());
    /** How often the file is checked for a change. */
    static final Duration POLL_EVERY = Duration.ofMillis(500);

    private final Path file;
    private final Map<String, String> environment;
    private final AtomicReference<GatewayConfig> current;
    private final Consumer<GatewayConfig> swapped;
    private final Function<GatewayConfig, @Nullable String> conflict;
    private final Counter reloads;
    private final Counter failures;
    private final ScheduledExecutorService poller;
    private byte[] lastDigest;

    public ConfigReloader(
            Path file,
            Map<String, String> environment,
            AtomicReference<GatewayConfig> current,
            Consumer<GatewayConfig> swapped,
            Function<GatewayConfig, @Nullable String> conflict,
            MeterRegistry registry) {
        this.file = file;
        this.conflict = conflict;
        this.environment = Map.copyOf(environment);
        this.current = current;
        this.swapped = swapped;
        this.reloads = Counter.builder("gateway.config.reloads")
                .description("Configuration reloads that took effect")
                .register(registry);
        this.failures = Counter.builder("gateway.config.reload.failures")
                .description("Configuration reloads refused because the file was invalid (the old one stays)")
                .register(registry);
        this.lastDigest = digest();
        this.poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gateway-config-watch");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts checking the file for changes. */
    public void watch() {
        long every = POLL_EVERY.toMillis();
        poller.scheduleWithFixedDelay(this::checkFile, every, every, TimeUnit.MILLISECONDS);
    }

    private void checkFile() {
        byte[] digest = digest();
        if (digest.length > 0 && !Arrays.equals(digest, lastDigest)) { // unreadable for a moment: not a change
            reload("the file changed");
        }
    }

    /**
     * Reads, validates and swaps in the file now.
     *
     * @param why what asked for the reload, for the log
     * @return whether the new configuration took effect
     */
    public synchronized boolean reload(String why) {
        lastDigest = digest(); // a refused file is not retried until it changes again
        GatewayConfig next;
        try {
            next = GatewayConfig.load(file.toString(), environment);
            String problem = conflict.apply(next); // with the keys managed by the admin API
            if (problem != null) {
                throw new IllegalArgumentException(file + ": " + problem);
            }
        } catch (IllegalArgumentException | IOException e) {
            failures.increment();
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Configuration not reloaded ({0}); the previous one stays in force. {1}",
                    why,
                    e.getMessage());
            return false;
        }
        current.set(next);
        swapped.accept(next);
        reloads.increment();
        LOG.log(
                System.Logger.Level.INFO,
                "Configuration reloaded from {0} ({1}): {2} keys, tiers {3}, {4} model caps",
                file,
                why,
                next.keys().size(),
                next.tiers().keySet(),
                next.models().size());
        for (String warning : next.warnings()) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
        return true;
    }

    private byte[] digest() {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException e) {
            return new byte[0]; // gone for a moment (an editor replacing it): compared again next time
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
