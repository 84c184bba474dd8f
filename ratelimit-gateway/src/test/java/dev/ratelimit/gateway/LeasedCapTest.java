package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.SharedBudget;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Three gateways on one private redis-server, a model's upstream cap leased to each ({@code lease:
 * auto}) and many tenants racing for it: exactly the cap is admitted, and the cap's keys are named
 * by store calls (counted by Redis {@code MONITOR}) once per lease, not per request admitted from a
 * lease: the call that takes a lease also returns the one before it on that gateway, and only a lease
 * with no lease after it is returned by a call of its own (at most one per gateway); over the
 * window's edge, on the gateways' injected clocks, nothing more than the cap is admitted in any
 * minute.
 */
class LeasedCapTest {

    static final String MODEL = "gpt-4o";
    static final int CAP = 120;
    private static final int GATEWAYS = 3;
    /** Each gateway alone asks for more than the cap, so none is left holding a slice it cannot use. */
    private static final int PER_GATEWAY = CAP + 10;

    static final int TENANTS = 15;
    static final String BODY = "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    /**
     * The cap's keys on a standalone Redis (KeySpace in ratelimit-redis-common: {@code
     * <prefix>:~~<budget name>:<window>}): {@code :60} (rpm; the cap has no tpm, so the requests
     * alone size the leases) and {@code :settled}; a tier's share, {@code model:gpt-4o/share:...},
     * is not among them.
     */
    private static final String CAP_KEYS = "ratelimit:~~model:" + MODEL + ":";

    @Test
    @DisplayName("3 gateways, a leased cap of 120 rpm, 390 racing requests of 15 tenants: exactly 120 pass,"
            + " the cap's keys touched once per lease, never over the cap across the edge")
    void leasedCapAcrossThreeGateways() throws Exception {
        Path config = Harness.config(
                Map.of(
                        "keys:\n",
                        keys(),
                        "  gpt-4o: { rpm: 500, tpm: 300000 }",
                        "  gpt-4o: { rpm: " + CAP + ", lease: auto }",
                        // a store call of a loaded machine (CI's two cores) is slow, not failed: a
                        // failed one would answer 503, not the race's 200 or 429
                        "limits:\n",
                        "limits:\n  store-timeout-ms: 10000\n"),
                "");
        List<Harness> fleet = Harness.fleet(GATEWAYS, Map.of("GATEWAY_CONFIG", config.toString()));
        try (RedisMonitor monitor = RedisMonitor.start(Harness.redis())) {
            SharedBudget cap =
                    fleet.get(0).server.gateway().config().models().get(MODEL).budget();

            List<HttpResponse<String>> answers = race(fleet, PER_GATEWAY, BODY);
            Harness.await("every admitted request settled", () -> settled(fleet.get(0)));
            Calls calls = Calls.of(monitor.naming(CAP_KEYS));
            System.out.println("leased cap: " + calls);
            assertThat(count(answers, 200)).as("admitted; %s", calls).isEqualTo(CAP);
            assertThat(count(answers, 429)).as("refused").isEqualTo(GATEWAYS * PER_GATEWAY - CAP);
            assertThat(fleet.get(0).used(cap, "rpm"))
                    .as("the store's count, leases included")
                    .isEqualTo(CAP);
            assertThat(Harness.redis().call("EXISTS", CAP_KEYS + "60"))
                    .as("the cap's key as spelt")
                    .isEqualTo(1L);
            // each lease is taken by one call, which returns the lease before it (if any): a lease's
            // return rides on the next lease's take, and only the last of a run has a call of its own
            calls.takes.forEach(
                    (lease, taken) -> assertThat(taken).as("takes of " + lease).isEqualTo(1));
            calls.returns.forEach((lease, returned) -> {
                assertThat(returned).as("returns of " + lease).isEqualTo(1);
                assertThat(calls.takes).as("a return of a lease taken").containsKey(lease);
            });
            assertThat(calls.other).as("no other call names the cap").isEmpty();
            assertThat(calls.returnsAlone)
                    .as("leases returned by a call that takes nothing: the last of a gateway's run at most")
                    .isLessThanOrEqualTo(GATEWAYS);
            assertThat(calls.leaseCalls())
                    .as("store calls for leases: one per lease taken (or refused), plus those returns")
                    .isEqualTo(calls.takes.size() + calls.returnsAlone);
            assertThat(calls.exchanges)
                    .as("leases taken in the call that returned the one before")
                    .isPositive();
            // a request reserved on the cap directly settles there once; the rest came from leases
            assertThat(calls.directSettles).isLessThanOrEqualTo(calls.directReserves);
            long fromLeases = CAP - calls.directSettles;
            assertThat(calls.takes.size())
                    .as("leases taken (and refused) against the %d requests admitted from them", fromLeases)
                    .isLessThanOrEqualTo((int) fromLeases / 4);
            assertThat(calls.total())
                    .as("store calls naming the cap: 1 per lease and 1 per gateway at most, 2 per request reserved"
                            + " directly")
                    .isLessThanOrEqualTo(calls.takes.size() + GATEWAYS + calls.directReserves + calls.directSettles);

            // the window's edge: the minute after the race, on every gateway's clock
            Map<Duration, Integer> admitted = new HashMap<>();
            admitted.put(Duration.ZERO, CAP);
            Duration at = Duration.ZERO;
            for (Duration next :
                    List.of(Duration.ofMillis(59_999), Duration.ofSeconds(60), Duration.ofMillis(61_001))) {
                Harness.advance(fleet, next.minus(at));
                at = next;
                admitted.put(at, count(race(fleet, CAP / GATEWAYS, BODY), 200));
                Harness.await("every admitted request settled", () -> settled(fleet.get(0)));
            }
            System.out.println("leased cap, admitted at each time after the race: " + admitted);
            assertThat(admitted.get(Duration.ofMillis(59_999)))
                    .as("a minute is not over")
                    .isZero();
            assertThat(admitted.get(Duration.ofMillis(61_001)))
                    .as("the race's leases left the window")
                    .isPositive();
            assertThat(overAdmission(admitted))
                    .as("admitted over the cap in any minute")
                    .isZero();
        } finally {
            fleet.forEach(Harness::close);
        }
    }

    /** The configuration's keys section: {@link #TENANTS} enterprise tenants, {@code lease-t<i>} keyed {@code lease-k<i>}. */
    static String keys() {
        StringBuilder keys = new StringBuilder("keys:\n");
        for (int i = 0; i < TENANTS; i++) {
            keys.append("  - { key: lease-k")
                    .append(i)
                    .append(", tenant: lease-t")
                    .append(i)
                    .append(", tier: enterprise }\n");
        }
        return keys.toString();
    }

    /** {@code perGateway} requests on each gateway, of the tenants in turn, all released at once. */
    static List<HttpResponse<String>> race(List<Harness> fleet, int perGateway, String body) throws Exception {
        List<Callable<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < fleet.size() * perGateway; i++) {
            Harness via = fleet.get(i % fleet.size());
            String key = "lease-k" + (i / fleet.size()) % TENANTS;
            calls.add(() -> via.chat(key, body));
        }
        return Harness.race(calls);
    }

    static int count(List<HttpResponse<String>> answers, int status) {
        return (int)
                answers.stream().filter(answer -> answer.statusCode() == status).count();
    }

    /** Whether no tenant holds a slot: every admitted request has been settled. */
    static boolean settled(Harness any) {
        for (int i = 0; i < TENANTS; i++) {
            if (any.inFlight("lease-t" + i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** The most admitted within any minute {@code (t - 60 s, t]} beyond the cap, over the times raced at. */
    private static int overAdmission(Map<Duration, Integer> admitted) {
        int most = 0;
        for (Duration end : admitted.keySet()) {
            int within = 0;
            for (Map.Entry<Duration, Integer> race : admitted.entrySet()) {
                if (race.getKey().compareTo(end) <= 0
                        && race.getKey().compareTo(end.minus(Duration.ofMinutes(1))) > 0) {
                    within += race.getValue();
                }
            }
            most = Math.max(most, within - CAP);
        }
        return most;
    }

    /**
     * The script calls naming the cap's keys, as MONITOR shows them ({@code EVALSHA sha numkeys
     * keys... op time entry-id ...}): a lease's take ({@code r}), return ({@code s}) and exchange
     * ({@code x}: the return of the lease named {@code <stamp>:<entry id>} in the next argument and
     * the take of the entry id's lease) carry the lease's precision argument {@code
     * l<duration>:<requests>}; a direct reservation ({@code r}) and a settlement ({@code s}) of a
     * request reserved on the cap do not.
     */
    private record Calls(
            Map<String, Integer> takes,
            Map<String, Integer> returns,
            long exchanges,
            long returnsAlone,
            long directReserves,
            long directSettles,
            List<String> other) {

        static Calls of(List<List<String>> commands) {
            Map<String, Integer> takes = new HashMap<>();
            Map<String, Integer> returns = new HashMap<>();
            long exchanges = 0;
            long returnsAlone = 0;
            long reserves = 0;
            long settles = 0;
            List<String> other = new ArrayList<>();
            for (List<String> command : commands) {
                if (!command.get(0).equalsIgnoreCase("evalsha")
                        && !command.get(0).equalsIgnoreCase("eval")) {
                    other.add(String.join(" ", command));
                    continue;
                }
                List<String> args = command.subList(3 + Integer.parseInt(command.get(2)), command.size());
                boolean lease = args.stream().anyMatch(arg -> arg.matches("l\\d+:\\d+"));
                String op = args.get(0);
                if (lease && op.equals("r")) {
                    takes.merge(args.get(2), 1, Integer::sum);
                } else if (lease && op.equals("x")) {
                    exchanges++;
                    takes.merge(args.get(2), 1, Integer::sum);
                    returns.merge(args.get(3).substring(args.get(3).indexOf(':') + 1), 1, Integer::sum);
                } else if (lease && op.equals("s")) {
                    returnsAlone++;
                    returns.merge(args.get(2), 1, Integer::sum);
                } else if (op.equals("r")) {
                    reserves++;
                } else if (op.equals("s")) {
                    settles++;
                } else {
                    other.add(String.join(" ", command));
                }
            }
            return new Calls(takes, returns, exchanges, returnsAlone, reserves, settles, other);
        }

        /** The calls that take, return or exchange leases. */
        long leaseCalls() {
            return takes.values().stream().mapToLong(Integer::longValue).sum() + returnsAlone;
        }

        long total() {
            return leaseCalls() + directReserves + directSettles + other.size();
        }

        @Override
        public String toString() {
            return total() + " calls: " + takes.size() + " leases taken (or refused), " + exchanges
                    + " of them with the return of the one before, " + returnsAlone + " returned alone, "
                    + directReserves + " direct reservations, " + directSettles + " direct settlements, "
                    + other.size() + " other " + other;
        }
    }
}
