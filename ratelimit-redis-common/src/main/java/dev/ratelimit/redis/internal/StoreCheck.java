package dev.ratelimit.redis.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What a Redis store checks when it first connects, so that a misconfigured deployment fails at
 * startup with a message that says what to change, instead of at the first request with a driver's
 * error: credentials, the permission to run each command of the script (an ACL user limited to the
 * key prefix and those commands is enough), a server that can load the script, and an eviction
 * policy that could silently drop counts.
 *
 * <p>Each command is probed directly, on two keys of the store's prefix that no window ever uses,
 * with harmless arguments: Redis checks a user's permissions before it runs a command, so a denied
 * one answers {@code NOPERM} and an allowed one answers anything else. Both keys are deleted (and
 * expire within ten seconds if {@code DEL} is denied). The check also {@code EVAL}s the script with
 * invalid arguments: it loads and caches the script and stops before touching any key.
 */
public final class StoreCheck {

    /**
     * The commands the script calls, every one of them: the minimal ACL of a store is these, plus
     * {@code EVALSHA} and {@code EVAL}, on {@code ~<prefix>:*}. A test checks this list against
     * the script's source.
     */
    public static final List<String> SCRIPT_COMMANDS = List.of(
            "TIME",
            "ZREMRANGEBYSCORE",
            "ZCARD",
            "ZRANGE",
            "ZRANGEBYSCORE",
            "ZADD",
            "ZREM",
            "GET",
            "SET",
            "DEL",
            "INCRBY",
            "DECRBY",
            "GETRANGE",
            "SETRANGE",
            "EXPIRE");

    /** The commands the stores send themselves. */
    public static final List<String> CLIENT_COMMANDS = List.of("EVALSHA", "EVAL");

    private static final System.Logger LOG = System.getLogger("dev.ratelimit.redis");
    private static final Pattern DENIED_COMMAND = Pattern.compile("'([A-Za-z|]+)' command");

    private StoreCheck() {}

    /** Runs one Redis command for the check; the adapters implement it over their driver. */
    @FunctionalInterface
    public interface Commands {

        /**
         * Runs a command.
         *
         * @param key the key that routes the command in a cluster, or {@code null} for none
         * @param command the command name and its arguments
         * @return the reply
         * @throws ReplyError when Redis answers with an error
         * @throws RuntimeException when Redis cannot be reached or does not answer in time
         */
        @Nullable
        Object call(@Nullable String key, String... command);
    }

    /** An error reply of Redis, as opposed to a failure to reach it. */
    public static final class ReplyError extends RuntimeException {

        private static final long serialVersionUID = 1L;

