package dev.ratelimit.redis.internal;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Names the entries a check records: a random prefix drawn once per class loader (96 bits, so two
 * processes practically never share one) followed by a counter, so names are unique within one
 * millisecond, across threads and across app servers, without asking Redis for anything.
 */
public final class MemberIds {

    private static final String PREFIX;
    private static final AtomicLong COUNTER = new AtomicLong();

    static {
        byte[] random = new byte[12];
        new SecureRandom().nextBytes(random);
        PREFIX = Base64.getUrlEncoder().withoutPadding().encodeToString(random) + '.';
    }

    private MemberIds() {}

    /**
     * Returns a member base never returned before by any process.
     *
     * @return a short ASCII name, 16 random characters, a dot and a base-36 counter
     */
    public static String next() {
        return PREFIX + Long.toString(COUNTER.getAndIncrement(), 36);
    }
}
