package dev.ratelimit.redis.internal;

import java.util.Base64;
import java.util.Objects;

/**
 * The key codec: {@code ratelimit:<user>:<window seconds>} for a single server and {@code
 * ratelimit:{<user>}:<window seconds>} for Redis Cluster, for example {@code ratelimit:user_8421:60}
 * and {@code ratelimit:{user_8421}:60}.
 *
 * <p>The {@code <user>} part is the user id itself, except for three kinds of ids, which are
 * written {@code ~} followed by the unpadded base64url of the id's UTF-16BE code units:
 *
 * <ul>
 *   <li>ids containing <code>'&#125;'</code>: in a cluster key Redis would end the hash tag at that brace, so
 *       the tag would no longer be the whole id and two users could share a budget's slot or a
 *       user's windows be split across slots;
 *   <li>ids starting with {@code '~'}: so that no raw id can look like an encoded one;
 *   <li>ids with an unpaired surrogate: UTF-8 would replace it with {@code '?'} and merge distinct
 *       ids.
 * </ul>
 *
 * <p>The rule is the same in both layouts, so the part between the prefix and the window is the
 * same token whether or not it is wrapped in braces. Distinct ids always give distinct keys: a raw
 * token never starts with {@code ~}, base64url is injective and never holds a brace, and the window
 * is the digits after the last colon. Ids may hold colons, <code>'&#123;'</code>, spaces and any Unicode.
 */
public final class RedisKeys {

    /** The prefix of every key by default, before its colon. */
    public static final String DEFAULT_PREFIX = "ratelimit";

    /** The start of every key with the default prefix. */
    public static final String PREFIX = DEFAULT_PREFIX + ":";

    private static final char ENCODED_MARK = '~';
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private RedisKeys() {}

    /**
     * Returns the key of one window of one subject.
     *
     * @param layout standalone or cluster
     * @param subject the user id, not empty
     * @param windowSeconds the window length in seconds, at least 1
     * @return the key
     */
    public static String key(KeyLayout layout, String subject, long windowSeconds) {
        return key(layout, DEFAULT_PREFIX, subject, windowSeconds);
    }

    /**
     * Returns the key of one window of one subject under a custom prefix: {@code
     * <prefix>:<user>:<window seconds>}.
     *
     * @param layout standalone or cluster
     * @param prefix the prefix, without its trailing colon; validated by {@link KeySpace}
     * @param subject the user id, not empty
     * @param windowSeconds the window length in seconds, at least 1
     * @return the key
     */
    public static String key(KeyLayout layout, String prefix, String subject, long windowSeconds) {
        Objects.requireNonNull(layout, "layout must not be null");
        Objects.requireNonNull(prefix, "prefix must not be null");
        if (windowSeconds < 1) {
            throw new IllegalArgumentException("windowSeconds must be at least 1, was " + windowSeconds);
        }
        String token = token(subject);
        StringBuilder key = new StringBuilder(prefix.length() + token.length() + 25)
                .append(prefix)
                .append(':');
        if (layout == KeyLayout.CLUSTER) {
            key.append('{').append(token).append('}');
        } else {
            key.append(token);
        }
        return key.append(':').append(windowSeconds).toString();
    }

    /**
     * Validates a key prefix: not empty, and without braces, which would move a cluster hash tag.
     *
     * @param prefix the prefix
     * @param argument the argument's name, for the message
     * @return the prefix
     * @throws NullPointerException if the prefix is {@code null}
     * @throws IllegalArgumentException if the prefix is empty or holds a brace
     */
    public static String checkPrefix(String prefix, String argument) {
        Objects.requireNonNull(prefix, () -> argument + " must not be null");
        if (prefix.isEmpty() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException(
                    argument + " must be non-empty and hold no braces, was '" + prefix + "'");
        }
        return prefix;
    }

    /**
     * Returns the token that stands for a subject in its keys: the id itself, or its encoded form
     * for ids that hold <code>'&#125;'</code>, start with {@code '~'} or hold an unpaired surrogate.
     *
     * @param subject the user id, not empty
     * @return the token; never holds <code>'&#125;'</code>, never empty
     */
    public static String token(String subject) {
        Objects.requireNonNull(subject, "subject must not be null");
        if (subject.isEmpty()) {
            throw new IllegalArgumentException("subject must not be empty");
        }
        if (needsEncoding(subject)) {
            return ENCODED_MARK + BASE64URL.encodeToString(codeUnits(subject));
        }
        return subject;
    }

    /** The UTF-16BE bytes of every char, lone surrogates included (a charset encoder would replace them). */
    private static byte[] codeUnits(String subject) {
        byte[] bytes = new byte[subject.length() * 2];
        for (int i = 0; i < subject.length(); i++) {
            char c = subject.charAt(i);
            bytes[2 * i] = (byte) (c >>> 8);
            bytes[2 * i + 1] = (byte) c;
        }
        return bytes;
    }

    private static boolean needsEncoding(String subject) {
        if (subject.charAt(0) == ENCODED_MARK) {
            return true;
        }
        for (int i = 0; i < subject.length(); i++) {
            char c = subject.charAt(i);
            if (c == '}') {
                return true;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < subject.length() && Character.isLowSurrogate(subject.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            } else if (Character.isLowSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
