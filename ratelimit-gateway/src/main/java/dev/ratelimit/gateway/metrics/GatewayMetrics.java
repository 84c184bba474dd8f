package dev.ratelimit.gateway.metrics;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.UpstreamConfig;
import dev.ratelimit.genai.CallMeters;
import dev.ratelimit.genai.GenAiMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's own meters, beside the limiter's {@code ratelimit_*}: how each admitted request was
 * settled and why, the tokens charged, the upstream's time to response headers, and the relays of
 * answers to clients ({@link Relays}).
 */
public final class GatewayMetrics {

    private final MeterRegistry registry;
    private final Relays relays = new Relays();
    private final GenAiMeters genAi;
    /**
     * The meters counted per request, by name and tag values, found here instead of built and looked
     * up in the registry each time; the registry never drops them, and their tag values are bounded
     * by the configuration (tenants, teams, models as {@code Charge.metricModel()} names them).
     */
    private final Map<MeterKey, Meter> meters = new ConcurrentHashMap<>();

    /** A meter's name and tag values, in the order its method gives them. */
    private record MeterKey(String name, String first, String second, String third) {}

    public GatewayMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.genAi = GenAiMeters.of(registry);
        Gauge.builder("gateway.relays.active", relays.active, AtomicInteger::get)
                .description("Upstream answers being relayed to clients now, streamed or not")
                .register(registry);
        Gauge.builder("gateway.relays.paused", relays.paused, AtomicInteger::get)
                .description(
                        "Relays not reading from the upstream now because their client has not taken what they hold")
                .register(registry);
        Gauge.builder("gateway.relay.buffer.peak", relays.peak, AtomicLong::get)
                .description("The most bytes one relay has held for its client since the gateway started")
                .baseUnit("bytes")
                .register(registry);
    }

    /** Registers the gauge of the API listener's open connections, {@code gateway_connections_open}. */
    public void connections(AtomicInteger open) {
        Gauge.builder("gateway.connections.open", open, AtomicInteger::get)
                .description("Connections open on the API listener (server.max-connections bounds them)")
                .register(registry);
    }

    /**
     * Returns what records the calls of one endpoint in OpenTelemetry's GenAI client metrics ({@code
     * gen_ai.client.token.usage}, {@code gen_ai.client.operation.duration}), as Spring AI's and
     * LangChain4j's integrations do: the metered-call engine records each call when it is settled.
     *
     * @param protocol the API the calls go to, for {@code gen_ai.provider.name}
     * @param operation their {@code gen_ai.operation.name}
     */
    public CallMeters genAi(UpstreamConfig.Protocol protocol, String operation) {
        String provider = switch (protocol) {
            case OPENAI -> "openai";
            case ANTHROPIC -> "anthropic";
            case GEMINI -> "gcp.gemini";
        };
        return genAi.calls(provider, operation);
    }

    /** The relays' gauges. */
    public Relays relays() {
        return relays;
    }

    /** What the relays count: those running, those paused for a slow client, the most one held. */
    public static final class Relays {
        private final AtomicInteger active = new AtomicInteger();
        private final AtomicInteger paused = new AtomicInteger();
        private final AtomicLong peak = new AtomicLong();

        public void started() {
            active.incrementAndGet();
        }

        public void ended() {
            active.decrementAndGet();
        }

        public void paused(boolean now) {
            if (now) {
                paused.incrementAndGet();
            } else {
                paused.decrementAndGet();
            }
        }

        public void held(long bytes) {
            peak.accumulateAndGet(bytes, Math::max);
        }

        public int active() {
            return active.get();
        }

        public int paused() {
            return paused.get();
        }

        public long peak() {
            return peak.get();
        }
    }

    /**
     * Counts one settlement.
     *
     * @param outcome {@code committed} or {@code cancelled}
     * @param ending how the response ended: {@code completed}, {@code stream_completed}, {@code
     *     client_disconnected}, {@code stream_broken}, {@code upstream_429}, {@code upstream_error},
     *     {@code upstream_timeout}, {@code upstream_unreachable}
     */
    public void settled(String tenant, @Nullable String model, String outcome, String ending, long tokens) {
        counter(
                        new MeterKey("gateway.settlements", outcome, ending, ""),
                        key -> Counter.builder(key.name())
                                .description("Admitted requests settled, by outcome and by how their response ended")
                                .tag("outcome", key.first())
                                .tag("ending", key.second()))
                .increment();
        if (tokens > 0) {
            counter(
                            new MeterKey("gateway.tokens", tenant, model == null ? "other" : model, ""),
                            key -> Counter.builder(key.name())
                                    .description(
                                            "Tokens charged to tenants (prompt and completion, from the upstream's usage)")
                                    .tag("tenant", key.first())
                                    .tag("model", key.second()))
                    .increment(tokens);
        }
    }

    /**
     * Counts what one settlement cost, in {@code gateway_spend_usd_micros_total{tenant,team,model}},
     * the model tagged as {@code Charge.metricModel()} names it.
     *
     * @param tenant the tenant that spent it
     * @param team its team, or {@code null}
     * @param model the model as the metrics name it
     * @param micros its cost in micro-dollars
     */
    public void spent(String tenant, @Nullable String team, String model, long micros) {
        if (micros > 0) {
            MeterKey spend = new MeterKey("gateway.spend.usd.micros", tenant, team == null ? "" : team, model);
            counter(
                            spend,
                            key -> Counter.builder(key.name())
                                    .description(
                                            "What tenants spent, in micro-dollars, from the upstream's usage and the price table")
                                    .tag("tenant", key.first())
                                    .tag("team", key.second())
                                    .tag("model", key.third()))
                    .increment(micros);
        }
    }

    /**
     * Counts a settlement whose usage exceeded its reservation, per unit, in {@code
     * gateway_settlement_overrun_total{model,unit}} (settlements) and {@code
     * gateway_settlement_overrun_amount_total{model,unit}} (the excess): the overrun is charged, never
     * refused, and may take a window past its limit.
     *
     * @param model the model as {@code Charge.metricModel()} names it
     * @param estimate what was reserved
     * @param actual what the upstream reported, priced
     */
    public void overrun(String model, Amounts estimate, Amounts actual) {
        for (Window.Unit unit : List.of(Window.Unit.TOKENS, Window.Unit.USD_MICROS)) {
            long excess = actual.get(unit) - estimate.get(unit);
            if (actual.has(unit) && estimate.has(unit) && excess > 0) {
                Counter.builder("gateway.settlement.overrun")
                        .description("Settlements whose usage exceeded what was reserved, charged in full")
                        .tag("model", model)
                        .tag("unit", unit.name())
                        .register(registry)
                        .increment();
                Counter.builder("gateway.settlement.overrun.amount")
                        .description("By how much settlements exceeded what was reserved, in the unit's own amounts")
                        .tag("model", model)
                        .tag("unit", unit.name())
                        .register(registry)
                        .increment(excess);
            }
        }
    }

    /** Counts one response the gateway answered itself: 4xx for bad input, 401, 429. */
    public void refused(String endpoint, int status, String code) {
        counter(
                        new MeterKey("gateway.refusals", endpoint, Integer.toString(status), code),
                        key -> Counter.builder(key.name())
                                .description("Requests answered by the gateway without reaching the upstream")
                                .tag("endpoint", key.first())
                                .tag("status", key.second())
                                .tag("code", key.third()))
                .increment();
    }

    public void upstreamHeaders(String endpoint, Duration elapsed) {
        MeterKey headers = new MeterKey("gateway.upstream.headers", endpoint, "", "");
        Meter timer = meters.get(headers);
        if (timer == null) {
            timer = meters.computeIfAbsent(
                    headers,
                    key -> Timer.builder(key.name())
                            .description("Time from sending a request upstream to its response headers")
                            .tag("endpoint", key.first())
                            .register(registry));
        }
        ((Timer) timer).record(elapsed);
    }

    /** The counter of {@code key}, registered by {@code builder} the first time. */
    private Counter counter(MeterKey key, Function<MeterKey, Counter.Builder> builder) {
        Meter counter = meters.get(key);
        if (counter == null) {
            counter =
                    meters.computeIfAbsent(key, absent -> builder.apply(absent).register(registry));
        }
        return (Counter) counter;
    }
}
