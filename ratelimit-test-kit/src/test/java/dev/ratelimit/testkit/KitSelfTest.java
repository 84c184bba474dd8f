package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import com.example.store.ExampleStore;
import com.example.store.ExampleStoreConformanceTest;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/** The kit proves itself: it passes a correct store and catches each deliberate defect by rule. */
class KitSelfTest {

    /** The tests of a full run, as CONFORMANCE.md, docs/writing-a-store.md and the kit's guard state it. */
    private static final int FULL_RUN = 93;

    /** A row of CONFORMANCE.md's table of counts: five declarations, tests run and passed, skipped ones. */
    private static final Pattern COUNT_ROW = Pattern.compile(
            "^\\| `(true|false)` \\| `(true|false)` \\| `(true|false)` \\| `(true|false)` \\| `(true|false)` \\| (\\d+) \\| (none|\\d+: [A-Z0-9, ]+) \\|",
            Pattern.MULTILINE);

    @Test
    @DisplayName("a correct store passes every rule, and the optional ones are reported as skipped")
    void correctStorePasses() {
        Events tests = run(Correct.class);
        assertThat(failures(tests)).isEmpty();
        assertThat(tests.succeeded().count()).isEqualTo(FULL_RUN - 21);
        assertThat(ruleIds(tests.aborted()))
                .as("E1 needs real expiry, P4 state sizes, Q leases and F budget leases, which a store declaring"
                        + " nothing does not run; G0 is for stores that cannot evaluate several scopes atomically")
                .containsExactlyInAnyOrder(
                        "G0", "E1", "P4", "Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "F1", "F2", "F3", "F4", "F5", "F6",
                        "F7", "F8", "F9", "F10", "F11");
    }

    @Test
    @DisplayName("a correct store with leases passes section Q")
    void correctLeasesPass() {
        Events tests = run(Leasing.class);
        assertThat(failures(tests)).isEmpty();
        assertThat(ruleIds(tests.succeeded())).contains("Q1", "Q2", "Q3", "Q4", "Q5", "Q7");
    }

    @Test
    @DisplayName("a store that releases leases by count, so a second release frees another holder's slot, fails Q2")
    void releasingByCountFails() {
        Map<String, String> failed = failures(run(ReleasesByCount.class));
        assertThat(failed).containsOnlyKeys("Q2");
        assertThat(failed.get("Q2")).contains("[Q2] a released three times: b still holds its slot");
    }

    @Test
    @DisplayName("a store whose leases never pass fails Q3 and Q4")
    void leasesThatNeverPassFail() {
        Map<String, String> failed = failures(run(NeverExpires.class));
        assertThat(failed).containsOnlyKeys("Q3", "Q4");
        assertThat(failed.get("Q3")).contains("[Q3] 10 s later its lease has passed");
    }

    @Test
    @DisplayName("a correct store with budget leases passes section F")
    void correctBudgetLeasesPass() {
        Events tests = run(BudgetLeasing.class);
        assertThat(failures(tests)).isEmpty();
        assertThat(ruleIds(tests.succeeded()))
                .contains("F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11");
    }

    @Test
    @DisplayName("a store whose exchange takes the next lease before it returns the first fails F10")
    void exchangesThatTakeFirstFail() {
        Map<String, String> failed = failures(run(TakesBeforeReturning.class));
        assertThat(failed).containsKey("F10");
        assertThat(failed.get("F10")).contains("[F10] the budget is all leased to a, yet b fits");
    }

    @Test
    @DisplayName("a store that stamps a budget lease at its taking, not its end, fails F1 and F8")
    void leasesStampedAtTheirTakingFail() {
        Map<String, String> failed = failures(run(StampedAtTaking.class));
        assertThat(failed).containsKeys("F1", "F8");
        assertThat(failed.get("F1")).contains("[F1] still counted a window's length after its taking");
    }

    @Test
    @DisplayName("CONFORMANCE.md's table of counts adds up to a full run, and its row of a new store is the run above")
    void conformanceCountsAreTrue() throws IOException {
        String conformance = RepositoryFiles.read("CONFORMANCE.md");
        assertThat(conformance)
                .contains("required, " + FULL_RUN + " tests", "A full run reports " + FULL_RUN + " tests");
        assertThat(RepositoryFiles.read("docs/writing-a-store.md"))
                .contains("A full run is **" + FULL_RUN + " tests**");
        Matcher row = COUNT_ROW.matcher(conformance);
        List<String> rows = new ArrayList<>();
        while (row.find()) {
            String skipped = row.group(7);
            int skippedCount = skipped.equals("none") ? 0 : skipped.split(",").length;
            assertThat(Integer.parseInt(row.group(6)) + skippedCount)
                    .as("run and pass plus skipped in the row %s", row.group())
                    .isEqualTo(FULL_RUN);
            assertThat(skipped).as("the skipped count of %s", row.group()).matches("none|" + skippedCount + ": .*");
            rows.add(row.group(1) + " " + row.group(2) + " " + row.group(3) + " " + row.group(4) + " " + row.group(5)
                    + " " + row.group(6) + " " + skipped);
        }
        assertThat(rows)
                .as("rows of CONFORMANCE.md's table of counts; a new store's is what correctStorePasses runs")
                .hasSize(5)
                .contains("true false false false false " + (FULL_RUN - 21)
                        + " 21: G0, E1, P4, Q1, Q2, Q3, Q4, Q5, Q6, Q7, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11");
    }

