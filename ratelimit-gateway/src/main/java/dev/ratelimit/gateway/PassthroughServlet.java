package dev.ratelimit.gateway;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;

/**
 * Every other {@code /v1/*} path, {@code GET /v1/models} included: relayed to the upstream as it is,
 * with request limits only: the tenant's request windows are charged, without tokens or a
 * concurrency slot. The response streams back as it arrives.
 */
final class PassthroughServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient Gateway gateway;

    PassthroughServlet(Gateway gateway) {
        this.gateway = gateway;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body;
        try {
            body = Requests.bytes(request, gateway.config().limits().maxBodyBytes());
        } catch (BadRequest e) {
            gateway.metrics().refused("other", e.status, e.code);
            OpenAi.error(response, e.status, "invalid_request_error", e.code, e.param, String.valueOf(e.getMessage()));
            return;
        }
        Admission.Ticket ticket = gateway.admit(response, "other", ApiKeyFilter.account(request), null, 0, false);
        if (ticket == null) {
            return; // answered: 429 or 503
        }
        try {
            relay(request, response, body);
        } finally {
            ticket.commit(0, "passthrough"); // no tokens, no slot: the request itself stays counted
        }
    }

    private void relay(HttpServletRequest request, HttpServletResponse response, byte[] body) throws IOException {
        String path = request.getPathInfo() == null ? "" : request.getPathInfo();
        String query = request.getQueryString() == null ? "" : "?" + request.getQueryString();
        Upstream.Exchange exchange;
        try {
            exchange = gateway.upstream().send(request.getMethod(), path + query, request.getContentType(), body);
        } catch (Upstream.Failure e) {
            e.answer(response);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        response.setStatus(exchange.status());
        Upstream.copyHeaders(exchange, response);
        ServletOutputStream out = response.getOutputStream();
        byte[] buffer = new byte[8192];
        try (InputStream in = exchange.body()) {
            int read;
            while ((read = in.read(buffer)) != -1) {
                try {
                    out.write(buffer, 0, read);
                    out.flush();
                } catch (IOException e) {
                    exchange.abort(); // the client went away
                    return;
                }
            }
        } catch (IOException e) {
            exchange.abort(); // the upstream broke off; the client sees a truncated body
        }
    }
}
