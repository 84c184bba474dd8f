package dev.ratelimit.gateway.admin;

import dev.ratelimit.gateway.protocol.openai.OpenAi;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** The gateway's read-only endpoints: the status page and its JSON, health and metrics. */
public final class InfoServlets {

    private InfoServlets() {}

    /** {@code GET /}: the status page; any other unmapped path: a JSON 404. */
    public static final class StatusPage extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private static final byte[] PAGE = page();

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
            if (!path.equals("/") && !path.isEmpty()) {
                OpenAi.unknownUrl(
                        response,
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
     * Every path of the API listener that no other servlet serves, the status page's included: a JSON
     * 404, so the admin surfaces are not even named to a client of the API.
     */
    public static final class NotFound extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
            OpenAi.unknownUrl(
                    response,
                    "Unknown path " + (path.isEmpty() ? "/" : path) + ". Try POST /v1/chat/completions or"
                            + " POST /v1/embeddings.");
        }
    }

    /**
     * {@code GET /status.json}: every tenant's windows (limit, used, time to reset) and slots in
     * flight, and the upstream caps, as the store holds them now.
     */
    public static final class StatusJson extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient StatusReport report;

        public StatusJson(StatusReport report) {
            this.report = report;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setHeader("Cache-Control", "no-store");
            OpenAi.write(response, 200, "application/json", report.json());
        }
    }

    /**
     * {@code GET /health}: the store and the slots ({@link HealthCheck}), 200 while up or degraded,
     * 503 when failing closed; {@code /health/live}: 200 while the process serves HTTP at all (a
     * store outage is no reason to restart the gateway); {@code /health/ready}: 200 while it takes
     * requests, 503 when failing closed or shutting down. Never limited, no key needed.
     */
    public static final class Health extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient HealthCheck health;

        public Health(HealthCheck health) {
            this.health = health;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setHeader("Cache-Control", "no-store");
            String path = request.getPathInfo() == null ? "" : request.getPathInfo();
            switch (path) {
                case "", "/" -> {
                    HealthCheck.Result result = health.check();
                    OpenAi.json(response, result.status() == HealthCheck.Status.DOWN ? 503 : 200, result.body());
                }
                case "/live" ->
                    OpenAi.json(response, 200, OpenAi.JSON.createObjectNode().put("status", "UP"));
                case "/ready" -> {
                    boolean ready = health.ready();
                    OpenAi.json(
                            response,
                            ready ? 200 : 503,
                            OpenAi.JSON.createObjectNode().put("status", ready ? "UP" : "OUT_OF_SERVICE"));
                }
                default ->
                    OpenAi.unknownUrl(
                            response, "Unknown path /health" + path + ". Try /health, /health/live or /health/ready.");
            }
        }
    }

    /** {@code GET /metrics}: the Micrometer registry in the Prometheus text format. */
    public static final class Metrics extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient PrometheusMeterRegistry registry;

        public Metrics(PrometheusMeterRegistry registry) {
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
