package dev.ratelimit.gateway.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.admission.BudgetAlerts;
import dev.ratelimit.gateway.admission.Charge;
import dev.ratelimit.gateway.admission.ShadowRefusals;
import dev.ratelimit.gateway.admission.Slots;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import dev.ratelimit.gateway.config.Spending;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.upstream.Cooldowns;
import dev.ratelimit.http.RetryAfter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The status page's data: every configured tenant's windows (its tier's per-model limits included)
 * and requests in flight, every team's and organisation's windows, every model's upstream cap and
 * the tiers' shares of it, and the top spenders, read live from the store without charging
 * anything ({@link RateLimiter#usage}), so the page shows what the store holds now, whichever
 * gateway process decided the requests and however long ago; and, under a leased cap, the lease
 * this process holds on it, from its own memory. Spend windows count micro-dollars
 * ({@code unit: usd_micros}); the page shows them in dollars.
 *
 * <p>The page polls every second, possibly from several browsers; the report is taken at most once
 * per {@link #FRESH_FOR} and served from memory in between, so the store sees one read per tenant,
 * budget and cap (and one slot count per tenant) per second at most, however many pages are open.
 */
public final class StatusReport {

    /** How long one report is served before the store is read again. */
    static final Duration FRESH_FOR = Duration.ofSeconds(1);

    /** How many tenants the top spenders list. */
    static final int TOP_SPENDERS = 10;

    private final RateLimiter limiter;
    private final Supplier<GatewayConfig> configs;
    private final boolean failOpen;
    private final Slots slots;
    private final Map<String, String> about;
    private final Cooldowns cooldowns;
    private final ShadowRefusals shadowRefusals;
    private byte @Nullable [] json;
    private long takenNanos;

    /**
     * @param about fixed facts shown above the bars (store, slots, upstream, limiter), in order
     */
    public StatusReport(
            RateLimiter limiter,
            Supplier<GatewayConfig> configs,
            Slots slots,
            boolean failOpen,
            Map<String, String> about,
            Cooldowns cooldowns,
            ShadowRefusals shadowRefusals) {
        this.cooldowns = cooldowns;
        this.shadowRefusals = shadowRefusals;
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
        List<Spender> spenders = new ArrayList<>();
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
            List<Decision.Usage> usage = windows(
                    node, tier.tier().windows(), ShadowRefusals.user(tenant), () -> limiter.usage(tenant, tier.tier()));
            spender(spenders, tenant, tier, usage);
            ArrayNode limits = node.putArray("models"); // the tier's per-model limits: this tenant's own
            tier.models().forEach((model, windows) -> {
                SharedBudget budget = Charge.tierModel(tenant, model, windows);
                shared(limits.addObject().put("model", model), budget);
            });
        }
        ArrayNode teams = status.putArray("teams");
        for (Spending.Team team : config.spending().teams().values()) {
            ObjectNode node = teams.addObject().put("team", team.name());
            if (team.org() != null) {
                node.put("org", team.org().name());
            }
            shared(node, team.budget());
            ArrayNode limits = node.putArray("models");
            team.models()
                    .forEach((model, modelBudget) -> shared(limits.addObject().put("model", model), modelBudget));
        }
        ArrayNode orgs = status.putArray("orgs");
        for (Spending.Org org : config.spending().orgs().values()) {
            shared(orgs.addObject().put("org", org.name()), org.budget());
        }
        ArrayNode top = status.putArray("topSpenders");
        spenders.sort(Comparator.comparingLong(Spender::used).reversed());
        spenders.stream()
                .limit(TOP_SPENDERS)
                .forEach(spender -> top.addObject()
                        .put("tenant", spender.tenant())
                        .put("tier", spender.tier())
                        .put("window", spender.window().name())
                        .put("seconds", spender.window().lengthSeconds())
                        .put("used", spender.used())
                        .put("limit", spender.window().limit()));
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
            shared(node, cap.budget());
            ArrayNode shares = node.putArray("shares");
            cap.shares()
                    .forEach((tier, share) -> shared(
                            shares.addObject()
                                    .put("tier", tier)
                                    .put("percent", cap.percents().get(tier)),
                            share));
            leases(node, cap.budget());
            SharedBudget batchTokens = cap.batchTokens();
            if (batchTokens != null) {
                shared(node.putObject("batchTokens"), batchTokens); // the model's batches, apart from rpm and tpm
            }
        }
        return status;
    }

    /** Lists a shared budget's windows ({@link #windows}); none when there is no budget. */
    private void shared(ObjectNode node, @Nullable SharedBudget budget) {
        if (budget == null) {
            node.putArray("windows");
        } else {
            windows(node, budget.windows(), ShadowRefusals.budget(budget.name()), () -> limiter.usage(budget));
        }
    }

    /**
     * Lists the lease this gateway process holds on a leased cap ({@code lease: auto}), read from its
     * memory ({@link RateLimiter#leases()}): each unit's size and what was admitted from it, and when
     * it ends; empty when it holds none. Other processes' leases are not in it: the store's counts
     * ({@code windows}) include them all, used or not.
     */
    private void leases(ObjectNode node, @Nullable SharedBudget budget) {
        if (budget == null || budget.leasing() == null) {
            return;
        }
        ArrayNode held = node.putArray("leases");
        for (Leasing.Held lease : limiter.leases()) {
            if (!lease.budget().equals(budget.name())) {
                continue;
            }
            ObjectNode entry = held.addObject().put("endsAt", lease.endsAt().toString());
            ArrayNode units = entry.putArray("units");
            lease.size()
                    .forEach((unit, size) -> units.addObject()
                            .put("unit", unit.name())
                            .put("size", size)
                            .put("used", lease.used().getOrDefault(unit, 0L)));
        }
    }

    /** A tenant's spend in its longest spend window, for the top spenders. */
    private record Spender(String tenant, String tier, Window window, long used) {}

    /** Adds the tenant to the spenders when its tier has a spend window the store could read. */
    private static void spender(List<Spender> spenders, String tenant, TierConfig tier, List<Decision.Usage> usage) {
        usage.stream()
                .filter(state -> state.window().unit().equals(Window.Unit.USD_MICROS))
                .max(Comparator.comparing(state -> state.window().length()))
                .ifPresent(state -> spenders.add(new Spender(tenant, tier.name(), state.window(), state.used())));
    }

    private String slotsError(String problem) {
        return (failOpen
                        ? "concurrency cap NOT enforced (requests pass without a slot): "
                        : "requests refused (503), no slot can be taken: ")
                + problem;
    }

    /**
     * Lists windows, requests first, then tokens, then other units (money), each shortest first,
     * with what the store holds: {@code used} and {@code resetSeconds} are null when it cannot tell
     * (the limiter is disabled, or the store is unreachable, which {@code error} then says). A
     * calendar window also names its calendar ({@code month@America/New_York}) and {@code resetsAt},
     * the next period's start on the gateway's clock, when all it holds leaves. Each window's {@code
     * mode} is {@code enforce} or {@code shadow}; a shadow window also gives {@code shadowRefusals},
     * the requests it would have refused (admitted) since this process started, and no {@code alert},
     * since shadow windows raise none.
     *
     * @param owner whose windows they are, as {@link ShadowRefusals} counts them
     * @return what the store holds, empty when it could not be read
     */
    private List<Decision.Usage> windows(
            ObjectNode node, List<Window> windows, String owner, Supplier<List<Decision.Usage>> read) {
        long now = cooldowns.clock().millis();
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
                .sorted(Comparator.comparing(Window::unit).thenComparing(Window::length))
                .forEach(window -> {
                    ObjectNode w = array.addObject()
                            .put("name", window.name())
                            .put("unit", window.unit().name())
                            .put("limit", window.limit())
                            .put("seconds", window.lengthSeconds())
                            .put("mode", window.inShadow() ? "shadow" : "enforce");
                    if (window.inShadow()) {
                        w.put("shadowRefusals", shadowRefusals.count(owner, window.name()));
                    }
                    Window.Calendar calendar = window.calendar();
                    if (calendar != null) { // everything it holds leaves at the next period's start
                        w.put("calendar", calendar.toString())
                                .put(
                                        "resetsAt",
                                        Instant.ofEpochMilli(calendar.endMillis(now))
                                                .toString());
                    }
                    Decision.Usage state = known.stream()
                            .filter(candidate -> candidate.window().equals(window))
                            .findFirst()
                            .orElse(null);
                    if (state == null) {
                        w.putNull("used");
                        w.putNull("resetSeconds");
                    } else {
                        w.put("used", state.used());
                        if (!window.inShadow()) {
                            // the highest alert threshold it has reached (budget alerts), 0 for none
                            w.put("alert", BudgetAlerts.reached(configs.get().alerts(), window, state.used()));
                        }
                        w.put("resetSeconds", (state.resetAfter().toNanos() + 999_999_999) / 1_000_000_000);
                    }
                });
        return known;
    }
}
