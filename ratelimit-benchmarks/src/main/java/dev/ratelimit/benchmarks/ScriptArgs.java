package dev.ratelimit.benchmarks;

/**
 * The keys and arguments of the sliding-window script for the benchmark's windows, spelled exactly
 * as the stores spell them, for the plain {@code EVALSHA} ceilings.
 */
final class ScriptArgs {

    private static final String SERVER_TIME = "";
    private static final String ONE_PERMIT = "1";
    private static final String MINUTE_MILLIS = Long.toString(Workload.MINUTE.lengthMillis());
    private static final String MINUTE_LIMIT = Integer.toString(Workload.MINUTE.limit());
    private static final String DAY_MILLIS = Long.toString(Workload.DAY.lengthMillis());
    private static final String DAY_LIMIT = Integer.toString(Workload.DAY.limit());

    private ScriptArgs() {}

    static String[] keys(int user, int windows) {
        return windows == 1
                ? new String[] {Workload.minuteKey(user)}
                : new String[] {Workload.minuteKey(user), Workload.dayKey(user)};
    }

    static String[] args(String member, int windows) {
        return windows == 1
                ? new String[] {SERVER_TIME, ONE_PERMIT, member, MINUTE_MILLIS, MINUTE_LIMIT}
                : new String[] {SERVER_TIME, ONE_PERMIT, member, MINUTE_MILLIS, MINUTE_LIMIT, DAY_MILLIS, DAY_LIMIT};
    }

    /** Returns the script arguments for a {@code redis-benchmark} command line (one window). */
    static String[] oneWindowTail() {
        return new String[] {MINUTE_MILLIS, MINUTE_LIMIT};
    }
}