    @Test
    @DisplayName("a full run is the tests CONFORMANCE.md promises; outside the JUnit Platform it fails instead")
    void runOutsideTheJUnitPlatformFails() throws NoSuchMethodException {
        Events tests = run(Correct.class);
        assertThat(tests.started().count()).as("tests of a full run").isEqualTo(FULL_RUN);
        assertThat(tests.list())
                .as("the JUnit Platform does not run the guard")
                .noneMatch(event -> event.getTestDescriptor().getDisplayName().startsWith("testRun"));

        // Surefire 2.12's fallback provider runs every public no-argument test*() method it finds.
        assertThat(Arrays.stream(Correct.class.getMethods())
                        .filter(method -> method.getName().startsWith("test") && method.getParameterCount() == 0)
                        .map(Method::getName))
                .containsExactly("testRunWithTheJUnitPlatform");
        Method guard = Correct.class.getMethod("testRunWithTheJUnitPlatform");
        assertThat(guard.getReturnType()).isEqualTo(void.class);
        assertThatThrownBy(() -> new Correct().testRunWithTheJUnitPlatform())
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("none of the Correct conformance tests ran")
                .hasMessageContaining("maven-surefire-plugin 2.22.0 or later")
                .hasMessageContaining("A full run reports " + FULL_RUN + " tests");
    }

    @Test
    @DisplayName(
            "a store that charges the windows checked before the one that rejects fails M1, M5, C4, W1, W4, A1, A9, G1, G3,"
                    + " G6, P5, D5")
    void chargingOnRejectionFails() {
        Map<String, String> failed = failures(run(ChargesOnRejection.class));
        assertThat(failed).containsOnlyKeys("M1", "M5", "C4", "W1", "W4", "A1", "A9", "G1", "G3", "G6", "P5", "D5");
        assertThat(failed.get("M1")).contains("[M1]", "records in the minute window when the day window rejects");
    }

    @Test
    @DisplayName("a store that settles tokens but leaves every other unit at its estimate fails A3, A7, A8 and X9")
    void settlingTokensOnlyFails() {
        Map<String, String> failed = failures(run(SettlesTokensOnly.class));
        assertThat(failed).containsOnlyKeys("A3", "A7", "A8", "X9");
        assertThat(failed.get("A3")).contains("[A3] micro-dollars settled up to 700,000");
    }

    @Test
    @DisplayName("a store that charges the user when a shared budget rejects fails G1, G3, G6 and A9")
    void chargingTheUserOnSharedRejectionFails() {
        Map<String, String> failed = failures(run(ChargesUserWhenSharedRejects.class));
        assertThat(failed).containsOnlyKeys("G1", "G3", "G6", "A9");
        assertThat(failed.get("G1")).contains("[G1] bob's own window holds his allowed request and this check");
    }

    @Test
    @DisplayName("a store that reports the longer windows after a rejection, which it should leave alone, fails M7")
    void reportingLongerWindowsOnRejectionFails() {
        Map<String, String> failed = failures(run(ReportsLongerWindowsOnRejection.class));
        assertThat(failed).containsOnlyKeys("M7");
        assertThat(failed.get("M7")).contains("[M7] the minute window rejected: the hour and day windows are not");
    }

    @Test
    @DisplayName("a fixed-window store fails the boundary straddle S1")
    void fixedWindowFails() {
        Map<String, String> failed = failures(run(FixedWindow.class));
        assertThat(failed).containsKey("S1");
        assertThat(failed.get("S1")).contains("[S1] 2 s after a full burst");
    }

    @Test
    @DisplayName("a store that counts and records in two steps fails the concurrency rules")
    void nonAtomicFails() {
        Map<String, String> failed = failures(run(NotAtomic.class));
        assertThat(failed).containsKeys("C1", "W4", "G3");
        assertThat(failed.get("C1")).contains("[C1] trial 0: allowed of 20 simultaneous checks, limit 10");
    }

    @Test
    @DisplayName("a store that rounds the retry delay fails the retry rules")
    void roundedRetryFails() {
        Map<String, String> failed = failures(run(RoundedRetry.class));
        assertThat(failed).containsKeys("R1", "R2", "R3");
        assertThat(failed.get("R1")).contains("[R1] retryAfter = oldest (1 000) + 60 000 - now (5 321)");
    }

