package dev.ratelimit.testkit;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The conformance kit: the executable contract of {@link WindowStore}, run through {@link
 * SlidingWindowRateLimiter}. Every store, ours and third parties', passes it by extending this
 * class:
 *
 * <pre>{@code
 * public class MyStoreConformanceTest extends WindowStoreConformanceKit {
 *     @Override
 *     protected WindowStore createStore() {
 *         return MyStore.create(...);
 *     }
 * }
 * }</pre>
 *
 * <p>Each section of rules is an interface of default {@code @Test} methods in its own file ({@code
 * BasicRules}, {@code SlidingWindowRules}, …), composed here as a {@link Nested} class; each display
 * name starts with the rule id documented in {@code CONFORMANCE.md}. Time moves through a {@link
 * MutableClock} injected into the limiter, so no test sleeps except where real expiry is the point
 * (and then only when the store declares {@link #supportsRealExpiry()}). Every test uses user ids
 * unique to it, so one server can serve the whole run without being flushed.
 */
public abstract class WindowStoreConformanceKit {

    /** The instant the injected clock starts at; a whole minute, so fixed windows would align. */
    protected static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** The store under test, created before each test. */
    protected WindowStore store;

    /** The clock injected into {@link #limiter}. */
    protected MutableClock clock;

    /** A limiter over {@link #store} on {@link #clock}, failing closed so store errors surface. */
    protected RateLimiter limiter;

    private String prefix;

    /**
     * Creates the store under test; called before every test.
     *
     * @return a store, connected to whatever backend it needs
     */
    protected abstract WindowStore createStore();

    /**
     * Releases a store after a test; the default closes it when it is {@link AutoCloseable}.
     *
     * @param store the store created for the test
     * @throws Exception if closing fails
     */
    protected void close(WindowStore store) throws Exception {
        if (store instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

    /**
     * Declares that the store drops an idle user's state after its longest window plus one second
     * of real time; rules of section E then run and call {@link #holdsStateFor}.
     *
     * @return {@code true} when the store expires idle state in real time
     */
    protected boolean supportsRealExpiry() {
        return false;
    }

    /**
     * Tells whether the store still holds state for a user's window; used only when {@link
     * #supportsRealExpiry()} is {@code true}.
     *
     * @param store the store
     * @param userId the user
     * @param window the window length
     * @return {@code true} while the store retains that state
     */
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        throw new UnsupportedOperationException("override holdsStateFor when supportsRealExpiry() is true");
    }

    /**
     * Declares that {@link #stateSize} can measure what the store keeps for one user's window; rule
     * P4 (state stays flat as traffic grows) then runs.
     *
     * @return {@code true} when the store reports its state size
     */
    protected boolean supportsStateSize() {
        return false;
    }

    /**
     * Returns the size of what the store keeps for one window of a user, in any unit that grows
     * with what is stored (bytes for Redis's {@code MEMORY USAGE}); used only when {@link
     * #supportsStateSize()} is {@code true}.
     *
     * @param store the store
     * @param userId the user
     * @param window the window
     * @return the size, positive while state is held
     */
    protected long stateSize(WindowStore store, String userId, Window window) {
        throw new UnsupportedOperationException("override stateSize when supportsStateSize() is true");
    }

    /**
     * Declares that the store holds concurrency leases ({@code StoreRequest.Lease}, {@code
     * WindowStore.renewLease}, {@code leasesHeld}); rules of section Q then run.
     *
     * @return {@code true} when the store takes leases
     */
    protected boolean supportsLeases() {
        return false;
    }

    /**
     * Declares that the store takes budget leases ({@code WindowStore.takeLease}, {@code
     * returnLease}, and {@code exchangeLease}, both in one step, whose default makes the two calls);
     * rules of section F then run.
     *
     * @return {@code true} when the store takes budget leases
     */
    protected boolean supportsBudgetLeases() {
        return false;
    }

    /**
     * Returns the number of concurrent trials the concurrency rules repeat; lower it only for very
     * slow backends.
     *
     * @return the number of trials, at least 1
     */
    protected int concurrencyTrials() {
        return 5;
    }

    @BeforeEach
    void createLimiter() {
        store = createStore();
        clock = MutableClock.at(START);
        limiter = SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .failOpen(false)
                .build();
        prefix = "kit-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    }

    @AfterEach
    void closeStore() throws Exception {
        close(store);
    }

    /**
     * Fails a test run that does not use the JUnit Platform, so that it cannot pass with none of the
     * kit's tests run. Surefire before 2.22 (the default of Maven 3.8 and older is 2.12.4) does not
     * run JUnit 5 tests: without JUnit 4 on the class path it falls back to running the public
     * {@code test*()} methods of public {@code *Test} classes that have a public no-argument
     * constructor, and this is the only such method the kit has; so declare the subclass {@code
     * public}. The JUnit Platform ignores it, since it is not a {@code @Test} method.
     *
     * @throws AssertionError always, explaining how to run the kit
     */
    public final void testRunWithTheJUnitPlatform() {
        throw new AssertionError("This run does not use the JUnit Platform, so none of the "
                + getClass().getSimpleName()
                + " conformance tests ran. The kit's tests are JUnit 5 tests: run them with"
                + " maven-surefire-plugin 2.22.0 or later (3.x recommended; Maven 3.8 and older default to"
                + " 2.12.4), or Gradle's useJUnitPlatform(). A full run reports 93 tests; see CONFORMANCE.md.");
    }

    /**
     * Returns a user id unique to the running test.
     *
     * @param name a readable suffix
     * @return the user id
     */
    protected String user(String name) {
        return prefix + name;
    }

    /** A section bound to the kit instance running the test; the sections below extend it. */
    abstract class Section implements ConformanceSection {
        @Override
        public WindowStoreConformanceKit kit() {
            return WindowStoreConformanceKit.this;
        }
    }

    @Nested
    @DisplayName("B: basics")
    class Basics extends Section implements BasicRules {}

    @Nested
    @DisplayName("S: sliding window")
    class Sliding extends Section implements SlidingWindowRules {}

    @Nested
    @DisplayName("R: retry-after")
    class RetryAfter extends Section implements RetryAfterRules {}

    @Nested
    @DisplayName("M: multiple windows")
    class MultipleWindows extends Section implements MultipleWindowRules {}

    @Nested
    @DisplayName("C: concurrency")
    class Concurrency extends Section implements ConcurrencyRules {}

    @Nested
    @DisplayName("T: store time")
    class StoreTime extends Section implements StoreTimeRules {}

    @Nested
    @DisplayName("W: token windows")
    class Weighted extends Section implements WeightedRules {}

    @Nested
    @DisplayName("A: windows of any unit")
    class Amounts extends Section implements AmountRules {}

    @Nested
    @DisplayName("X: settling reservations")
    class Settling extends Section implements SettlementRules {}

    @Nested
    @DisplayName("G: shared budgets")
    class SharedScopes extends Section implements SharedScopeRules {}

    @Nested
    @DisplayName("P: precision windows")
    class Precision extends Section implements PrecisionRules {}

    @Nested
    @DisplayName("D: calendar windows")
    class Calendar extends Section implements CalendarRules {}

    @Nested
    @DisplayName("H: shadow windows")
    class Shadow extends Section implements ShadowRules {}

    @Nested
    @DisplayName("L: large limits")
    class LargeLimits extends Section implements LargeLimitRules {}

    @Nested
    @DisplayName("U: usage without charging")
    class Usage extends Section implements UsageRules {}

    @Nested
    @DisplayName("Q: concurrency leases (optional)")
    class Leases extends Section implements LeaseRules {}

    @Nested
    @DisplayName("F: leased shares of shared budgets (optional)")
    class BudgetLeases extends Section implements BudgetLeaseRules {}

    @Nested
    @DisplayName("E: real expiry (optional)")
    class RealExpiry extends Section implements RealExpiryRules {}
}
