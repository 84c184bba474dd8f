package dev.ratelimit.core;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Names the entries requests record: a random prefix drawn once per class loader (96 bits, so two
 * processes practically never share one) followed by a counter, so names are unique within one
 * millisecond, across threads and across app servers, without asking the store for anything.
 */
final class EntryIds {

    private static final String PREFIX;
    private static final AtomicLong COUNTER = new AtomicLong();

    static {
        byte[] random = new byte[12];
        new SecureRandom().nextBytes(random);
        PREFIX = Base64.getUrlEncoder().withoutPadding().encodeToString(random) + '.';
    }

    private EntryIds() {}

    /** Returns an id never returned before by any process: 16 random characters, a dot, a base-36 counter. */
    static String next() {
        return PREFIX + Long.toString(COUNTER.getAndIncrement(), 36);
    }
}
