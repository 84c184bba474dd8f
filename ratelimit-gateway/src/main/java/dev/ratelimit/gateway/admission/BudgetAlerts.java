package dev.ratelimit.gateway.admission;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.AlertSettings;
import dev.ratelimit.gateway.store.GatewayKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Budget alerts: when a window's count reaches a threshold of its limit (by default 50, 80 and 100
 * per cent), the gateway says so once per window period: a counter ({@code
 * gateway_budget_alerts_total{level,window,threshold}}), a JSON log line, and, when {@code
 * alerts.webhook.url} is set, a {@code POST} of the same JSON to it, retried with doubling waits (1 s,
 * 2 s, 4 s...) until it answers 2xx or {@code max-attempts} have failed.
 *
 * <p>A window's period is its calendar period for a calendar window, and for a sliding window the
 * span of one length counted from the epoch ({@code floor(now / length)}): a tenant that stays above
 * 80 % of a day's budget hears of it once a day. Of all the gateway processes sharing a Redis exactly
 * one emits each alert: before emitting, a process claims the alert's key with {@code SET NX} for
 * the rest of the period ({@link Claims}); while Redis cannot be reached, each process decides for
 * itself (an alert may then come from more than one). The count is what the reservation left in the
 * window: a reserved estimate counts until its settlement, so an alert can fire on a reservation
 * later settled below the threshold.
 *
 * <p>Nothing here runs on a request's thread beyond comparing each window's count with its lowest
 * threshold, and for a crossing, a look-up in this process's memory: claims, log lines and webhooks
 * run on a thread of their own.
 */
