package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.GatewayConfig.TierConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The gateway's read-only endpoints: the status page and its JSON, health and metrics. */
final class InfoServlets {

    private InfoServlets() {}

    /** {@code GET /}: the status page; any other unmapped path: a JSON 404. */
    static final class StatusPage extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private static final byte[] PAGE = page();

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
            if (!path.equals("/") && !path.isEmpty()) {
                OpenAi.error(
                        response,
                        404,
                        "invalid_request_error",
                        "unknown_url",
                        null,
                        "Unknown path " + path + ". Try POST /v1/chat/completions, or GET / for the status page.");
                return;
            }
            OpenAi.write(response, 200, "text/html", PAGE);
        }

        private static byte[] page() {
            try (InputStream in = StatusPage.class.getResourceAsStream("status.html")) {
                return Objects.requireNonNull(in, "status.html").readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * {@code GET /status.json}: every tenant's windows (limit, used, time to reset) as of its last
     * decision, its slots in flight, and the upstream caps.
     */
    static final class StatusJson extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Gateway gateway;
        private final boolean limiterDisabled;

        StatusJson(Gateway gateway, boolean limiterDisabled) {
            this.gateway = gateway;
            this.limiterDisabled = limiterDisabled;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setHeader("Cache-Control", "no-store");
            OpenAi.json(response, 200, status(gateway, limiterDisabled));
        }
    }

    static ObjectNode status(Gateway gateway, boolean limiterDisabled) {
        ObjectNode status = OpenAi.JSON.createObjectNode();
        status.put("store", gateway.store());
        status.put("slots", gateway.slots().description());
        status.put("upstream", gateway.upstream().description());
        status.put("limiter", limiterDisabled ? "DISABLED (kill switch): every request passes" : "enabled");
        Instant now = gateway.board().clock().instant();
        ArrayNode tenants = status.putArray("tenants");
        for (Map.Entry<String, TierConfig> entry : gateway.config().tenants().entrySet()) {
            String tenant = entry.getKey();
            TierConfig tier = entry.getValue();
            ObjectNode node = tenants.addObject();
            node.put("tenant", tenant);
            node.put("tier", tier.name());
            node.put("inFlight", gateway.slots().inFlight(tenant));
            node.put("maxConcurrent", tier.maxConcurrent());
            windows(node, tier.tier().windows(), gateway.board().snapshot(tenant), now);
        }
        ArrayNode models = status.putArray("models");
        for (ModelCap cap : gateway.config().models().values()) {
            ObjectNode node = models.addObject().put("model", cap.model());
            windows(
                    node,
                    cap.budget().windows(),
                    gateway.board().snapshot(cap.budget().name()),
                    now);
        }
        return status;
    }

    /**
     * Lists windows, requests first then tokens, each shortest first, with their counts as of the
     * owner's last decision ({@code used} null before it has one), and when that was.
     */
    private static void windows(
            ObjectNode node, List<Window> windows, StatusBoard.@Nullable Snapshot snapshot, Instant now) {
        Duration age = snapshot == null ? Duration.ZERO : Duration.between(snapshot.at(), now);
        if (snapshot == null) {
            node.putNull("seenSecondsAgo");
        } else {
            node.put("seenSecondsAgo", age.toSeconds());
        }
        List<WindowState> seen = snapshot == null ? List.of() : snapshot.windows();
        ArrayNode array = node.putArray("windows");
        windows.stream()
                .sorted(Comparator.comparing(Window::isTokens).thenComparing(Window::length))
                .forEach(window -> {
                    ObjectNode w = array.addObject()
                            .put("name", window.name())
                            .put("unit", window.isTokens() ? "tokens" : "requests")
                            .put("limit", window.limit())
                            .put("seconds", window.lengthSeconds());
                    WindowState state = seen.stream()
                            .filter(candidate -> candidate.name().equals(window.name()))
                            .findFirst()
                            .orElse(null);
                    if (state == null) {
                        w.putNull("used");
                        w.putNull("resetSeconds");
                    } else {
                        Duration reset = state.resetAfter().minus(age);
                        w.put("used", state.used());
                        w.put("resetSeconds", RateLimitHeaders.ceilSeconds(reset.isNegative() ? Duration.ZERO : reset));
                    }
                });
    }

    /** {@code GET /health}: never limited. */
    static final class Health extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Gateway gateway;

        Health(Gateway gateway) {
            this.gateway = gateway;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            ObjectNode body = OpenAi.JSON
                    .createObjectNode()
                    .put("status", "UP")
                    .put("store", gateway.store().split(" ")[0]);
            OpenAi.json(response, 200, body);
        }
    }

    /** {@code GET /metrics}: the Micrometer registry in the Prometheus text format. */
    static final class Metrics extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient PrometheusMeterRegistry registry;

        Metrics(PrometheusMeterRegistry registry) {
            this.registry = registry;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            OpenAi.write(
                    response,
                    200,
                    "text/plain; version=0.0.4",
                    registry.scrape().getBytes(StandardCharsets.UTF_8));
        }
    }
}
