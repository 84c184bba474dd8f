package dev.ratelimit.benchmarks;

/**
 * The keys and arguments of the sliding-window script for the benchmark's windows, spelled exactly
 * as the stores spell them, for the plain {@code EVALSHA} ceilings.
 */
final class ScriptArgs {

    private static final String RESERVE = "r";
    private static final String SERVER_TIME = "";
    private static final String NO_TOKENS = "0";
    private static final String UNUSED = "";
    private static final String REQUESTS = "0";
    private static final String EXACT = "0";
    private static final String MINUTE_MILLIS = Long.toString(Workload.MINUTE.lengthMillis());
    private static final String MINUTE_LIMIT = Long.toString(Workload.MINUTE.limit());
    private static final String DAY_MILLIS = Long.toString(Workload.DAY.lengthMillis());
    private static final String DAY_LIMIT = Long.toString(Workload.DAY.limit());
    private static final String MEMBER_PREFIX = Long.toString(new java.security.SecureRandom().nextLong(), 36) + ".";
    private static final java.util.concurrent.atomic.AtomicLong MEMBERS = new java.util.concurrent.atomic.AtomicLong();

    private ScriptArgs() {}

    static String[] keys(int user, int windows) {
        return windows == 1
                ? new String[] {Workload.minuteKey(user)}
                : new String[] {Workload.minuteKey(user), Workload.dayKey(user)};
    }

    /** Returns a member name unique to this call, as the stores' entry ids are. */
    static String member() {
        return MEMBER_PREFIX + Long.toString(MEMBERS.getAndIncrement(), 36);
    }

    static String[] args(String member, int windows) {
        return windows == 1
                ? new String[] {
                    RESERVE,
                    SERVER_TIME,
                    member,
                    NO_TOKENS,
                    UNUSED,
                    UNUSED,
                    MINUTE_MILLIS,
                    MINUTE_LIMIT,
                    REQUESTS,
                    EXACT
                }
                : new String[] {
                    RESERVE,
                    SERVER_TIME,
                    member,
                    NO_TOKENS,
                    UNUSED,
                    UNUSED,
                    MINUTE_MILLIS,
                    MINUTE_LIMIT,
                    REQUESTS,
                    EXACT,
                    DAY_MILLIS,
                    DAY_LIMIT,
                    REQUESTS,
                    EXACT
                };
    }

    /** Returns the script arguments before the member for a {@code redis-benchmark} command line. */
    static String[] oneWindowHead() {
        return new String[] {RESERVE, SERVER_TIME};
    }

    /** Returns the script arguments after the member for a {@code redis-benchmark} command line (one window). */
    static String[] oneWindowTail() {
        return new String[] {NO_TOKENS, UNUSED, UNUSED, MINUTE_MILLIS, MINUTE_LIMIT, REQUESTS, EXACT};
    }
}
