package dev.ratelimit.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * The sliding-window Lua script: its source, read once from the {@code sliding_window.lua}
 * resource, and the SHA-1 that names it in {@code EVALSHA}.
 *
 * <p>Fallback policy, the same for every adapter: call {@code EVALSHA}; only when Redis answers
 * {@code NOSCRIPT} (the script cache was flushed, the server restarted, or a cluster node never saw
 * the script) send the source once with {@code EVAL}, which also caches it. Any other failure,
 * timeouts above all, is never retried: the script may have run and recorded the request.
 */
public final class SlidingWindowScript {

    /** The classpath location of the script. */
    public static final String RESOURCE = "/dev/ratelimit/redis/sliding_window.lua";

    private static final String SOURCE = load();
    private static final String SHA1 = sha1(SOURCE);

    private SlidingWindowScript() {}

    /**
     * Returns the script's source, as sent by {@code EVAL}.
     *
     * @return the Lua source
     */
    public static String source() {
        return SOURCE;
    }

    /**
     * Returns the lowercase hex SHA-1 of the source, as Redis names the script in {@code EVALSHA}.
     *
     * @return 40 hex digits
     */
    public static String sha1() {
        return SHA1;
    }

    /**
     * Tells whether a Redis error message is the {@code NOSCRIPT} error, the only one that
     * warrants sending the script with {@code EVAL}.
     *
     * @param message the error message of a failed {@code EVALSHA}, possibly {@code null}
     * @return {@code true} for a {@code NOSCRIPT} error
     */
    public static boolean isNoScript(@Nullable String message) {
        return message != null && message.startsWith("NOSCRIPT");
    }

    private static String load() {
        try (InputStream in = SlidingWindowScript.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("Missing classpath resource " + RESOURCE);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + RESOURCE, e);
        }
    }

    private static String sha1(String source) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(digest.digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}
