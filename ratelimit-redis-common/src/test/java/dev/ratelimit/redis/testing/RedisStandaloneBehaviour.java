package dev.ratelimit.redis.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.RefusedPort;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import dev.ratelimit.testsupport.redis.RespClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What only a real standalone Redis can show about a store, written once and run by each adapter:
 * subclasses say how to build their store for a host and port.
 */
public abstract class RedisStandaloneBehaviour {

    /** The instant injected clocks start at. */
    protected static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** The server of the whole class; restarted by one test, empty afterwards. */
    @RegisterExtension
    protected static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private final List<AutoCloseable> resources = new ArrayList<>();

    /**
     * Creates a store against a standalone server; register clients with {@link #closeAfterTest}.
     *
     * @param host the host
     * @param port the port; nothing may be listening there
     * @param commandTimeout the driver's command (or socket) timeout
     * @return the store
     */
    protected abstract WindowStore createStore(String host, int port, Duration commandTimeout);

    /**
     * Returns the class whose {@code main} is the {@link Hammer}-based worker of the multi-process
     * test.
     *
     * @return a class with a {@code main(String[])} that calls {@link Hammer#run}
     */
    protected abstract Class<?> hammerMain();

    /**
     * Closes a resource after the running test, in reverse order of registration.
     *
     * @param resource a client or pool
     * @param <T> the resource type
     * @return the resource
     */
    protected final <T extends AutoCloseable> T closeAfterTest(T resource) {
        resources.add(resource);
        return resource;
    }

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        resources.clear();
    }

    private WindowStore store() {
        WindowStore store = createStore(redis.get().host(), redis.get().port(), Duration.ofMillis(500));
        if (store instanceof AutoCloseable closeable) {
            closeAfterTest(closeable);
        }
        return store;
    }

    private static String user(String name) {
        return "rb-" + UUID.randomUUID().toString().substring(0, 8) + "-" + name;
    }

    private static String key(String user, long seconds) {
        return TestKeys.requests(KeyLayout.STANDALONE, user, seconds);
    }

    private static RateLimiter limiter(WindowStore store, MutableClock clock) {
        return SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .failOpen(false)
                .build();
    }

    @Test
    @DisplayName("RB1 a rejection writes nothing and never extends a TTL")
    void rejectionWritesNothing() {
        WindowStore store = store();
        MutableClock clock = MutableClock.at(START);
        RateLimiter limiter = limiter(store, clock);
        String user = user("reject");
        Window minute = new Window("minute", 3, Duration.ofMinutes(1));
        Window hour = new Window("hour", 2, Duration.ofHours(1));
        assertThat(limiter.check(user, List.of(minute, hour)).allowed()).isTrue();
        assertThat(limiter.check(user, List.of(minute, hour)).allowed()).isTrue();
        Object minuteBefore = redis.get().call("ZRANGE", key(user, 60), "0", "-1", "WITHSCORES");
        Object hourBefore = redis.get().call("ZRANGE", key(user, 3600), "0", "-1", "WITHSCORES");
        // Shorten both TTLs far below what the script would set, so any EXPIRE on rejection shows.
        redis.get().call("PEXPIRE", key(user, 60), "30000");
        redis.get().call("PEXPIRE", key(user, 3600), "30000");

        clock.advance(Duration.ofSeconds(1));
        Decision rejected = limiter.check(user, List.of(minute, hour));

        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.window()).isEqualTo(hour);
        assertThat(redis.get().call("ZRANGE", key(user, 60), "0", "-1", "WITHSCORES"))
                .isEqualTo(minuteBefore);
        assertThat(redis.get().call("ZRANGE", key(user, 3600), "0", "-1", "WITHSCORES"))
                .isEqualTo(hourBefore);
        assertThat((Long) redis.get().call("PTTL", key(user, 60)))
                .as("the minute key's TTL after a rejection")
                .isBetween(1L, 30_000L);
        assertThat((Long) redis.get().call("PTTL", key(user, 3600)))
                .as("the hour key's TTL after a rejection")
                .isBetween(1L, 30_000L);
    }

    @Test
    @DisplayName("RB2 every key's TTL covers its window and is at most the window plus one second")
    void ttlBounded() {
        WindowStore store = store();
        RateLimiter limiter = limiter(store, MutableClock.at(START));
        String user = user("ttl");
        List<Window> windows = List.of(
                new Window("second", 5, Duration.ofSeconds(1)),
                new Window("minute", 5, Duration.ofMinutes(1)),
                new Window("day", 5, Duration.ofDays(1)));
        assertThat(limiter.check(user, windows).allowed()).isTrue();
        for (Window window : windows) {
            long ttl = (Long) redis.get().call("PTTL", key(user, window.lengthSeconds()));
            assertThat(ttl)
                    .as(window.name())
                    .isGreaterThan(window.lengthMillis())
                    .isLessThanOrEqualTo(window.lengthMillis() + 1_000);
        }
    }

    @Test
    @DisplayName("RB3 a key is gone after an idle window plus one second (real time)")
    void keyExpires() throws InterruptedException {
        WindowStore store = store();
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).failOpen(false).build();
        String user = user("expiry");
        assertThat(limiter.check(user, 5, Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(redis.get().call("EXISTS", key(user, 1))).isEqualTo(1L);
        Thread.sleep(2_500);
        assertThat(redis.get().call("EXISTS", key(user, 1))).isEqualTo(0L);
    }

    @Test
    @DisplayName("RB4 SCRIPT FLUSH in the middle of concurrent traffic is invisible to callers")
    void scriptFlushInvisible() throws Exception {
        WindowStore store = store();
        RateLimiter limiter = limiter(store, MutableClock.at(START));
        String user = user("flush");
        int threads = 4;
        int perThread = 60;
        int limit = 150;
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger flushes = new AtomicInteger();
        Thread flusher = new Thread(() -> {
            try (RespClient raw = redis.get().connect()) {
                while (running.get()) {
                    raw.call("SCRIPT", "FLUSH");
                    flushes.incrementAndGet();
                    Thread.sleep(2);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            int allowed = Hammer.allowedOf(limiter, user, limit, threads, perThread, flusher::start);
            assertThat(allowed).isEqualTo(limit);
            assertThat(flushes.get()).isPositive();
        } finally {
            running.set(false);
            flusher.join(10_000);
        }
    }

    @Test
    @DisplayName("RB5 one check is one EVALSHA from the client; the script runs ZREMRANGEBYSCORE, ZCARD, ZADD, EXPIRE")
    void oneEvalshaPerCheck() {
        WindowStore store = store();
        RateLimiter limiter = limiter(store, MutableClock.at(START));
        String user = user("monitor");
        List<Window> windows =
                List.of(new Window("minute", 5, Duration.ofMinutes(1)), new Window("hour", 50, Duration.ofHours(1)));
        assertThat(limiter.check(user("warm-up"), windows).allowed()).isTrue(); // connects and caches the script
        List<String> lines = monitored(
                () -> assertThat(limiter.check(user, windows).allowed()).isTrue());
        List<String> fromClients =
                lines.stream().filter(l -> !l.contains(" lua]")).toList();
        List<String> fromScript =
                lines.stream().filter(l -> l.contains(" lua]")).toList();
        assertThat(fromClients).hasSize(1);
        assertThat(fromClients.get(0)).containsIgnoringCase("\"EVALSHA\"").contains(SlidingWindowScript.sha1());
        assertThat(fromClients.get(0)).contains(key(user, 60)).contains(key(user, 3600));
        for (String command : List.of("ZREMRANGEBYSCORE", "ZCARD", "ZADD", "EXPIRE")) {
            assertThat(fromScript)
                    .as(command + " inside the script")
                    .filteredOn(l -> l.toUpperCase(java.util.Locale.ROOT).contains("\"" + command + "\""))
                    .hasSize(2);
        }
    }

    /**
     * Runs an action with {@code MONITOR} on a second connection and returns the lines Redis logged
     * meanwhile, up to a marker sent after it (each line quotes its command and arguments; a command
     * a script ran says {@code lua]}).
     */
    private static List<String> monitored(Runnable action) {
        String marker = "end-of-action-" + UUID.randomUUID();
        List<String> lines = new ArrayList<>();
        try (RespClient monitor = redis.get().connect()) {
            assertThat(monitor.call("MONITOR")).isEqualTo("OK");
            action.run();
            redis.get().call("ECHO", marker);
            while (true) {
                String line = String.valueOf(monitor.read());
                if (line.contains(marker)) {
                    break;
                }
                lines.add(line);
            }
        }
        return lines;
    }

    @Test
    @DisplayName("RB10 once a shorter window rejects, the script runs no command on a longer window's keys (MONITOR)")
    void rejectionLeavesLongerWindowsAlone() {
        WindowStore store = store();
        RateLimiter limiter = limiter(store, MutableClock.at(START));
        KeySpace keys = KeySpace.of(KeyLayout.STANDALONE);
        Window minute = new Window("minute", 2, Duration.ofMinutes(1));
        Window day = new Window("day", 100, Duration.ofDays(1));
        Window minuteTokens = Window.tokens("minute tokens", 10_000, Duration.ofMinutes(1));
        Window dayTokens = Window.tokens("day tokens", 100_000, Duration.ofDays(1));
        Window minuteAtSecond =
                new Window("minute", 2, Duration.ofMinutes(1), Window.Unit.REQUESTS, Duration.ofSeconds(1));
        Window dayAtMinute = new Window("day", 100, Duration.ofDays(1), Window.Unit.REQUESTS, Duration.ofMinutes(1));
        // the fast path (exact request windows), then the general one: exact tokens, then precision rings
        List<List<Window>> cases = List.of(
                List.of(minute, day), List.of(minute, minuteTokens, dayTokens), List.of(minuteAtSecond, dayAtMinute));
        for (List<Window> windows : cases) {
            String user = user("skip");
            Tier tier = new Tier("rb10", windows);
            for (int i = 0; i < 2; i++) {
                assertThat(limiter.reserve(user, tier, 100).decision().allowed())
                        .isTrue();
            }
            Decision[] rejected = new Decision[1];
            List<String> script = monitored(
                            () -> rejected[0] = limiter.reserve(user, tier, 100).decision())
                    .stream()
                    .filter(l -> l.contains(" lua]"))
                    .toList();
            assertThat(rejected[0].allowed())
                    .as("%s: the third reservation", windows)
                    .isFalse();
            assertThat(rejected[0].window())
                    .as("%s: the minute rejects", windows)
                    .isEqualTo(windows.get(0));
            StoreRequest.Scope scope = StoreRequest.Scope.user(user, windows);
            assertThat(script)
                    .as("%s: the script reads the minute window that rejects", windows)
                    .anyMatch(l -> l.contains(keys.key(scope, windows.get(0))));
            for (Window window : windows) {
                if (window.length().compareTo(Duration.ofMinutes(1)) > 0) {
                    List<String> longer = new ArrayList<>(List.of(keys.key(scope, window)));
                    if (KeySpace.hasSumKey(window)) {
                        longer.add(keys.sumKey(scope, window));
                    }
                    for (String key : longer) {
                        assertThat(script)
                                .as("%s: commands on %s, longer than the window that rejected", windows, key)
                                .noneMatch(l -> l.contains("\"" + key + "\""));
                    }
                    assertThat(rejected[0].usage())
                            .as("%s: %s was not evaluated, so it is absent from the usage", windows, window)
                            .noneMatch(u -> u.window().equals(window));
                }
            }
        }
    }

    @Test
    @DisplayName("RB6 Redis stopped mid-run: checks fail with RateLimiterUnavailableException, then recover")
    void outageAndRecovery() throws InterruptedException {
        WindowStore store = store();
        StoreRequest request = new StoreRequest(
                user("outage"), List.of(new Window("minute", 1_000, Duration.ofMinutes(1))), 1, START.toEpochMilli());
        for (int i = 0; i < 5; i++) {
            assertThat(store.evaluate(request).isAllowed()).isTrue();
        }
        redis.get().stop();
        try {
            for (int i = 0; i < 3; i++) {
                // A bound, not a speed claim: without fail-fast settings these calls would hang for a minute.
                assertTimeoutPreemptively(
                        Duration.ofSeconds(5),
                        () -> assertThatThrownBy(() -> store.evaluate(request))
                                .isInstanceOf(RateLimiterUnavailableException.class));
                assertTimeoutPreemptively(
                        Duration.ofSeconds(5),
                        () -> assertThatThrownBy(() -> store.evaluateAsync(request)
                                        .toCompletableFuture()
                                        .join())
                                .hasCauseInstanceOf(RateLimiterUnavailableException.class));
            }
        } finally {
            redis.get().restart();
        }
        Evaluation recovered = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (recovered == null && System.nanoTime() < deadline) {
            try {
                recovered = store.evaluate(request);
            } catch (RateLimiterUnavailableException e) {
                Thread.sleep(100);
            }
        }
        assertThat(recovered).as("a check succeeds after the restart").isNotNull();
        assertThat(recovered.isAllowed()).isTrue();
        assertThat(recovered.used(0)).isEqualTo(1); // the restarted server is empty
    }

    @Test
    @DisplayName("RB7 creating a store needs no running Redis; checks then fail fast")
    void createWithoutRedis() {
        RefusedPort closed = RefusedPort.open();
        closeAfterTest(closed);
        WindowStore store = createStore(closed.host(), closed.port(), Duration.ofMillis(300));
        if (store instanceof AutoCloseable closeable) {
            closeAfterTest(closeable);
        }
        StoreRequest request =
                new StoreRequest("nobody", List.of(Window.of(5, Duration.ofMinutes(1))), 1, StoreRequest.STORE_TIME);
        assertTimeoutPreemptively(
                Duration.ofSeconds(10),
                () -> assertThatThrownBy(() -> store.evaluate(request))
                        .isInstanceOf(RateLimiterUnavailableException.class));
    }

    @Test
    @DisplayName("RB11 without a clock a calendar window counts the period holding the server's TIME, retries"
            + " point at its end, and an overrun settled later counts in it")
    void calendarWindowOnTheServersTime() {
        WindowStore store = store();
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).failOpen(false).build();
        Window day = Window.calendar("spend-day", 10, Window.Unit.USD_MICROS, CalendarPeriod.DAY);
        Tier tier = Tier.of("rb11", day);
        String user = user("calendar");
        long before = serverMillis();
        Reservation reservation = limiter.reserve(user, tier, Amounts.of(Window.Unit.USD_MICROS, 6), List.of());
        assertThat(reservation.decision().allowed()).isTrue();
        reservation
                .commit(Amounts.of(Window.Unit.USD_MICROS, 9))
                .toCompletableFuture()
                .join();
        Decision full = limiter.reserve(user, tier, Amounts.of(Window.Unit.USD_MICROS, 2), List.of())
                .decision();
        long after = serverMillis();
        long end = day.calendar().endMillis(before);
        assumeTrue(end == day.calendar().endMillis(after), "the test ran across midnight UTC");
        assertThat(full.allowed())
                .as("the $9 settled counts in the day it was reserved in")
                .isFalse();
        assertThat(full.retryAfter().toMillis())
                .as("the retry points at the next midnight UTC on the server's clock")
                .isBetween(end - after, end - before);
    }

    @Test
    @DisplayName("RB12 a ring written in the layout before the header held its newest step's weight is read as it"
            + " was: its sum, its oldest step and its newest step's weight")
    void ringOfTheLayoutBefore() {
        // the layout before: a 24-byte header (sum, lo, hi), every step's weight in its slot
        ringOfAnEarlierLayout(
                "rb12",
                "local slots, lo, hi = 1441, tonumber(ARGV[1]), tonumber(ARGV[2])\n"
                        + "redis.call('SETRANGE', KEYS[1], 24 + 16 * slots - 1, '\\0')\n"
                        + "redis.call('SETRANGE', KEYS[1], 0, struct.pack('<ddd', 9, lo, hi))\n"
                        + "redis.call('SETRANGE', KEYS[1], 24 + 16 * (lo % slots), struct.pack('<dd', lo, 7))\n"
                        + "redis.call('SETRANGE', KEYS[1], 24 + 16 * (hi % slots), struct.pack('<dd', hi, 2))\n"
                        + "redis.call('EXPIRE', KEYS[1], 90000)\n"
                        + "return 1",
                key -> {});
    }

    @Test
    @DisplayName("RB13 a ring written in the 40-byte layout before (its header held step hi's weight) is read as it"
            + " was, and its header is rewritten in the current layout (the sum and the weight below step hi) by the"
            + " next reservation")
    void ringOfTheFortyByteLayoutBefore() {
        long current = START.toEpochMilli() / 60_000;
        // the layout before: a 40-byte header (sum, lo, hi, -1, the weight of step hi), the others' weights in
        // their slots (step hi's slot holds an older step)
        ringOfAnEarlierLayout(
                "rb13",
                "local slots, lo, hi = 1441, tonumber(ARGV[1]), tonumber(ARGV[2])\n"
                        + "redis.call('SETRANGE', KEYS[1], 40 + 16 * slots - 1, '\\0')\n"
                        + "redis.call('SETRANGE', KEYS[1], 0, struct.pack('<ddddd', 9, lo, hi, -1, 2))\n"
                        + "redis.call('SETRANGE', KEYS[1], 40 + 16 * (lo % slots), struct.pack('<dd', lo, 7))\n"
                        + "redis.call('SETRANGE', KEYS[1], 40 + 16 * (hi % slots), struct.pack('<dd', hi - slots, 5))\n"
                        + "redis.call('EXPIRE', KEYS[1], 90000)\n"
                        + "return 1",
                key -> assertThat(redis.get()
                                .call(
                                        "EVAL",
                                        "local sum, lo, hi, mark, base = struct.unpack('<ddddd', redis.call('GETRANGE',"
                                                + " KEYS[1], 0, 39))\nreturn {sum, base, lo, hi, mark}",
                                        "1",
                                        key))
                        .as("the header in the current layout: sum 10, 9 below the newest step (which holds the 1)")
                        .isEqualTo(List.of(10L, 9L, current - 10, current, -2L)));
    }

    /**
     * Writes a day's tokens ring (1-minute steps, limit 10) in an earlier layout with {@code writer}, a script
     * given the key and two steps, lo (10 minutes ago) holding 7 and hi (5 minutes ago) holding 2; checks that the
     * limiter reads it as it was, running {@code afterFirst} with the key after the first reservation.
     */
    private void ringOfAnEarlierLayout(String tierName, String writer, java.util.function.Consumer<String> afterFirst) {
        WindowStore store = store();
        MutableClock clock = MutableClock.at(START);
        RateLimiter limiter = limiter(store, clock);
        Window window = Window.tokens("tpd", 10, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
        Tier tier = Tier.of(tierName, window);
        String user = user("ring-" + tierName);
        String key = KeySpace.of(KeyLayout.STANDALONE).key(StoreRequest.Scope.user(user, List.of(window)), window);
        long step = 60_000;
        long current = START.toEpochMilli() / step;
        long lo = current - 10;
        long hi = current - 5;
        redis.get().call("EVAL", writer, "1", key, Long.toString(lo), Long.toString(hi));
        Decision one = limiter.reserve(user, tier, Amounts.tokens(1), List.of()).decision();
        assertThat(one.allowed()).as("9 of 10 held, 1 more fits").isTrue();
        assertThat(one.usage().get(0).used()).isEqualTo(10);
        afterFirst.accept(key);
        Decision nine =
                limiter.reserve(user, tier, Amounts.tokens(9), List.of()).decision();
        assertThat(nine.allowed()).isFalse();
        assertThat(nine.retryAfter().toMillis())
                .as("9 leave when the newest old step (weight 2, after the oldest's 7) leaves")
                .isEqualTo((hi + 1) * step + Duration.ofDays(1).toMillis() - START.toEpochMilli());
        clock.advance(Duration.ofMillis((lo + 1) * step + Duration.ofDays(1).toMillis() - START.toEpochMilli()));
        Decision later =
                limiter.reserve(user, tier, Amounts.tokens(5), List.of()).decision();
        assertThat(later.allowed()).as("the oldest step's 7 have left: 3 held").isTrue();
        assertThat(later.usage().get(0).used()).isEqualTo(8);
    }

    private static long serverMillis() {
        List<?> time = (List<?>) redis.get().call("TIME");
        return Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
    }

    @Test
    @DisplayName("RB8 user ids with colons, braces, spaces, Unicode or 10 kB never share a budget")
    void weirdIdsAreDistinct() {
        WindowStore store = store();
        RateLimiter limiter = limiter(store, MutableClock.at(START));
        String base = user("w");
        List<String> ids = weirdIds(base);
        Set<String> keys = new HashSet<>();
        for (String id : ids) {
            assertThat(limiter.check(id, 1, Duration.ofMinutes(1)).allowed())
                    .as(id)
                    .isTrue();
            keys.add(key(id, 60));
        }
        for (String id : ids) {
            assertThat(limiter.check(id, 1, Duration.ofMinutes(1)).allowed())
                    .as(id)
                    .isFalse();
        }
        assertThat(keys).hasSize(ids.size());
        for (String key : keys) {
            assertThat(redis.get().call("ZCARD", key)).as(key).isEqualTo(1L);
        }
    }

    @Test
    @DisplayName("RB9 four JVM processes hammering one key allow exactly the limit in total")
    void fourProcesses() throws Exception {
        String user = user("processes");
        int limit = 100;
        List<Process> processes = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                processes.add(new ProcessBuilder(
                                javaBinary(),
                                "-Xmx128m",
                                "-XX:TieredStopAtLevel=1",
                                "-cp",
                                System.getProperty("java.class.path"),
                                hammerMain().getName(),
                                RedisServer.HOST,
                                Integer.toString(redis.get().port()),
                                user,
                                Integer.toString(limit),
                                "4",
                                "40")
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start());
            }
            List<BufferedReader> outputs = new ArrayList<>();
            for (Process process : processes) {
                BufferedReader output =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                outputs.add(output);
                assertThat(output.readLine()).isEqualTo(Hammer.READY);
            }
            for (Process process : processes) {
                Writer go = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
                go.write(Hammer.GO + "\n");
                go.flush();
            }
            int allowed = 0;
            int attempts = 0;
            for (BufferedReader output : outputs) {
                String[] result = output.readLine().split(" ");
                assertThat(result[0]).isEqualTo(Hammer.RESULT);
                allowed += Integer.parseInt(result[1]);
                attempts += Integer.parseInt(result[2]);
            }
            for (Process process : processes) {
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(process.exitValue()).isZero();
            }
            assertThat(attempts).isEqualTo(4 * 4 * 40);
            assertThat(allowed).isEqualTo(limit);
            assertThat(redis.get().call("ZCARD", key(user, 60))).isEqualTo((long) limit);
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    /**
     * Returns user ids that stress the key codec, all starting with {@code base}.
     *
     * @param base a prefix unique to the test
     * @return the ids
     */
    public static List<String> weirdIds(String base) {
        return List.of(
                base,
                base + ":60",
                base + ":1:60",
                base + "{a}b}",
                base + "{a}",
                base + "{a",
                base + "a}",
                base + "}",
                "~" + base,
                "{" + base + "}",
                base + " with spaces ",
                base + "\t\n",
                base + "ユーザー✓😀",
                base + "\uD800",
                base + "\uDC00",
                base + "x".repeat(10_240));
    }

    private static String javaBinary() {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        return java.toString();
    }
}
