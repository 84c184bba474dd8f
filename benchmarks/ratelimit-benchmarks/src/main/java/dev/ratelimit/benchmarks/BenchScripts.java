package dev.ratelimit.benchmarks;

import dev.ratelimit.redis.internal.SlidingWindowScript;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The scripts the benchmarks compare: the stores' one, the seed's minimal exact log ({@code
 * sliding_window_seed.lua}, from commit 866e8c4: {@code TIME}, {@code ZREMRANGEBYSCORE}, {@code ZCARD}, {@code ZRANGE}, {@code ZADD}, {@code EXPIRE}; arguments
 * {@code now, permits, member, length, limit}), whose {@code redis-benchmark -P 16} rate is the async
 * ceiling; and two floors for {@link ScriptCost}: the script call alone ({@code floor_call.lua}) and the
 * commands of an allowed exact decision alone ({@code floor_commands.lua}).
 */
enum BenchScripts {
    /** The script the stores run. */
    CURRENT(SlidingWindowScript.source()),
    /** The seed's four-command exact log. */
    SEED(resource("sliding_window_seed.lua")),
    /** The script call alone: the stores' keys and arguments, a reply of the same shape, no command. */
    FLOOR_CALL(resource("floor_call.lua")),
    /** The commands of an allowed decision in exact request windows alone, without the decision. */
    FLOOR_COMMANDS(resource("floor_commands.lua"));

    private final String source;
    private final String sha1;

    BenchScripts(String source) {
        this.source = source;
        this.sha1 = sha1(source);
    }

    String source() {
        return source;
    }

    String sha1() {
        return sha1;
    }

    private static String resource(String name) {
        try (InputStream in = BenchScripts.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String sha1(String source) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
