package dev.ratelimit.gateway;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * HTTP/1.1 on a socket the test holds, for tests that choose how a client reads (slowly, not at all)
 * or which connection a request goes on: a request written as it is, an answer read whole, with its
 * body by {@code Content-Length} or chunked.
 */
final class RawHttp {

    /** One answer: status, headers (names in lower case) and body. */
    record Answer(int status, Map<String, String> headers, String body) {

        @Nullable
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private RawHttp() {}

    /**
     * A socket to the gateway; {@code receiveBuffer} above 0 sets a small receive buffer before it
     * connects, so a client that does not read holds the gateway's writes back soon.
     */
    static Socket connect(int port, int receiveBuffer) throws IOException {
        Socket socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.setSoTimeout(60_000);
        socket.connect(new InetSocketAddress("127.0.0.1", port));
        return socket;
    }

    /** Writes a JSON POST, keeping the connection open. */
    static void post(Socket socket, String path, String key, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        OutputStream out = socket.getOutputStream();
        out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + key
                        + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
    }

    /** Reads one whole answer. */
    static Answer read(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        Answer head = read(in, body);
        return new Answer(head.status(), head.headers(), body.toString(StandardCharsets.UTF_8));
    }

    /** Reads one whole answer, its body into {@code body} as it arrives; the answer returned has none. */
    static Answer read(InputStream in, OutputStream body) throws IOException {
        String status = line(in);
        Map<String, String> headers = new LinkedHashMap<>();
        String header;
        while (!(header = line(in)).isEmpty()) {
            int colon = header.indexOf(':');
            headers.put(
                    header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    header.substring(colon + 1).trim());
        }
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            while (true) {
                int size = Integer.parseInt(line(in).split(";", 2)[0].trim(), 16);
                if (size == 0) {
                    line(in); // the blank line after the last chunk (no trailers)
                    break;
                }
                body.write(in.readNBytes(size));
                line(in);
            }
        } else if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        }
        return new Answer(Integer.parseInt(status.split(" ")[1]), headers, "");
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new EOFException("the connection ended inside an answer: " + line);
            }
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString();
    }
}
