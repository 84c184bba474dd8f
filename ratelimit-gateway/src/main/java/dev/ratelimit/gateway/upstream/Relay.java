package dev.ratelimit.gateway.upstream;

import dev.ratelimit.gateway.metrics.GatewayMetrics;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.Content;
import org.jspecify.annotations.Nullable;

/**
 * Moves one upstream response body to its client with asynchronous I/O on both sides and no thread
 * of its own: the upstream's bytes are read by demand ({@link Content.Source}), passed through a
 * {@link Transform} (server-sent events read and relayed one by one, or bytes as they are), and
 * written to the client with the servlet API's non-blocking output ({@link WriteListener}). Each
 * step runs on the thread whose event allowed it (the upstream client's when bytes arrived, the
 * server's when the client can take more), one step at a time.
 *
 * <p>Backpressure: the relay holds at most {@code bound} bytes for its client (plus what one read
 * of the upstream brought, at most Jetty's response buffer, 16 KiB, and one event being completed),
 * and stops reading from the upstream while it holds that many, so a client that reads slowly
 * pauses the upstream (its TCP window closes) instead of being buffered an answer. Not reused: one
 * per response.
 */
public final class Relay implements WriteListener {

    private static final System.Logger LOG = System.getLogger(Relay.class.getName());

    /** What the bytes mean on their way from the upstream to the client. */
    public interface Transform {

        /**
         * Reads bytes from the upstream and appends what goes on to the client.
         *
         * @throws IOException when the upstream's bytes cannot be relayed (an event too large): the
         *     relay ends as if the upstream failed
         */
        void onBytes(ByteBuffer bytes, ByteArrayOutputStream out) throws IOException;

        /** The upstream's body ended: appends what is left to relay. */
        default void onEnd(ByteArrayOutputStream out) {}
    }

    /** Relays bytes as they are. */
    public static final Transform AS_IS = (bytes, out) -> {
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        out.write(copy, 0, copy.length);
    };

    /** How a relay ended. */
    public enum End {
        /** The upstream's body ended and the client took every byte of it. */
        FINISHED,
        /** Reading the upstream failed (reset, idle timeout, aborted); the client took what came before. */
        UPSTREAM_FAILED,
        /** A write to the client failed, or the client took nothing for its idle timeout. */
        CLIENT_GONE
    }

    /** Told once how the relay ended, on the relay's step: settles, and names what the client gets last. */
    public interface Finish {

        /**
         * @return bytes the client gets last (an error event after a stream that broke off), or
         *     {@code null}
         */
        byte @Nullable [] ended(End end, @Nullable Throwable cause);

        /** A step threw: nothing more is relayed and the answer is ended. */
        void crashed(Throwable failure);
    }

    private final AsyncClient client;
    private final Content.@Nullable Source source;
    private final Transform transform;
    private final int bound;
    private final Finish finish;
    private final GatewayMetrics.Relays meters;
    private final AtomicInteger wip = new AtomicInteger();
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    private @Nullable ServletOutputStream out;
    private volatile @Nullable Throwable clientFailure;
    private volatile boolean demanding;
    private boolean upstreamDone;
    private @Nullable Throwable upstreamFailure;
    private boolean needFlush = true; // status and headers go out before the first byte of the body
    private boolean ended;
    private boolean completed;
    private boolean paused;
    private boolean watching; // the caller quieted the connection before it sent the request upstream

    /**
     * @param source the upstream's body, or {@code null} when everything to send is in the transform's
     *     {@link Transform#onEnd}
     * @param bound the most bytes held for the client before the upstream is paused
     */
    public Relay(
            AsyncClient client,
            Content.@Nullable Source source,
            Transform transform,
            int bound,
            Finish finish,
            GatewayMetrics.Relays meters) {
        this.client = client;
        this.source = source;
        this.transform = transform;
        this.bound = bound;
        this.finish = finish;
        this.meters = meters;
    }

    /**
     * Sends {@code bytes} as the whole body: the client's status and headers are set by the caller.
     */
    public static void send(AsyncClient client, byte[] bytes, GatewayMetrics.Relays meters) {
        new Relay(
                        client,
                        Content.Source.from(ByteBuffer.wrap(bytes)),
                        AS_IS,
                        Math.max(1, bytes.length),
                        new Finish() {
                            @Override
                            public byte @Nullable [] ended(End end, @Nullable Throwable cause) {
                                return null;
                            }

                            @Override
                            public void crashed(Throwable failure) {
                                // the answer ends as it is
                            }
                        },
                        meters)
                .start();
    }

