package dev.ratelimit.gateway.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.admission.ShadowRefusals;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One JSON line per request on the API listener: time, tenant, endpoint, model, status, the
 * limiter's decision and its window (and, when admitted while the store could not decide, the
 * windows not checked; when admitted though shadow windows would have refused it, those),
 * estimated and settled tokens, how it ended, latency and the upstream's status. It never holds a key (only the tenant the key maps to) nor any part of a
 * prompt or an answer.
 */
public final class AccessLog implements Filter, AutoCloseable {

    private static final String ENTRY = "gateway.access";

    /** What the servlets learn about one request, for its line. */
    public static final class Entry {
        @Nullable
        String model;

        long estimatedTokens = -1;

        public Admission.@Nullable Ticket ticket;

        int upstreamStatus = -1;
    }

    private final @Nullable OutputStream out;
    private final Clock clock;

    private AccessLog(@Nullable OutputStream out, Clock clock) {
        this.out = out;
        this.clock = clock;
    }

    /**
     * Opens the log {@code ACCESS_LOG} (or {@code server.access-log}) names: {@code stdout} (the
     * default), {@code off}, or a file appended to.
     */
    public static AccessLog open(@Nullable String target, Clock clock) throws IOException {
        String value = target == null || target.isBlank() ? "stdout" : target.trim();
        return switch (value) {
            case "off" -> new AccessLog(null, clock);
            case "stdout" -> new AccessLog(System.out, clock);
            default ->
                new AccessLog(
                        Files.newOutputStream(Path.of(value), StandardOpenOption.CREATE, StandardOpenOption.APPEND),
                        clock);
        };
    }

    /** The entry of a request on the API listener, for the servlets to fill in; {@code null} when off. */
    static @Nullable Entry entry(HttpServletRequest request) {
        return (Entry) request.getAttribute(ENTRY);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (out == null) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        Instant time = clock.instant();
        long started = System.nanoTime();
        Entry entry = new Entry();
        request.setAttribute(ENTRY, entry);
        boolean async = false;
        try {
            chain.doFilter(req, res);
            if (request.isAsyncStarted()) {
                // answered asynchronously: the line is written once the answer ends (and was settled)
                request.getAsyncContext().addListener(new AsyncListener() {
                    @Override
                    public void onComplete(AsyncEvent event) {
                        write(line(request, response, entry, time, (System.nanoTime() - started) / 1_000_000));
                    }

                    @Override
                    public void onTimeout(AsyncEvent event) {}

                    @Override
                    public void onError(AsyncEvent event) {}

                    @Override
                    public void onStartAsync(AsyncEvent event) {}
                });
                async = true;
            }
        } finally {
            if (!async) {
                write(line(request, response, entry, time, (System.nanoTime() - started) / 1_000_000));
            }
        }
    }

    private static ObjectNode line(
            HttpServletRequest request, HttpServletResponse response, Entry entry, Instant time, long latencyMs) {
        ObjectNode line = OpenAi.JSON.createObjectNode();
        line.put("time", time.toString());
        @Nullable Exchange exchange = Exchange.find(request);
        line.put("tenant", exchange == null ? null : exchange.account().tenant());
        line.put("method", request.getMethod());
        // the path alone: a query string could carry anything a client put there
        line.put("endpoint", request.getRequestURI());
        line.put("model", entry.model);
        line.put("status", response.getStatus());
        Admission.@Nullable Ticket ticket = entry.ticket;
        @Nullable
        Decision decision = ticket != null
                ? ticket.decision()
                : request.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE) instanceof Decision d ? d : null;
        if (ticket != null && decision == null) {
            line.put("decision", "concurrency_limited");
            line.putNull("window");
        } else if (decision != null) {
            line.put("decision", decision.allowed() ? "allowed" : "rejected");
            line.put("window", decision.window().name());
            if (decision.degraded()) {
                // admitted while the store could not decide: the windows not checked (none when every
                // window was decided against this instance's share)
                ArrayNode unchecked = line.putArray("degraded");
                decision.unchecked().stream().map(Window::name).distinct().forEach(unchecked::add);
            }
            if (!decision.shadowRefusals().isEmpty()) {
                // admitted, though these shadow windows would have refused it: X-RateLimit-Shadow's names
                ArrayNode shadow = line.putArray("shadow");
                ShadowRefusals.windows(decision).forEach(shadow::add);
            }
        } else {
            line.putNull("decision");
            line.putNull("window");
        }
        putTokens(line, "estimatedTokens", entry.estimatedTokens);
        putTokens(line, "settledTokens", ticket == null ? -1 : ticket.settledTokens());
        if (ticket != null && ticket.charge().price() != null) {
            // priced models only: what the admission reserved and what the settlement charged, in US dollars
            line.put("estimatedUsd", Gateway.dollars(ticket.estimate().get(Window.Unit.USD_MICROS)));
            long settled = ticket.settledMicros();
            if (settled >= 0) {
                line.put("settledUsd", Gateway.dollars(settled));
            } else {
                line.putNull("settledUsd");
            }
        }
        line.put("ending", ticket == null ? null : ticket.ending());
        line.put("latencyMs", latencyMs);
        if (entry.upstreamStatus >= 0) {
            line.put("upstreamStatus", entry.upstreamStatus);
        } else {
            line.putNull("upstreamStatus");
        }
        return line;
    }

    private static void putTokens(ObjectNode line, String field, long tokens) {
        if (tokens >= 0) {
            line.put(field, tokens);
        } else {
            line.putNull(field);
        }
    }

    private void write(ObjectNode line) {
        OutputStream target = out;
        if (target == null) {
            return;
        }
        byte[] bytes;
        try {
            bytes = (OpenAi.JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            return; // a tree of strings and numbers always serializes
        }
        synchronized (this) { // whole lines, never interleaved
            try {
                target.write(bytes);
                target.flush();
            } catch (IOException e) {
                // a full disk must not fail the request the line describes
            }
        }
    }

    @Override
    public void close() {
        OutputStream target = out;
        if (target != null && !(target instanceof PrintStream)) {
            synchronized (this) {
                try {
                    target.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
        }
    }
}