    private static Events run(Class<?> kit) {
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(kit))
                .execute()
                .testEvents();
    }

    /** The rule ids (each display name's first word) of some tests. */
    private static List<String> ruleIds(Events tests) {
        return tests.stream()
                .map(event -> event.getTestDescriptor().getDisplayName().split(" ")[0])
                .toList();
    }

    /**
     * Failed rules by id (the display name's first word), with the failure message; every message
     * must name the rule that failed, as {@code [id]}.
     */
    private static Map<String, String> failures(Events tests) {
        List<Event> failed = tests.failed().list();
        Map<String, String> byRule = failed.stream()
                .collect(Collectors.toMap(
                        event -> event.getTestDescriptor().getDisplayName().split(" ")[0],
                        event -> event.getRequiredPayload(TestExecutionResult.class)
                                .getThrowable()
                                .map(String::valueOf)
                                .orElse("")));
        byRule.forEach((rule, message) ->
                assertThat(message).as("the failure message of %s", rule).contains("[" + rule + "]"));
        return byRule;
    }

    static class SettlesTokensOnly extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.SETTLES_TOKENS_ONLY);
        }
    }

    static class ChargesUserWhenSharedRejects extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.CHARGES_USER_WHEN_SHARED_REJECTS);
        }
    }

    static class Leasing extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new LeasingStore(LeasingStore.Defect.NONE);
        }

        @Override
        protected boolean supportsLeases() {
            return true;
        }
    }

    static class ReleasesByCount extends Leasing {
        @Override
        protected WindowStore createStore() {
            return new LeasingStore(LeasingStore.Defect.RELEASES_BY_COUNT);
        }
    }

    static class NeverExpires extends Leasing {
        @Override
        protected WindowStore createStore() {
            return new LeasingStore(LeasingStore.Defect.NEVER_EXPIRES);
        }
    }

    /** The example store as a third party runs it: declaring budget leases. */
    static class BudgetLeasing extends ExampleStoreConformanceTest {}

    /** The example store behind a wrapper whose budget lease calls a defect overrides. */
    private static class ExampleWrapper implements WindowStore {
        final ExampleStore store = new ExampleStore();

        @Override
        public Evaluation evaluate(StoreRequest request) {
            return store.evaluate(request);
        }

        @Override
        public Evaluation peek(StoreRequest request) {
            return store.peek(request);
        }

        @Override
        public void settle(Settlement settlement) {
            store.settle(settlement);
        }

        @Override
        public Evaluation takeLease(BudgetLease lease, long nowMillis) {
            return store.takeLease(lease, nowMillis);
        }

        @Override
        public void returnLease(
                BudgetLease lease,
                long stampMillis,
                long requestsUsed,
                dev.ratelimit.api.Amounts used,
                long nowMillis) {
            store.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
        }
    }

    /**
     * The example store, but a budget lease's entry is stamped when it is taken: a use at the lease's
     * end leaves the window a lease's duration too early.
     */
    static class StampedAtTaking extends BudgetLeasing {
        @Override
        protected WindowStore createStore() {
            return new ExampleWrapper() {
                @Override
                public Evaluation takeLease(BudgetLease lease, long nowMillis) {
                    // taken a duration early, so stamped at its taking; its time reported as then
                    return store.takeLease(lease, nowMillis - lease.durationMillis());
                }
            };
        }
    }

    /** The example store, but an exchange takes the next lease before it returns the one ending. */
    static class TakesBeforeReturning extends BudgetLeasing {
        @Override
        protected WindowStore createStore() {
            return new ExampleWrapper() {
                @Override
                public Evaluation exchangeLease(
                        BudgetLease returned,
                        long stampMillis,
                        long requestsUsed,
                        dev.ratelimit.api.Amounts used,
                        BudgetLease taking,
                        long nowMillis) {
                    Evaluation taken = store.takeLease(taking, nowMillis);
                    store.returnLease(returned, stampMillis, requestsUsed, used, nowMillis);
                    return taken;
                }
            };
        }
    }

    static class Correct extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new ExampleStore();
        }
    }

    static class ChargesOnRejection extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.CHARGES_SHORTER_WINDOWS_ON_REJECTION);
        }
    }

    static class ReportsLongerWindowsOnRejection extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.REPORTS_LONGER_WINDOWS_ON_REJECTION);
        }
    }

    static class FixedWindow extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.FIXED_WINDOW);
        }
    }

    static class NotAtomic extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.NOT_ATOMIC);
        }

        @Override
        protected int concurrencyTrials() {
            return 1;
        }
    }

    static class RoundedRetry extends WindowStoreConformanceKit {
        @Override
        protected WindowStore createStore() {
            return new DefectiveStore(DefectiveStore.Defect.ROUNDED_RETRY);
        }
    }
}
