package dev.ratelimit.gateway.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * Jetty's own error answers (a request line or headers too large, a request it cannot parse, an
 * error that escaped a handler) in OpenAI's error shape instead of Jetty's HTML page, with a message
 * that names the problem and never the parser's or a class's internals.
 */
public final class JsonErrors extends ErrorHandler {

    @Override
    protected void generateResponse(
            Request request,
            Response response,
            int code,
            @Nullable String message,
            @Nullable Throwable cause,
            Callback callback) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body(code)), callback);
    }

    /** Every method gets the JSON body: Jetty's own handler gives one only to GET, POST and HEAD. */
    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    public ByteBuffer badMessageError(int status, @Nullable String reason, HttpFields.Mutable fields) {
        fields.put(new HttpField(HttpHeader.CONTENT_TYPE, "application/json"));
        return ByteBuffer.wrap(body(status));
    }

    static byte[] body(int status) {
        String message = switch (status) {
            case 400 -> "The request is not valid HTTP.";
            case 404 -> "Unknown path.";
            case 405 -> "This method is not allowed on this path.";
            case 413 -> "The request body is too large.";
            case 414 -> "The request URI is too long.";
            case 431 -> "The request's headers are too large.";
            case 500 -> "The gateway failed while answering this request.";
            default -> HttpStatus.getMessage(status) + ".";
        };
        String code = switch (status) {
            case 400 -> "bad_request";
            case 404 -> "unknown_url";
            case 405 -> "method_not_allowed";
            case 413 -> "request_too_large";
            case 414 -> "uri_too_long";
            case 431 -> "headers_too_large";
            default -> status >= 500 ? "server_error" : "http_" + status;
        };
        try {
            return OpenAi.JSON.writeValueAsBytes(
                    OpenAi.errorBody(status >= 500 ? "server_error" : "invalid_request_error", code, null, message));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
