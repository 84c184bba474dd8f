package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.SharedBudget;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link LeasedCapTest}'s three gateways and leased cap of 120 rpm, failing closed ({@code
 * fail-open: false}, the default store timeout of 500 ms), with Redis paused ({@code CLIENT PAUSE
 * WRITE}) while tenants race: what was in flight when the pause began (lease renewals and
 * reservations, whose answers time out and which may run when it ends) is sorted out after it.
 * Never more than the cap is admitted in the minute; once the rest of the minute is raced for and
 * every lease is back, Redis counts exactly the cap, so no lease taken in doubt was kept; what it
 * counts beyond the requests admitted is the shares of requests refused during the pause whose
 * lease was renewed meanwhile (a share settled after its lease ended stays counted in it, as
 * docs/library.md says), at most one per request refused. No warm-up: the gateways' first store
 * calls are the race's.
 */
class LeasedCapFaultTest {

    @Test
    @DisplayName("3 gateways, a leased cap of 120 rpm failing closed, Redis paused 3 s mid-race: never over 120 in"
            + " the minute, and Redis counts exactly 120 once every lease is back")
    void pauseMidRace() throws Exception {
        Path config = Harness.config(
                Map.of(
                        "keys:\n",
                        LeasedCapTest.keys(),
                        "  gpt-4o: { rpm: 500, tpm: 300000 }",
                        "  gpt-4o: { rpm: " + LeasedCapTest.CAP + ", lease: auto }",
                        "limits:\n",
                        "limits:\n  fail-open: false\n"),
                "");
        List<Harness> fleet = Harness.fleet(3, Map.of("GATEWAY_CONFIG", config.toString()));
        try {
            SharedBudget cap = fleet.get(0)
                    .server
                    .gateway()
                    .config()
                    .models()
                    .get(LeasedCapTest.MODEL)
                    .budget();
            int admitted = LeasedCapTest.count(LeasedCapTest.race(fleet, 15, LeasedCapTest.BODY), 200);
            assertThat(admitted).as("the first race, on cold gateways").isPositive();

            Harness.redis().call("CLIENT", "PAUSE", "3000", "WRITE");
            List<HttpResponse<String>> paused = LeasedCapTest.race(fleet, 10, LeasedCapTest.BODY);
            int answeredDuring = LeasedCapTest.count(paused, 503);
            admitted += LeasedCapTest.count(paused, 200);
            Harness.await("every admitted request settled", () -> LeasedCapTest.settled(fleet.get(0)));

            // past every lease's end (a second): the rest of the minute's cap, raced for, then asked
            // for on each gateway until it refuses (a 503 while its breaker closes again is asked again)
            Harness.advance(fleet, Duration.ofMillis(1_001));
            admitted += LeasedCapTest.count(LeasedCapTest.race(fleet, LeasedCapTest.CAP + 10, LeasedCapTest.BODY), 200);
            for (Harness gateway : fleet) {
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                int status = 0;
                for (int i = 0; status != 429; i++) {
                    assertThat(System.nanoTime())
                            .as("a gateway refuses within 30 s")
                            .isLessThan(deadline);
                    status = gateway.chat("lease-k" + i % LeasedCapTest.TENANTS, LeasedCapTest.BODY)
                            .statusCode();
                    if (status == 200) {
                        admitted++;
                    }
                }
            }
            Harness.await("every admitted request settled", () -> LeasedCapTest.settled(fleet.get(0)));
            for (Harness gateway : fleet) {
                assertThat(gateway.server.gateway().admission().awaitSettlements(Duration.ofSeconds(10)))
                        .as("leases returned, settlements applied")
                        .isTrue();
            }
            System.out.printf(
                    "leased cap under CLIENT PAUSE WRITE 3 s: %d answered 503 during the pause, %d admitted in the"
                            + " minute%n",
                    answeredDuring, admitted);
            assertThat(admitted)
                    .as("admitted in the minute: never over the cap")
                    .isLessThanOrEqualTo(LeasedCapTest.CAP);
            assertThat(fleet.get(0).used(cap, "rpm"))
                    .as("Redis's count once every lease is back: the minute is full, no lease in doubt kept")
                    .isEqualTo(LeasedCapTest.CAP);
            // a request refused during the pause whose share came from a lease that ended meanwhile (it
            // was renewed, in doubt) leaves that share counted in the lease, until it leaves the window
            assertThat(LeasedCapTest.CAP - admitted)
                    .as("counted and not admitted: at most one per request refused during the pause")
                    .isBetween(0, answeredDuring);
        } finally {
            fleet.forEach(Harness::close);
        }
    }
}
