package dev.ratelimit.gateway.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.gateway.admission.Slots;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What {@code /health} says: whether the store the budgets live in answers (read through the
 * limiter, one uncharged usage read of the first tenant's request windows, so the answer comes the
 * way a decision would; on a Redis Cluster, where that read reaches one master, a {@code PING} of
 * every master too) and whether concurrency slots can be taken, checked live at most once per
 * {@link #FRESH_FOR}.
 *
 * <table>
 *   <caption>The overall status</caption>
 *   <tr><th>status</th><th>when</th><th>HTTP</th><th>ready</th></tr>
 *   <tr><td>{@code UP}</td><td>store and slots answer (or the kill switch is on)</td><td>200</td><td>yes</td></tr>
 *   <tr><td>{@code DEGRADED}</td><td>one cannot be reached and the gateway fails open: requests
 *       pass without that limit</td><td>200</td><td>yes, once the store has answered since the start;
 *       no before</td></tr>
 *   <tr><td>{@code DOWN}</td><td>one cannot be reached and the gateway fails closed: metered
 *       requests get 503</td><td>503</td><td>no</td></tr>
 * </table>
 *
 * <p>A gateway that has just started is ready only once its store has answered a check (connected,
 * the script loaded): the first requests after a start are then decided by the store, not let
 * through for want of it. Later, an outage leaves it ready (degraded) as long as it fails open.
 *
 * <p>A gateway that is shutting down is not ready, whatever its store says, so a load balancer
 * stops sending it requests while those in flight finish.
 */
public final class HealthCheck {

    /** How long one check is served before the store is asked again. */
    static final Duration FRESH_FOR = Duration.ofSeconds(1);

    /** The overall status. */
    enum Status {
        UP,
        DEGRADED,
        DOWN
    }

    /**
     * One check.
     *
     * @param status the overall status
     * @param body the JSON {@code /health} answers with
     */
    record Result(Status status, ObjectNode body) {}

    private final RateLimiter limiter;
    private final Supplier<GatewayConfig> config;
    private final Slots slots;
    private final Supplier<@Nullable String> storeNodes;
    private final String storeKind;
    private final String slotsKind;
    private final boolean disabled;
    private final boolean failOpen;
    private final BooleanSupplier draining;
    private @Nullable Result last;
    private volatile boolean answered;
    private long takenNanos;

    public HealthCheck(
            RateLimiter limiter,
            Supplier<GatewayConfig> config,
            Slots slots,
            Supplier<@Nullable String> storeNodes,
            String storeKind,
            String slotsKind,
            boolean disabled,
            boolean failOpen,
            BooleanSupplier draining) {
        this.limiter = limiter;
        this.config = config;
        this.slots = slots;
        this.storeNodes = storeNodes;
        this.storeKind = storeKind;
        this.slotsKind = slotsKind;
        this.disabled = disabled;
        this.failOpen = failOpen; // the limiter's and the slots' mode, fixed at start
        this.draining = draining;
    }

    /** The health now, checked unless the last check is younger than {@link #FRESH_FOR}. */
    synchronized Result check() {
        Result current = last;
        if (current == null || System.nanoTime() - takenNanos >= FRESH_FOR.toNanos()) {
            current = take();
            last = current;
            takenNanos = System.nanoTime();
        }
        return current;
    }

    /**
     * Checks once at start, without keeping the answer for {@link #FRESH_FOR}: a store that answers
     * makes the gateway ready from its first probe, and a store that stops right after is seen at
     * once.
     */
    public void checkAtStart() {
        take();
    }

    /**
     * Whether the gateway takes requests: up, or degraded once the store has answered since the
     * start, and not shutting down.
     */
    boolean ready() {
        if (draining.getAsBoolean()) {
            return false;
        }
        Status status = check().status();
        return status == Status.UP || (answered && status != Status.DOWN);
    }

    private Result take() {
        GatewayConfig current = config.get();
        String storeProblem = disabled ? null : storeProblem(current);
        String slotsProblem = disabled ? null : slots.problem();
        Status status =
                storeProblem == null && slotsProblem == null ? Status.UP : failOpen ? Status.DEGRADED : Status.DOWN;
        if (status == Status.UP) {
            answered = true;
        }
        ObjectNode body = OpenAi.JSON.createObjectNode().put("status", status.name());
        part(body.putObject("store"), storeKind, storeProblem);
        part(body.putObject("slots"), slotsKind, slotsProblem);
        body.put("failOpen", failOpen);
        body.put("limiter", disabled ? "disabled" : "enabled");
        if (status == Status.DEGRADED) {
            body.put("reason", "requests pass without the limits that cannot be checked until the store answers");
        } else if (status == Status.DOWN) {
            body.put("reason", "metered requests get 503 until the store answers (limits.fail-open: false)");
        }
        return new Result(status, body);
    }

    private @Nullable String storeProblem(GatewayConfig current) {
        Map.Entry<String, TierConfig> probe =
                current.tenants().entrySet().iterator().next();
        try {
            limiter.usage(probe.getKey(), probe.getValue().requests());
        } catch (RateLimiterUnavailableException e) {
            return e.getMessage();
        }
        return storeNodes.get();
    }

    private static void part(ObjectNode node, String kind, @Nullable String problem) {
        node.put("kind", kind);
        node.put("status", problem == null ? "UP" : "UNREACHABLE");
        if (problem != null) {
            node.put("reason", problem);
        }
    }
}
