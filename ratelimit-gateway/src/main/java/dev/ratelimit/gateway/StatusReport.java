package dev.ratelimit.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.GatewayConfig.TierConfig;
import dev.ratelimit.http.RetryAfter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The status page's data: every configured tenant's windows and requests in flight, and every
 * model's upstream cap, read live from the store without charging anything ({@link
 * RateLimiter#usage}), so the page shows what the store holds now, whichever gateway process
 * decided the requests and however long ago.
 *
 * <p>The page polls every second, possibly from several browsers; the report is taken at most once
 * per {@link #FRESH_FOR} and served from memory in between, so the store sees one read per tenant
 * and per cap (and one slot count per tenant) per second at most, however many pages are open.
 */
final class StatusReport {

    /** How long one report is served before the store is read again. */
    static final Duration FRESH_FOR = Duration.ofSeconds(1);

    private final RateLimiter limiter;
    private final Supplier<GatewayConfig> configs;
    private final boolean failOpen;
    private final Slots slots;
    private final Map<String, String> about;
    private final Cooldowns cooldowns;
    private byte @Nullable [] json;
    private long takenNanos;

    /**
     * @param about fixed facts shown above the bars (store, slots, upstream, limiter), in order
     */
    StatusReport(
            RateLimiter limiter,
            Supplier<GatewayConfig> configs,
            Slots slots,
            boolean failOpen,
            Map<String, String> about,
            Cooldowns cooldowns) {
        this.cooldowns = cooldowns;
        this.failOpen = failOpen;
        this.limiter = limiter;
        this.configs = configs;
        this.slots = slots;
        this.about = Map.copyOf(about);
    }

    /** The report as JSON bytes, taken now unless the last one is younger than {@link #FRESH_FOR}. */
    synchronized byte[] json() {
        byte[] current = json;
        if (current == null || System.nanoTime() - takenNanos >= FRESH_FOR.toNanos()) {
            try {
                current = OpenAi.JSON.writeValueAsBytes(take());
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
            json = current;
            takenNanos = System.nanoTime(); // after the reads: a slow store does not make a stale report look fresh
        }
        return current;
    }

    private ObjectNode take() {
        GatewayConfig config = configs.get();
        ObjectNode status = OpenAi.JSON.createObjectNode();
        for (String key : List.of("store", "slots", "upstream", "limiter")) {
            status.put(key, about.get(key));
        }
        String slotProblem = slots.problem(); // one live check per report, not one per tenant
        if (slotProblem != null) {
            status.put("slotsError", slotsError(slotProblem));
        }
        ArrayNode tenants = status.putArray("tenants");
        for (Map.Entry<String, TierConfig> entry : config.tenants().entrySet()) {
            String tenant = entry.getKey();
            TierConfig tier = entry.getValue();
            int inFlight = slotProblem == null ? slots.inFlight(tenant) : -1;
            ObjectNode node = tenants.addObject()
                    .put("tenant", tenant)
                    .put("tier", tier.name())
                    .put("inFlight", inFlight)
                    .put("maxConcurrent", tier.maxConcurrent());
            if (inFlight < 0 && slotProblem != null) {
                node.put("slotsError", slotsError(slotProblem));
            }
            windows(node, tier.tier().windows(), () -> limiter.usage(tenant, tier.tier()));
        }
        ArrayNode cooling = status.putArray("cooldowns"); // models an upstream told the gateway to hold back
        Instant now = cooldowns.clock().instant();
        for (Cooldowns.Active active : cooldowns.active()) {
            cooling.addObject()
                    .put("upstream", active.upstream())
                    .put("model", active.model())
                    .put("until", active.until().toString())
                    .put("retryAfterSeconds", RetryAfter.seconds(Duration.between(now, active.until())));
        }
        ArrayNode models = status.putArray("models");
        for (ModelCap cap : config.models().values()) {
            ObjectNode node = models.addObject().put("model", cap.model());
            windows(node, cap.budget().windows(), () -> limiter.usage(cap.budget()));
        }
        return status;
    }

    private String slotsError(String problem) {
        return (failOpen
                        ? "concurrency cap NOT enforced (requests pass without a slot): "
                        : "requests refused (503), no slot can be taken: ")
                + problem;
    }

    /**
     * Lists windows, requests first then tokens, each shortest first, with what the store holds:
     * {@code used} and {@code resetSeconds} are null when it cannot tell (the limiter is disabled,
     * or the store is unreachable, which {@code error} then says).
     */
    private static void windows(ObjectNode node, List<Window> windows, Supplier<List<Decision.Usage>> read) {
        List<Decision.Usage> usage;
        try {
            usage = read.get();
        } catch (RateLimiterUnavailableException e) {
            usage = List.of();
            node.put("error", "the store cannot be read: " + e.getMessage());
        }
        ArrayNode array = node.putArray("windows");
        List<Decision.Usage> known = usage;
        windows.stream()
                .sorted(Comparator.comparing(Window::isTokens).thenComparing(Window::length))
                .forEach(window -> {
                    ObjectNode w = array.addObject()
                            .put("name", window.name())
                            .put("unit", window.isTokens() ? "tokens" : "requests")
                            .put("limit", window.limit())
                            .put("seconds", window.lengthSeconds());
                    Decision.Usage state = known.stream()
                            .filter(candidate -> candidate.window().equals(window))
                            .findFirst()
                            .orElse(null);
                    if (state == null) {
                        w.putNull("used");
                        w.putNull("resetSeconds");
                    } else {
                        w.put("used", state.used());
                        w.put("resetSeconds", (state.resetAfter().toNanos() + 999_999_999) / 1_000_000_000);
                    }
                });
    }
}