    /** Starts relaying: the status and headers set on the response so far go out first. */
    public void start() {
        meters.started();
        try {
            ServletOutputStream output = client.response().getOutputStream();
            out = output;
            output.setWriteListener(this); // the container calls onWritePossible once it may write
        } catch (IOException | RuntimeException e) {
            clientFailure = e;
            wake();
        }
    }

    @Override
    public void onWritePossible() {
        wake();
    }

    @Override
    public void onError(Throwable failure) {
        clientFailure = failure;
        wake();
    }

    private void upstreamReady() {
        demanding = false;
        wake();
    }

    /** Runs the steps one at a time, on the thread that arrives while none runs. */
    private void wake() {
        if (wip.getAndIncrement() != 0) {
            return; // the thread running the steps runs one more for this
        }
        int missed = 1;
        do {
            try {
                step();
            } catch (RuntimeException e) {
                crash(e);
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void step() {
        ServletOutputStream output = out;
        while (!completed) {
            Throwable gone = clientFailure;
            if (gone != null || output == null) {
                clientGone(gone == null ? new IOException("no output") : gone);
                return;
            }
            boolean moved = false;
            boolean clientReady = true;
            if (pending.size() > 0 || needFlush) {
                try {
                    if (output.isReady()) {
                        if (pending.size() > 0) {
                            byte[] bytes = pending.toByteArray(); // the container may hold it until written
                            pending.reset();
                            output.write(bytes);
                            needFlush = true;
                        } else {
                            needFlush = false;
                            output.flush();
                        }
                        moved = true;
                    } else {
                        clientReady = false; // onWritePossible comes when the client took the bytes
                    }
                } catch (IOException e) {
                    clientFailure = e; // a write that failed before: the client is gone
                    continue;
                }
            }
            Content.Source upstream = source;
            if (!ended && !upstreamDone && pending.size() < bound) {
                if (upstream == null) {
                    upstreamDone = true;
                    transform.onEnd(pending);
                    moved = true;
                } else if (!demanding) {
                    Content.Chunk chunk = upstream.read();
                    if (chunk == null) {
                        demanding = true;
                        upstream.demand(this::upstreamReady);
                    } else {
                        take(upstream, chunk);
                        moved = true;
                    }
                }
            }
            pause(!ended && !upstreamDone && pending.size() >= bound);
            if (!ended && upstreamDone && pending.size() == 0 && !needFlush) {
                ended = true;
                Throwable failure = upstreamFailure;
                byte[] last = finish.ended(failure == null ? End.FINISHED : End.UPSTREAM_FAILED, failure);
                if (last != null && last.length > 0) {
                    pending.write(last, 0, last.length);
                }
                moved = true;
            } else if (ended && pending.size() == 0 && !needFlush) {
                if (output.isReady()) {
                    complete();
                    return;
                }
                clientReady = false;
            }
            if (!moved) {
                watch(!clientReady);
                return;
            }
        }
    }

    private void take(Content.Source upstream, Content.Chunk chunk) {
        try {
            if (Content.Chunk.isFailure(chunk)) {
                upstreamDone = true;
                upstreamFailure = chunk.getFailure();
                return;
            }
            ByteBuffer bytes = chunk.getByteBuffer();
            if (bytes.hasRemaining()) {
                transform.onBytes(bytes, pending);
            }
            if (chunk.isLast()) {
                upstreamDone = true;
                transform.onEnd(pending);
            }
            meters.held(pending.size());
        } catch (IOException e) {
            upstreamDone = true;
            upstreamFailure = e;
            upstream.fail(e);
        } finally {
            chunk.release();
        }
    }

    private void clientGone(Throwable cause) {
        pending.reset();
        if (!ended) {
            ended = true;
            finish.ended(End.CLIENT_GONE, cause);
        }
        complete();
    }

    private void crash(Throwable failure) {
        if (completed) {
            return;
        }
        LOG.log(System.Logger.Level.WARNING, "a relay failed; its answer is ended", failure);
        pending.reset();
        if (!ended) {
            ended = true;
            try {
                finish.crashed(failure);
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
        complete();
    }

    /**
     * Runs the client's idle timeout while a write waits for the client, and stops it while the
     * relay waits for the upstream; changed only when that changes, so the client's silence is timed
     * from the write it holds back.
     */
    private void watch(boolean now) {
        if (now != watching) {
            watching = now;
            if (now) {
                client.watch();
            } else {
                client.quiet();
            }
        }
    }

    private void pause(boolean now) {
        if (now != paused) {
            paused = now;
            meters.paused(now);
        }
    }

    private void complete() {
        completed = true;
        pause(false);
        meters.ended();
        client.complete();
    }
}
