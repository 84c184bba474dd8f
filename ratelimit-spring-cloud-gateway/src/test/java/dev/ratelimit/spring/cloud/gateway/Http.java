package dev.ratelimit.spring.cloud.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client (java.net.http) against the gateway on its random port. */
final class Http {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final int port;

    Http(int port) {
        this.port = port;
    }

    /** GET a path with an API key. */
    HttpResponse<String> get(String path, String apiKey) {
        return get(path, "X-Api-Key", apiKey);
    }

    /** GET a path with a bearer token. */
    HttpResponse<String> getWithToken(String path, String token) {
        return get(path, "Authorization", "Bearer " + token);
    }

    private HttpResponse<String> get(String path, String header, String value) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header(header, value)
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build();
        try {
            return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
