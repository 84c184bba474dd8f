package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one workload every contender runs: the same users, the same limits, the same key choice.
 *
 * <p>Limits are far above what the benchmark can reach within a trial (a trial starts on an empty
 * Redis), so nearly every decision is an allowed one that records the request: the benchmark
 * measures the full cost of a decision, not the cheaper path of a rejection.
 */
final class Workload {

    /** The number of distinct users of the spread workload. */
    static final int USERS = 10_000;

    /** The per-minute limit of every contender. */
    static final int LIMIT_PER_MINUTE = 1_000_000;

    /** The per-day limit of the two-window (tier) checks. */
    static final int LIMIT_PER_DAY = 100_000_000;

    /** The per-minute window. */
    static final Window MINUTE = new Window("minute", LIMIT_PER_MINUTE, Duration.ofMinutes(1));

    /** The per-day window. */
    static final Window DAY = new Window("day", LIMIT_PER_DAY, Duration.ofDays(1));

    /** A one-window check. */
    static final List<Window> ONE_WINDOW = List.of(MINUTE);

    /** A two-window (tier) check: minute and day, all or nothing. */
    static final List<Window> TWO_WINDOWS = List.of(MINUTE, DAY);

    /** The value of the {@code keys} parameter that sends every decision to one user. */
    static final String CONTENDED = "contended";

    /** The value of the {@code keys} parameter that spreads decisions uniformly over {@link #USERS} users. */
    static final String SPREAD = "spread";

    private static final String[] USER_IDS = new String[USERS];
    private static final String[] MINUTE_KEYS = new String[USERS];
    private static final String[] DAY_KEYS = new String[USERS];

    static {
        for (int i = 0; i < USERS; i++) {
            USER_IDS[i] = "tenant-" + i;
            MINUTE_KEYS[i] = key(USER_IDS[i], MINUTE);
            DAY_KEYS[i] = key(USER_IDS[i], DAY);
        }
    }

    private Workload() {}

    private static String key(String user, Window window) {
        return KeySpace.of(KeyLayout.STANDALONE).key(StoreRequest.Scope.user(user, List.of(window)), window);
    }

    /**
     * Returns the index of the next user.
     *
     * @param contended whether every decision goes to the one contended user
     * @return an index in {@code [0, USERS)}
     */
    static int next(boolean contended) {
        return contended ? 0 : ThreadLocalRandom.current().nextInt(USERS);
    }

    static boolean contended(String keys) {
        if (CONTENDED.equals(keys)) {
            return true;
        }
        if (SPREAD.equals(keys)) {
            return false;
        }
        throw new IllegalArgumentException("keys must be '" + CONTENDED + "' or '" + SPREAD + "', was " + keys);
    }

    static List<Window> windows(int count) {
        if (count == 1) {
            return ONE_WINDOW;
        }
        if (count == 2) {
            return TWO_WINDOWS;
        }
        throw new IllegalArgumentException("windows must be 1 or 2, was " + count);
    }

    static String user(int index) {
        return USER_IDS[index];
    }

    static String minuteKey(int index) {
        return MINUTE_KEYS[index];
    }

    static String dayKey(int index) {
        return DAY_KEYS[index];
    }
}
