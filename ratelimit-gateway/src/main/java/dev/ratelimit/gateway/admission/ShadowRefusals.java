package dev.ratelimit.gateway.admission;

import dev.ratelimit.api.Decision;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The requests each shadow window would have refused, admitted, counted by this gateway process
 * since it started, by whose window it is: a tenant's own or a shared budget's, for the status page.
 * The limiter's {@code ratelimit.shadow.refusals} counts the same refusals by tier and level, across
 * tenants.
 */
public final class ShadowRefusals {

    private final ConcurrentMap<String, LongAdder> counts = new ConcurrentHashMap<>();

    /** The owner of a tenant's own windows (its tier's), for {@link #count(String, String)}. */
    public static String user(String tenant) {
        return "user\u0000" + tenant;
    }

    /** The owner of a shared budget's windows, for {@link #count(String, String)}. */
    public static String budget(String name) {
        return "budget\u0000" + name;
    }

    private static String owner(@Nullable String budget, String tenant) {
        return budget == null ? user(tenant) : budget(budget);
    }

    /**
     * Counts the shadow refusals of an admitted request.
     *
     * @param tenant whose request it was: the owner of the windows of no budget
     * @param decision the limiter's decision
     */
    public void record(String tenant, Decision decision) {
        for (Decision.ShadowRefusal refusal : decision.shadowRefusals()) {
            counts.computeIfAbsent(
                            owner(refusal.budget(), tenant)
                                    + '\u0000'
                                    + refusal.window().name(),
                            key -> new LongAdder())
                    .increment();
        }
    }

    /**
     * Returns how many requests one window would have refused.
     *
     * @param owner {@link #user} or {@link #budget}
     * @param window the window's name
     * @return the count, 0 for none
     */
    public long count(String owner, String window) {
        LongAdder count = counts.get(owner + '\u0000' + window);
        return count == null ? 0 : count.sum();
    }

    /** The names of the shadow windows that would have refused a request, each once, for the access log. */
    public static List<String> windows(Decision decision) {
        return decision.shadowRefusals().stream()
                .map(refusal -> refusal.window().name())
                .distinct()
                .toList();
    }
}
