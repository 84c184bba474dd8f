package dev.ratelimit.testsupport.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A minimal blocking Redis client over a plain socket, for inspecting test servers without a
 * driver: commands go out as RESP arrays of bulk strings, replies come back as {@link String}
 * (simple and bulk strings, UTF-8), {@link Long}, {@link List} or {@code null}, and error replies
 * are thrown as {@link RespException}. Not thread-safe.
 */
public final class RespClient implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RespClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Connects to a server; every read then waits at most {@code timeout}.
     *
     * @param host the host, for example {@code 127.0.0.1}
     * @param port the port
     * @param timeout the connect and read timeout
     * @return a connected client
     * @throws UncheckedIOException if the server cannot be reached
     */
    public static RespClient connect(String host, int port, Duration timeout) {
        Objects.requireNonNull(host, "host must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        Socket socket = new Socket();
        try {
            int millis = (int) Math.max(1, timeout.toMillis());
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.setTcpNoDelay(true);
            return new RespClient(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException("Cannot connect to Redis at " + host + ":" + port, e);
        }
    }

    /**
     * Sends a command and returns its reply.
     *
     * @param command the command and its arguments, for example {@code "ZCARD", "key"}
     * @return the reply
     * @throws RespException if Redis answers with an error
     * @throws UncheckedIOException if the connection fails or times out
     */
    public @Nullable Object call(String... command) {
        send(command);
        return read();
    }

    /**
     * Sends a command without reading its reply (for {@code MONITOR} or pipelining).
     *
     * @param command the command and its arguments
     * @throws UncheckedIOException if the connection fails
     */
    public void send(String... command) {
        Objects.requireNonNull(command, "command must not be null");
        try {
            out.write(('*' + Integer.toString(command.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String part : command) {
                byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
                out.write(('$' + Integer.toString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.write('\r');
                out.write('\n');
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot send to Redis", e);
        }
    }

    /**
     * Reads one reply.
     *
     * @return the reply
     * @throws RespException if the reply is an error
     * @throws UncheckedIOException if the connection fails or the read times out
     */
    public @Nullable Object read() {
        try {
            return readReply();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read from Redis", e);
        }
    }

    /**
     * Changes how long a read may wait.
     *
     * @param timeout the read timeout
     */
    public void readTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        try {
            socket.setSoTimeout((int) Math.max(1, timeout.toMillis()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private @Nullable Object readReply() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("Redis closed the connection");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new RespException(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length);
                if (bytes.length != length) {
                    throw new EOFException("Redis closed the connection");
                }
                readLine();
                return new String(bytes, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<@Nullable Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(readReply());
                }
                return items;
            }
            default:
                throw new IOException("Unsupported RESP reply type '" + (char) type + "'");
        }
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("Redis closed the connection");
            }
            if (b == '\r') {
                int next = in.read();
                if (next == '\n') {
                    return line.toString(StandardCharsets.UTF_8);
                }
                line.write(b);
                if (next < 0) {
                    throw new EOFException("Redis closed the connection");
                }
                line.write(next);
            } else {
                line.write(b);
            }
        }
    }

    /** Closes the socket. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing to do: the socket is gone either way
        }
    }
}
