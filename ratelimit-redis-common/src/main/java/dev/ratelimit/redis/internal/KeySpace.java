package dev.ratelimit.redis.internal;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import java.util.Objects;

/**
 * Where a store's keys live and how they are spelled: the one way keys are built.
 *
 * <p>A window's key is {@code <prefix>:<scope>:<window>}, with the scope part wrapped in braces
 * (the hash tag) in cluster mode, so all windows of one user, or of one shared budget, share a
 * slot: {@code ratelimit:user_8421:60} and {@code ratelimit:{user_8421}:60}. The scope part is
 * {@link RedisKeys#token} of the user id; for a shared budget, {@code ~~} followed by the token of
 * its name, which no user id's token can start with. The window part is the length in seconds,
 * then {@code t} for a token window or {@code -<unit>} for a window of another amount unit (such as
 * {@code 2592000-usd_micros}), then {@code @<step seconds>} for a precision window or {@code
 * ~<period>} for a calendar window (such as {@code 2678400-usd_micros~month}), then {@code !shadow}
 * for a window in shadow mode (such as {@code 60!shadow}); an exact window
 * of an amount (tokens, any unit but requests) has a second key, its sum, with {@code #} appended. The window part never holds a
 * colon, so it is everything after the last one, and distinct scopes and windows never share a key.
 *
 * @param layout standalone or cluster
 * @param prefix the key prefix: not empty, no braces (they would move a cluster hash tag)
 */
public record KeySpace(KeyLayout layout, String prefix) {

    /** The prefix of every key by default, before its colon. */
    public static final String DEFAULT_PREFIX = "ratelimit";

    private static final String SHARED_MARK = "~~";

    /**
     * Validates the prefix.
     *
     * @param layout standalone or cluster
     * @param prefix the key prefix: not empty, no braces (they would move a cluster hash tag)
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if the prefix is empty or holds a brace
     */
    public KeySpace {
        Objects.requireNonNull(layout, "layout must not be null");
        RedisKeys.checkPrefix(prefix, "prefix");
    }

    /**
     * Returns the key space of a layout with the default prefix.
     *
     * @param layout standalone or cluster
     * @return the key space
     */
    public static KeySpace of(KeyLayout layout) {
        return new KeySpace(layout, DEFAULT_PREFIX);
    }

    /**
     * Returns the key of one window of one scope: the sorted set of an exact window, the ring of a
     * precision window.
     *
     * @param scope the user's or shared budget's scope
     * @param window one of its windows
     * @return the key
     */
    public String key(StoreRequest.Scope scope, Window window) {
        return scopePart(scope).append(':').append(windowPart(window)).toString();
    }

    /**
     * Returns the key holding the sum of an exact window of an amount (tokens or any unit but
     * requests).
     *
     * @param scope the scope
     * @param window an exact amount window of it
     * @return the key
     * @throws IllegalArgumentException if the window is not an exact amount window
     */
    public String sumKey(StoreRequest.Scope scope, Window window) {
        if (!hasSumKey(window)) {
            throw new IllegalArgumentException("only exact amount windows have a sum key, not " + window);
        }
        return key(scope, window) + '#';
    }

    /**
     * Tells whether a window is kept under two keys (its entries and their sum).
     *
     * @param window the window
     * @return {@code true} for an exact window of an amount
     */
    public static boolean hasSumKey(Window window) {
        return !window.countsRequests() && window.isExact();
    }

    /**
     * Returns a key the startup check may write: inside the prefix (so an ACL limited to it allows
     * it) and never a window's key, whose last part is always a window length.
     *
     * @param name a short name, such as {@code z}
     * @return {@code <prefix>:~~:check-<name>}, or {@code <prefix>:{~~}:check-<name>} in a cluster
     */
    public String checkKey(String name) {
        return prefix + (layout == KeyLayout.CLUSTER ? ":{" + SHARED_MARK + "}" : ":" + SHARED_MARK) + ":check-" + name;
    }

    /**
     * Returns the key of a scope's leases: a sorted set of entry ids scored by the end of their
     * lease, in the hash slot of the scope's windows.
     *
     * @param lease the lease naming the scope
     * @return the key
     */
    public String leaseKey(StoreRequest.Lease lease) {
        return scopePart(lease.subject(), lease.shared()).append(":lease").toString();
    }

    /**
     * Returns the key of a scope's settled entry ids: a sorted set scored by when each mark lapses,
     * in the hash slot of the scope's windows, that makes a repeated settlement change nothing.
     *
     * @param scope the scope
     * @return the key
     */
    public String settledKey(StoreRequest.Scope scope) {
        return scopePart(scope).append(":settled").toString();
    }

    private StringBuilder scopePart(StoreRequest.Scope scope) {
        return scopePart(scope.subject(), scope.shared());
    }

    private StringBuilder scopePart(String subject, boolean shared) {
        String token = RedisKeys.token(subject);
        StringBuilder key = new StringBuilder(prefix.length() + token.length() + 30)
                .append(prefix)
                .append(':');
        if (layout == KeyLayout.CLUSTER) {
            key.append('{');
        }
        if (shared) {
            key.append(SHARED_MARK);
        }
        key.append(token);
        if (layout == KeyLayout.CLUSTER) {
            key.append('}');
        }
        return key;
    }

    private static String windowPart(Window window) {
        String part = Long.toString(window.lengthSeconds());
        if (window.isTokens()) {
            part += 't';
        } else if (!window.countsRequests()) {
            // '-' is in no unit's name, so no unit's key can be taken for another's
            part += "-" + window.unit().name();
        }
        if (!window.isExact()) {
            part += "@" + window.precision().getSeconds();
        }
        Window.Calendar calendar = window.calendar();
        if (calendar != null) {
            // one log per window, trimmed at the period's start: the same key in every period, so a
            // settlement and a call on the server's time name it without knowing the period
            part += "~" + calendar.period();
        }
        if (window.inShadow()) {
            // a shadow window counts apart from its enforced twin: '!' ends no other part
            part += "!shadow";
        }
        return part;
    }
}
