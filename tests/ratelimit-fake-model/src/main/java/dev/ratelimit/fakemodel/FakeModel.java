package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.http.HttpField;
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
 * A fake model provider on a free port of 127.0.0.1, speaking OpenAI's, Anthropic's and Gemini's
 * APIs over HTTP/1.1 (and h2c with prior knowledge when {@linkplain Builder#h2c asked}). Every call
 * is recorded ({@link #calls}); OpenAI's files and batches, Anthropic's message batches and the
 * model lists are served from the fake's state; any other call is answered by the next {@linkplain
 * #enqueue queued} behaviour, or by the default one ({@link #answerByDefault}). Each call has a
 * thread of its own, so a behaviour may block.
 */
public final class FakeModel implements AutoCloseable {

    /** The default answer's text. */
    public static final String DEFAULT_TEXT = "Hello from the fake model";

    /** The default answer's usage: 11 prompt and 7 completion tokens. */
    public static final Usage DEFAULT_USAGE = Usage.of(11, 7);

    /**
     * The default answer: {@link #DEFAULT_TEXT} with {@link #DEFAULT_USAGE}, or a call of the first
     * tool a chat completion offers until its history holds a tool result.
     */
    public static final Reply DEFAULT_REPLY =
            Reply.text(DEFAULT_TEXT).usage(DEFAULT_USAGE).callingTools();

    private final Server server;
    private final ServerConnector connector;
    private final String name;
    private final Clock clock;
    private final List<String> models;
    private final AtomicLong ids = new AtomicLong();
    private final BlockingQueue<Behaviour> queue = new LinkedBlockingQueue<>();
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final OpenAiBatches openAiBatches = new OpenAiBatches();
    private final AnthropicBatches anthropicBatches = new AnthropicBatches();
    private volatile Behaviour fallback;

    private FakeModel(Builder builder) {
        this.name = builder.name;
        this.clock = builder.clock;
        this.models = List.copyOf(builder.models);
        this.fallback = builder.answer;
        QueuedThreadPool threads = new QueuedThreadPool(builder.threads);
        threads.setName(name + "-model");
        threads.setDaemon(true);
        server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        connector = builder.h2c
                ? new ServerConnector(server, new HttpConnectionFactory(http), new HTTP2CServerConnectionFactory(http))
                : new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                serve(request, response, callback);
                return true;
            }
        });
    }

    /**
     * Returns a builder of a fake model.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a fake model of the defaults: it answers {@link #DEFAULT_REPLY}.
     *
     * @return the started fake
     * @throws IllegalStateException if it cannot start
     */
    public static FakeModel start() {
        return builder().start();
    }

    /**
     * Returns the root URL, {@code http://127.0.0.1:<port>}, for clients that add an API's version.
     *
     * @return the root URL
     */
    public String rootUrl() {
        return "http://127.0.0.1:" + connector.getLocalPort();
    }

    /**
     * Returns the base URL of OpenAI's and Anthropic's APIs, {@code http://127.0.0.1:<port>/v1}.
     *
     * @return the base URL
     */
    public String baseUrl() {
        return rootUrl() + "/v1";
    }

    /**
     * Returns the base URL of the Gemini API, {@code http://127.0.0.1:<port>/v1beta}, as Google's is
     * {@code https://generativelanguage.googleapis.com/v1beta}.
     *
     * @return the base URL
     */
    public String geminiBaseUrl() {
        return rootUrl() + "/v1beta";
    }

    /**
     * Queues how the next call the fake has no state-served answer for is answered.
     *
     * @param behaviour the behaviour
     */
    public void enqueue(Behaviour behaviour) {
        queue.add(Objects.requireNonNull(behaviour, "behaviour must not be null"));
    }

    /**
     * Drops the queued behaviours not used yet.
     */
    public void clearQueue() {
        queue.clear();
    }

    /**
     * Sets how calls are answered when nothing is queued.
     *
     * @param behaviour the behaviour
     */
    public void answerByDefault(Behaviour behaviour) {
        fallback = Objects.requireNonNull(behaviour, "behaviour must not be null");
    }

    /**
     * Returns every call received, oldest first.
     *
     * @return the calls (a live, thread-safe list)
     */
    public List<Call> calls() {
        return calls;
    }

    /**
     * Returns the connections open to the fake now.
     *
     * @return the open connections
     */
    public int connections() {
        return connector.getConnectedEndPoints().size();
    }

    /**
     * Returns OpenAI's files and batches of this fake.
     *
     * @return the batches
     */
    public OpenAiBatches openAiBatches() {
        return openAiBatches;
    }

    /**
     * Returns Anthropic's message batches of this fake.
     *
     * @return the batches
     */
    public AnthropicBatches anthropicBatches() {
        return anthropicBatches;
    }

    private void serve(Request request, Response response, Callback callback) {
        try {
            byte[] bytes = Content.Source.asInputStream(request).readAllBytes();
            Map<String, String> headers = new LinkedHashMap<>();
            for (HttpField field : request.getHeaders()) {
                headers.putIfAbsent(field.getName(), field.getValue());
            }
            Call call = new Call(
                    request.getMethod(),
                    request.getHttpURI().getPath(),
                    request.getHttpURI().getQuery(),
                    headers,
                    bytes);
            calls.add(call);
            Exchange exchange = new Exchange(
                    response,
                    name + "-" + ids.incrementAndGet(),
                    clock.instant().getEpochSecond());
            if (!openAiBatches.serve(call, exchange)
                    && !anthropicBatches.serve(call, exchange)
                    && !models(call, exchange)) {
                Behaviour next = queue.poll();
                (next == null ? fallback : next).answer(call, exchange);
            }
            exchange.finish();
            callback.succeeded();
        } catch (Throwable e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            callback.failed(e); // before the answer began: a 500; after: the connection is aborted
        }
    }

    /** Answers the model lists: OpenAI's {@code GET /v1/models[/{id}]}, Gemini's {@code GET /v1beta/models[/{id}]}. */
    private boolean models(Call call, Exchange exchange) throws IOException {
        String path = call.path();
        if (!call.method().equals("GET")) {
            return false;
        }
        if (path.equals("/v1/models")) {
            ObjectNode list = Json.object().put("object", "list");
            ArrayNode data = list.putArray("data");
            models.forEach(model -> data.add(openAiModel(model)));
            exchange.json(200, list);
            return true;
        }
        if (path.startsWith("/v1/models/")) {
            String id = path.substring("/v1/models/".length());
            if (models.contains(id)) {
                exchange.json(200, openAiModel(id));
            } else {
                exchange.json(
                        404,
                        Failure.status(404)
                                .message("The model '" + id + "' does not exist.")
                                .code("model_not_found")
                                .body(Api.Provider.OPENAI));
            }
            return true;
        }
        if (path.equals("/v1beta/models")) {
            ObjectNode list = Json.object();
            ArrayNode data = list.putArray("models");
            models.forEach(model -> data.add(geminiModel(model)));
            exchange.json(200, list);
            return true;
        }
        if (path.startsWith("/v1beta/models/") && !path.contains(":")) {
            exchange.json(200, geminiModel(path.substring("/v1beta/models/".length())));
            return true;
        }
        return false;
    }

    private static ObjectNode openAiModel(String id) {
        return Json.object()
                .put("id", id)
                .put("object", "model")
                .put("created", 0)
                .put("owned_by", "ratelimit");
    }

    private static ObjectNode geminiModel(String id) {
        ObjectNode model = Json.object()
                .put("name", "models/" + id)
                .put("displayName", id)
                .put("inputTokenLimit", 1_048_576)
                .put("outputTokenLimit", 8_192);
        model.putArray("supportedGenerationMethods").add("generateContent").add("countTokens");
        return model;
    }

    /** Stops the fake; calls still open are cut. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("the fake model did not stop", e);
        }
    }

    /** Sets up a {@link FakeModel}. */
    public static final class Builder {
        private String name = "fake";
        private int threads = 200;
        private boolean h2c;
        private Clock clock = Clock.systemUTC();
        private final List<String> models = new ArrayList<>();
        private Behaviour answer = DEFAULT_REPLY;

        private Builder() {}

        /**
         * Names the fake: its threads ({@code <name>-model}) and the ids of its answers.
         *
         * @param name the name, such as {@code mock}
         * @return this builder
         */
        public Builder name(String name) {
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
            this.name = name;
            return this;
        }

        /**
         * Sets the most calls served at once (200 by default): each holds a thread.
         *
         * @param threads the most threads
         * @return this builder
         */
        public Builder threads(int threads) {
            if (threads < 8) {
                throw new IllegalArgumentException("threads must be at least 8: " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * Serves h2c with prior knowledge beside HTTP/1.1 on the same port; needs {@code
         * jetty-http2-server} on the class path.
         *
         * @return this builder
         */
        public Builder h2c() {
            this.h2c = true;
            return this;
        }

        /**
         * Sets the clock of the answers' creation times (the system's by default).
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Adds models to the model lists ({@code GET /v1/models}, {@code GET /v1beta/models}).
         *
         * @param models the models' ids
         * @return this builder
         */
        public Builder models(List<String> models) {
            this.models.addAll(models);
            return this;
        }

        /**
         * Sets how calls are answered when nothing is queued.
         *
         * @param answer the default behaviour
         * @return this builder
         */
        public Builder answer(Behaviour answer) {
            this.answer = Objects.requireNonNull(answer, "answer must not be null");
            return this;
        }

        /**
         * Starts the fake on a free port of 127.0.0.1.
         *
         * @return the started fake
         * @throws IllegalStateException if it cannot start
         */
        public FakeModel start() {
            FakeModel fake = new FakeModel(this);
            try {
                fake.server.start();
            } catch (Exception e) {
                throw new IllegalStateException("the fake model did not start", e);
            }
            return fake;
        }
    }
}