        /**
         * Creates the error.
         *
         * @param message Redis's error text, starting with its code ({@code NOPERM}, {@code OOM}, ...)
         * @param cause the driver's exception
         */
        public ReplyError(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Tells whether a failure (or one of its causes) is Redis refusing the credentials: {@code
     * WRONGPASS} or {@code NOAUTH}.
     *
     * @param failure a failure to connect
     * @return the Redis error text, or {@code null} when the failure is something else
     */
    public static @Nullable String credentialsRefused(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null
                    && (message.startsWith("WRONGPASS")
                            || message.startsWith("NOAUTH")
                            || message.contains("invalid password"))) {
                return message;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    /**
     * Explains refused credentials.
     *
     * @param store the store's name, for example {@code "Lettuce"}
     * @param redisError Redis's error text
     * @return the exception a store's builder throws
     */
    public static IllegalStateException refusedCredentials(String store, String redisError) {
        return new IllegalStateException("Redis refused the credentials of the rate limiter's " + store
                + " connection (" + redisError + "): check the user name and password of the client");
    }

    /**
     * Runs the check: probes every command of the script and the script itself, and warns when the
     * eviction policy may evict rate-limit keys.
     *
     * @param store the store's name, for example {@code "Lettuce"}, for messages
     * @param space the store's key space
     * @param commands runs commands on the store's connection
     * @throws IllegalStateException when a permission is missing or the server cannot run the
     *     script: the message names what is missing and the minimal ACL rule
     * @throws RuntimeException when Redis cannot be reached: nothing could be checked
     */
    public static void run(String store, KeySpace space, Commands commands) {
        Objects.requireNonNull(commands, "commands must not be null");
        String zset = space.checkKey("z");
        String string = space.checkKey("s");
        Map<String, String> denied = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        try {
            probe(commands, zset, denied, notes, "TIME");
        } catch (ReplyError e) {
            throw refusedCredentials(store, String.valueOf(e.getMessage()));
        }
        probe(commands, zset, denied, notes, "ZREMRANGEBYSCORE", zset, "-inf", "-inf");
        probe(commands, zset, denied, notes, "ZCARD", zset);
        probe(commands, zset, denied, notes, "ZRANGE", zset, "0", "0", "WITHSCORES");
        probe(commands, zset, denied, notes, "ZRANGEBYSCORE", zset, "-inf", "-inf");
        probe(commands, zset, denied, notes, "ZADD", zset, "NX", "0", "check");
        probe(commands, zset, denied, notes, "ZREM", zset, "check");
        probe(commands, zset, denied, notes, "EXPIRE", zset, "10");
        probe(commands, string, denied, notes, "SET", string, "0", "PX", "10000");
        probe(commands, string, denied, notes, "GET", string);
        probe(commands, string, denied, notes, "INCRBY", string, "0");
        probe(commands, string, denied, notes, "DECRBY", string, "0");
        probe(commands, string, denied, notes, "GETRANGE", string, "0", "0");
        probe(commands, string, denied, notes, "SETRANGE", string, "0", "0");
        probe(commands, zset, denied, notes, "DEL", zset, string);
        // Invalid arguments: the script loads, is cached, and returns an error before any key is touched.
        @Nullable String scriptError = null;
        try {
            commands.call(zset, "EVAL", SlidingWindowScript.source(), "0", "check");
        } catch (ReplyError e) {
            String message = String.valueOf(e.getMessage());
            if (isDenied(message)) {
                denied.put("EVAL", message);
            } else if (message.contains("Error compiling script") || message.contains("Unknown lua shebang")) {
                scriptError = message;
            } else if (message.startsWith("OOM")) {
                notes.add("Redis is out of memory (" + message + "): checks fail until memory is freed");
            }
        }
        probe(commands, zset, denied, notes, "EVALSHA", SlidingWindowScript.sha1(), "0", "check");
        if (scriptError != null) {
            throw new IllegalStateException("Redis cannot load the rate-limit script (" + scriptError
                    + "): it needs Redis 7.0 or later, which runs scripts declared with a #!lua line");
        }
        if (!denied.isEmpty()) {
            throw new IllegalStateException("The Redis user of the rate limiter's " + store
                    + " connection may not run " + String.join(", ", denied.keySet()) + " ("
                    + denied.values().iterator().next() + "). The store needs exactly: " + aclRule(space));
        }
        evictionPolicy(commands, zset, notes);
        for (String note : notes) {
            LOG.log(System.Logger.Level.WARNING, "Rate limiter store ({0}): {1}", store, note);
        }
    }

    /**
     * Returns the ACL rule that grants a store exactly what it needs, as in {@code ACL SETUSER
     * ratelimit on >password <rule>}.
     *
     * @param space the store's key space
     * @return {@code ~<prefix>:* -@all +evalsha +eval +time ...}
     */
    public static String aclRule(KeySpace space) {
        StringBuilder rule = new StringBuilder("~").append(space.prefix()).append(":* -@all");
        for (String command : CLIENT_COMMANDS) {
            rule.append(" +").append(command.toLowerCase(Locale.ROOT));
        }
        for (String command : SCRIPT_COMMANDS) {
            rule.append(" +").append(command.toLowerCase(Locale.ROOT));
        }
        return rule.toString();
    }

    private static void probe(
            Commands commands,
            @Nullable String key,
            Map<String, String> denied,
            List<String> notes,
            String name,
            String... arguments) {
        String[] command = new String[arguments.length + 1];
        command[0] = name;
        System.arraycopy(arguments, 0, command, 1, arguments.length);
        try {
            commands.call(key, command);
        } catch (ReplyError e) {
            String message = String.valueOf(e.getMessage());
            if (credentialsRefused(e) != null) {
                throw e;
            }
            if (isDenied(message)) {
                Matcher matcher = DENIED_COMMAND.matcher(message);
                String what = matcher.find() ? matcher.group(1).toUpperCase(Locale.ROOT) : name;
                denied.put(message.contains("keys") ? name + " on " + key : what, message);
            } else if (message.startsWith("OOM") && notes.isEmpty()) {
                notes.add("Redis is out of memory (" + message + "): checks fail until memory is freed");
            }
            // any other error (a wrong type, say) means the command was allowed
        }
    }

    private static boolean isDenied(String message) {
        return message.startsWith("NOPERM");
    }

    /** Warns when Redis may evict keys: a window that loses its key forgets what it counted. */
    private static void evictionPolicy(Commands commands, String key, List<String> notes) {
        Object reply;
        try {
            reply = commands.call(key, "CONFIG", "GET", "maxmemory-policy");
        } catch (ReplyError e) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "Cannot read maxmemory-policy ({0}): the eviction policy is not checked",
                    e.getMessage());
            return;
        }
        String policy = policyOf(reply);
        if (policy != null && !policy.equalsIgnoreCase("noeviction")) {
            notes.add("Redis evicts keys when memory is full (maxmemory-policy " + policy
                    + "): rate-limit keys can be evicted and their counts lost, so limits can be under-counted"
                    + " and users let through. Use maxmemory-policy noeviction for the rate limiter's Redis");
        }
    }

    /** The value of a {@code CONFIG GET} reply: a list (RESP2) or a map (RESP3) of name and value. */
    static @Nullable String policyOf(@Nullable Object reply) {
        if (reply instanceof List<?> list && list.size() >= 2) {
            return text(list.get(1));
        }
        if (reply instanceof Map<?, ?> map && !map.isEmpty()) {
            return text(map.values().iterator().next());
        }
        return null;
    }

    private static @Nullable String text(@Nullable Object value) {
        if (value instanceof byte[] bytes) {
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        }
        return value == null ? null : value.toString();
    }
}
