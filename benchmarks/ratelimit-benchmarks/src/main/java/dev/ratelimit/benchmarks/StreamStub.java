package dev.ratelimit.benchmarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The upstream of {@link GatewayStreams}: answers {@code POST /v1/chat/completions} with
 * {@code stream: true} by server-sent events in OpenAI's {@code chat.completion.chunk} shape, spread
 * over a duration, then a usage chunk (when {@code stream_options.include_usage} asks for it) and
 * {@code data: [DONE]}. No stream holds a thread: each write is asynchronous, and the next one is
 * scheduled on a timer when the previous has gone out. The duration and the number of chunks come
 * from the request's text ({@code bench ms=30000 chunks=30}).
 *
 * <p>{@code GET /stats} answers {@code open peak started finished failed directOpen}: the gateway's
 * streams open now and at most since the last {@code GET /stats?reset}, and the same for the
 * streams sent straight to {@code /direct/v1/chat/completions} (counted apart, in {@code directOpen}).
 * Several listeners ({@code destinations}) serve the same streams on different ports.
 */
final class StreamStub {

    private static final Pattern SHAPE = Pattern.compile("bench ms=(\\d+) chunks=(\\d+)");
    private static final byte[] FIRST =
            event("{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,"
                    + "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                    + "\"content\":\"Hello\"},\"finish_reason\":null}]}");
    private static final byte[] WORD = event("{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
            + "\" word\"},\"finish_reason\":null}]}");
    private static final String STOP = "{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1764633600,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},"
            + "\"finish_reason\":\"stop\"}]}";

    private final Server server;
    private final ScheduledExecutorService timer;
    private final List<String> urls = new ArrayList<>();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicInteger directOpen = new AtomicInteger();
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    private StreamStub(Server server, ScheduledExecutorService timer) {
        this.server = server;
        this.timer = timer;
    }

    /** Starts the stub on {@code destinations} listeners of 127.0.0.1, each on a port of its own. */
    static StreamStub start(int destinations) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(64);
        threads.setName("stub");
        Server server = new Server(threads);
        for (int i = 0; i < destinations; i++) {
            // HTTP/1.1, and h2c with prior knowledge on the same port (the gateway's http-version: 2)
            HttpConfiguration http = new HttpConfiguration();
            HTTP2CServerConnectionFactory h2c = new HTTP2CServerConnectionFactory(http);
            h2c.setMaxConcurrentStreams(1_000);
            ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http), h2c);
            connector.setHost("127.0.0.1");
            connector.setAcceptQueueSize(4096); // the opening burst: SYNs beyond the backlog would wait for retries
            connector.setIdleTimeout(TimeUnit.MINUTES.toMillis(10));
            server.addConnector(connector);
        }
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "stub-timer");
            thread.setDaemon(true);
            return thread;
        });
        StreamStub stub = new StreamStub(server, timer);
        server.setHandler(stub.new Answer());
        server.start();
        for (var connector : server.getConnectors()) {
            stub.urls.add("http://127.0.0.1:" + ((ServerConnector) connector).getLocalPort());
        }
        return stub;
    }

    List<String> urls() {
        return urls;
    }

    void stop() throws Exception {
        server.stop();
        timer.shutdownNow();
    }

    private String stats(boolean reset) {
        int now = open.get();
        String line = now + " " + peak.get() + " " + started.get() + " " + finished.get() + " " + failed.get() + " "
                + directOpen.get();
        if (reset) {
            peak.set(now);
        }
        return line;
    }

    private static byte[] event(String json) {
        return ("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    private final class Answer extends Handler.Abstract.NonBlocking {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            String path = Request.getPathInContext(request);
            if (path.equals("/stats")) {
                String query = request.getHttpURI().getQuery();
                String body = stats(query != null && query.contains("reset")) + "\n";
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
            if (!request.getMethod().equals("POST") || !path.endsWith("/v1/chat/completions")) {
                Response.writeError(request, response, callback, 404);
                return true;
            }
            boolean direct = path.startsWith("/direct/");
            Content.Source.asStringAsync(request, StandardCharsets.UTF_8).whenComplete((body, failure) -> {
                if (failure != null) {
                    callback.failed(failure);
                    return;
                }
                if (!body.contains("\"stream\":true")) {
                    Response.writeError(request, response, callback, 400, "only streams");
                    return;
                }
                long millis = 30_000;
                int chunks = 30;
                Matcher shape = SHAPE.matcher(body);
                if (shape.find()) {
                    millis = Long.parseLong(shape.group(1));
                    chunks = Math.max(1, Integer.parseInt(shape.group(2)));
                }
                new Exchange(response, callback, millis, chunks, body.contains("\"include_usage\":true"), direct)
                        .begin();
            });
            return true;
        }
    }

    /** One stream: its chunks written one after the other, each when its time has come. */
    private final class Exchange {
        private final Response response;
        private final Callback callback;
        private final long startNanos = System.nanoTime();
        private final long durationNanos;
        private final int chunks;
        private final byte[] last;
        private final boolean direct;
        private final AtomicBoolean ended = new AtomicBoolean();
        private int next;

        Exchange(Response response, Callback callback, long millis, int chunks, boolean usage, boolean direct) {
            this.response = response;
            this.callback = callback;
            this.durationNanos = TimeUnit.MILLISECONDS.toNanos(millis);
            this.chunks = chunks;
            this.direct = direct;
            String end = "data: " + STOP + "\n\n";
            if (usage) {
                end += "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764633600,"
                        + "\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":14,"
                        + "\"completion_tokens\":" + chunks + ",\"total_tokens\":" + (14 + chunks) + "}}\n\n";
            }
            this.last = (end + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
        }

        void begin() {
            started.incrementAndGet();
            if (direct) {
                directOpen.incrementAndGet();
            } else {
                peak.accumulateAndGet(open.incrementAndGet(), Math::max);
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            send();
        }

        private void send() {
            try {
                if (next < chunks) {
                    byte[] chunk = next == 0 ? FIRST : WORD;
                    next++;
                    response.write(false, ByteBuffer.wrap(chunk), Callback.from(this::schedule, this::fail));
                } else {
                    response.write(true, ByteBuffer.wrap(last), Callback.from(this::done, this::fail));
                }
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        /** The next chunk at its time: chunk k at k × duration / chunks, the end at the duration. */
        private void schedule() {
            long due = startNanos + (next < chunks ? durationNanos * next / chunks : durationNanos);
            long delay = Math.max(0, due - System.nanoTime());
            try {
                timer.schedule(this::send, delay, TimeUnit.NANOSECONDS);
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        private void done() {
            if (ended.compareAndSet(false, true)) {
                finished.incrementAndGet();
                closed();
                callback.succeeded();
            }
        }

        private void fail(Throwable failure) {
            if (ended.compareAndSet(false, true)) {
                failed.incrementAndGet();
                closed();
                callback.failed(failure);
            }
        }

        private void closed() {
            if (direct) {
                directOpen.decrementAndGet();
            } else {
                open.decrementAndGet();
            }
        }
    }
}