public final class BudgetAlerts implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BudgetAlerts.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The most alert keys remembered; beyond it the ones whose period ended are forgotten. */
    private static final int REMEMBERED = 100_000;

    /** Claims a key once among every process sharing the store, for the given time. */
    @FunctionalInterface
    public interface Claims {
        /**
         * @return whether this process is the first to claim {@code key} while it lasts
         */
        boolean claim(String key, long ttlMillis);
    }

    /** One alert, as it is logged and posted. */
    record Alert(
            String level,
            String name,
            String window,
            String unit,
            long used,
            long limit,
            int threshold,
            Instant periodStart,
            Instant time) {

        String json() {
            ObjectNode node = JSON.createObjectNode()
                    .put("alert", "budget")
                    .put("level", level)
                    .put("name", name)
                    .put("window", window)
                    .put("unit", unit)
                    .put("used", used)
                    .put("limit", limit)
                    .put("threshold", threshold)
                    .put("periodStart", periodStart.toString())
                    .put("time", time.toString());
            return node.toString();
        }
    }

    private final Supplier<AlertSettings> settings;
    private final Clock clock;
    private final Claims claims;
    private final GatewayKeys keys;
    private final MeterRegistry registry;
    private final HttpClient http;
    private final ScheduledExecutorService worker;
    /** Alert keys this process has seen claimed (by itself or another), with the end of their period. */
    private final Map<String, Long> seen = new ConcurrentHashMap<>();

    public BudgetAlerts(
            Supplier<AlertSettings> settings, Clock clock, Claims claims, GatewayKeys keys, MeterRegistry registry) {
        this.keys = keys;
        this.settings = settings;
        this.clock = clock;
        this.claims = claims;
        this.registry = registry;
        this.worker = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-budget-alerts");
            thread.setDaemon(true);
            return thread;
        });
        this.http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * Looks at the windows a reservation left: any at or above one of its thresholds whose alert this
     * period has not been emitted is handed to the alerts' thread.
     *
     * @param tenant the tenant, the level of the windows of no budget
     * @param charge names the levels of the shared budgets
     */
    void observe(String tenant, Charge charge, List<Decision.Usage> usage) {
        AlertSettings current = settings.get();
        long now = -1;
        for (Decision.Usage state : usage) {
            Window window = state.window();
            List<Integer> thresholds = current.of(window.name());
            if (thresholds.isEmpty() || !reaches(state.used(), window, thresholds.get(0))) {
                continue; // the common case: below the lowest threshold
            }
            if (now < 0) {
                now = clock.millis();
            }
            long start = periodStart(window, now);
            long end = window.isCalendar() ? window.leavesAtMillis(now) : start + window.lengthMillis();
            for (int threshold : thresholds) {
                if (!reaches(state.used(), window, threshold)) {
                    break;
                }
                String level = "tenant";
                String name = tenant;
                String budget = state.budget();
                if (budget != null) {
                    Charge.Level of = charge.level(budget);
                    level = of == null ? "budget" : of.kind();
                    name = budget.startsWith(level + ":") ? budget.substring(level.length() + 1) : budget;
                }
                String key = keys.alert(level, name, window.name(), threshold, start);
                if (seen.putIfAbsent(key, end) == null) {
                    Alert alert = new Alert(
                            level,
                            name,
                            window.name(),
                            window.unit().name(),
                            state.used(),
                            window.limit(),
                            threshold,
                            Instant.ofEpochMilli(start),
                            Instant.ofEpochMilli(now));
                    long ttl = Math.max(1, end - now);
                    worker.execute(() -> claimAndEmit(key, ttl, alert, current));
                }
            }
        }
        if (seen.size() > REMEMBERED && now >= 0) {
            forget(now);
        }
    }

    /** The start of the period an alert of {@code window} at {@code now} belongs to. */
    static long periodStart(Window window, long now) {
        Window.Calendar calendar = window.calendar();
        return calendar != null
                ? calendar.startMillis(now)
                : Math.floorDiv(now, window.lengthMillis()) * window.lengthMillis();
    }

    private void claimAndEmit(String key, long ttl, Alert alert, AlertSettings current) {
        boolean mine;
        try {
            mine = claims.claim(key, ttl);
        } catch (RuntimeException e) {
            mine = true; // the store cannot say: this process alerts by itself
        }
        if (!mine) {
            return; // another process emitted it
        }
        Counter.builder("gateway.budget.alerts")
                .description("Budget alerts emitted: a window reached a threshold of its limit, once per period")
                .tag("level", alert.level())
                .tag("window", alert.window())
                .tag("threshold", Integer.toString(alert.threshold()))
                .register(registry)
                .increment();
        String json = alert.json();
        LOG.log(System.Logger.Level.WARNING, json);
        URI webhook = current.webhook();
        if (webhook != null) {
            post(webhook, json, 1, current.maxAttempts());
        }
    }

    private void post(URI webhook, String json, int attempt, int maxAttempts) {
        HttpRequest request = HttpRequest.newBuilder(webhook)
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
        http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, failure) -> {
            if (failure == null && response.statusCode() / 100 == 2) {
                return;
            }
            String why = failure != null ? String.valueOf(failure) : "HTTP " + response.statusCode();
            if (attempt >= maxAttempts) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "Budget alert webhook {0} failed {1} times ({2}); this alert is given up: {3}",
                        webhook,
                        attempt,
                        why,
                        json);
                return;
            }
            long wait = Math.min(60_000L, 1_000L << (attempt - 1));
            if (!worker.isShutdown()) {
                worker.schedule(() -> post(webhook, json, attempt + 1, maxAttempts), wait, TimeUnit.MILLISECONDS);
            }
        });
    }

    private void forget(long now) {
        for (Iterator<Long> ends = seen.values().iterator(); ends.hasNext(); ) {
            if (ends.next() <= now) {
                ends.remove();
            }
        }
    }

    /** Whether {@code used} is at or above {@code threshold} per cent of the window's limit. */
    private static boolean reaches(long used, Window window, int threshold) {
        return used * 100 >= (long) threshold * window.limit();
    }

    /** The highest threshold {@code used} has reached in {@code window}, or 0 for none. */
    public static int reached(AlertSettings settings, Window window, long used) {
        int reached = 0;
        for (int threshold : settings.of(window.name())) {
            if (reaches(used, window, threshold)) {
                reached = threshold;
            }
        }
        return reached;
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}
