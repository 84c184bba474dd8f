package dev.ratelimit.benchmarks;

import java.util.Arrays;

/**
 * The keys and arguments of the sliding-window script for the benchmark's windows, spelled exactly
 * as the stores spell them, for the plain {@code EVALSHA} ceilings.
 */
final class ScriptArgs {

    private static final String RESERVE = "r";
    private static final String SERVER_TIME = "";
    private static final String UNUSED = "";
    private static final String REQUESTS = ""; // a request window's amount
    private static final String EXACT = "0";
    private static final String MINUTE_MILLIS = Long.toString(Workload.MINUTE.lengthMillis());
    private static final String MINUTE_LIMIT = Long.toString(Workload.MINUTE.limit());
    private static final String DAY_MILLIS = Long.toString(Workload.DAY.lengthMillis());
    private static final String DAY_LIMIT = Long.toString(Workload.DAY.limit());
    private static final String MEMBER_PREFIX = Long.toString(new java.security.SecureRandom().nextLong(), 36) + ".";
    private static final java.util.concurrent.atomic.AtomicLong MEMBERS = new java.util.concurrent.atomic.AtomicLong();

    /** The index of the member among the arguments; the templates leave it empty. */
    private static final int MEMBER = 2;

    /** The arguments of a one-window check, the member left empty. */
    private static final String[] ONE_WINDOW = {
        RESERVE, SERVER_TIME, "", UNUSED, UNUSED, MINUTE_MILLIS, MINUTE_LIMIT, REQUESTS, EXACT
    };

    /** The arguments of a two-window check (minute, then day), the member left empty. */
    private static final String[] TWO_WINDOWS = concat(ONE_WINDOW, DAY_MILLIS, DAY_LIMIT, REQUESTS, EXACT);

    private ScriptArgs() {}

    private static String[] concat(String[] head, String... tail) {
        String[] all = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    static String[] keys(int user, int windows) {
        return windows == 1
                ? new String[] {Workload.minuteKey(user)}
                : new String[] {Workload.minuteKey(user), Workload.dayKey(user)};
    }

    /** Returns a member name unique to this call, as the stores' entry ids are. */
    static String member() {
        return MEMBER_PREFIX + Long.toString(MEMBERS.getAndIncrement(), 36);
    }

    /**
     * Returns the arguments of one check of {@code windows} windows by {@code member}. A copy of a
     * prepared template with the member filled in: the same one allocation an array literal would be.
     */
    static String[] args(String member, int windows) {
        String[] args = (windows == 1 ? ONE_WINDOW : TWO_WINDOWS).clone();
        args[MEMBER] = member;
        return args;
    }

    /** Returns the script arguments before the member for a {@code redis-benchmark} command line. */
    static String[] oneWindowHead() {
        return Arrays.copyOfRange(ONE_WINDOW, 0, MEMBER);
    }

    /** Returns the script arguments after the member for a {@code redis-benchmark} command line (one window). */
    static String[] oneWindowTail() {
        return Arrays.copyOfRange(ONE_WINDOW, MEMBER + 1, ONE_WINDOW.length);
    }
}
