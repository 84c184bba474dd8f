package dev.ratelimit.demo;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** The demo's small read-only endpoints: the status page, health and metrics. */
final class InfoServlets {

    private InfoServlets() {}

    /** {@code GET /}: a plain-text status page; any other unmapped path: a JSON 404. */
    static final class Status extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Supplier<String> page;

        Status(Supplier<String> page) {
            this.page = page;
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
            if (!path.equals("/") && !path.isEmpty()) {
                Responses.error(
                        response,
                        404,
                        "invalid_request_error",
                        "unknown_url",
                        "Unknown path " + path + ". Try POST /v1/chat/completions.");
                return;
            }
            Responses.text(response, 200, "text/plain", page.get());
        }
    }

    /** {@code GET /health}: exempt from rate limiting. */
    static final class Health extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final String store;

        Health(String store) {
            this.store = store;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", "UP");
            body.put("store", store);
            Responses.json(response, 200, body);
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
            Responses.text(response, 200, "text/plain; version=0.0.4", registry.scrape());
        }
    }
}
