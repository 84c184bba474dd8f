package dev.ratelimit.redis.internal;

import java.util.Base64;
import java.util.Objects;

/**
 * The codec of the scope part of keys ({@link KeySpace} builds whole keys): a user id or shared
 * budget name is written as itself, except for three kinds, which are written {@code ~} followed by
 * the unpadded base64url of the string's UTF-16BE code units:
 *
 * <ul>
 *   <li>strings containing <code>'&#125;'</code>: in a cluster key Redis would end the hash tag at that brace, so
 *       the tag would no longer be the whole id and two users could share a budget's slot or a
 *       user's windows be split across slots;
 *   <li>strings starting with {@code '~'}: so that no raw id can look like an encoded one, or like
 *       the mark of a shared budget;
 *   <li>strings with an unpaired surrogate: UTF-8 would replace it with {@code '?'} and merge
 *       distinct ids.
 * </ul>
 *
 * <p>Distinct strings always give distinct tokens: a raw token never starts with {@code ~},
 * base64url is injective and never holds a brace or a {@code ~}. Ids may hold colons, <code>'&#123;'</code>,
 * spaces and any Unicode.
 */
public final class RedisKeys {

    private static final char ENCODED_MARK = '~';
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private RedisKeys() {}

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
