package dev.ratelimit.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A port on 127.0.0.1 that refuses every connection for as long as this object is open: a socket is
 * bound to it and never listens, so nothing else (another test's server, the gateway under test
 * asking for port 0) can be given the port meanwhile.
 *
 * <p>A port found free by opening and closing a {@code ServerSocket} is free only until the next
 * bind; a server started after it may be handed the same port, and then "unreachable" reaches
 * that server instead.
 */
public final class RefusedPort implements AutoCloseable {

    private final Socket socket;

    private RefusedPort(Socket socket) {
        this.socket = socket;
    }

    /**
     * Reserves a port on 127.0.0.1 that refuses connections until {@link #close()}.
     *
     * @return the reservation
     * @throws UncheckedIOException when no port can be bound
     */
    public static RefusedPort open() {
        Socket socket = new Socket();
        try {
            socket.setReuseAddress(false);
            // 127.0.0.1 itself, not getLoopbackAddress(), which is ::1 when the JVM prefers IPv6
            socket.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 0));
            return new RefusedPort(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException("No loopback port to reserve", e);
        }
    }

    /** Returns the reserved port. */
    public int port() {
        return socket.getLocalPort();
    }

    /** Returns the address the port is reserved on, {@code 127.0.0.1}. */
    public String host() {
        return socket.getLocalAddress().getHostAddress();
    }

    /** Frees the port. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
