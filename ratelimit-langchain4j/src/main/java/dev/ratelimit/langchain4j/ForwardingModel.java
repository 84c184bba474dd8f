package dev.ratelimit.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What both rate-limited models have in common: the delegate, the limiter, and what they pass
 * through from the delegate unchanged (its default request parameters, listeners, provider and
 * capabilities, asked of it at each call). {@link ChatModel} and {@link StreamingChatModel} have no
 * common parent that declares those, so each model hands over its delegate's methods ({@link
 * #passed(ChatModel)}, {@link #passed(StreamingChatModel)}).
 *
 * @param <M> the delegate's type
 */
abstract class ForwardingModel<M> {

    /** The delegate's methods that the rate-limited model answers with. */
    record Passed(
            Supplier<ChatRequestParameters> parameters,
            Supplier<List<ChatModelListener>> listeners,
            Supplier<ModelProvider> provider,
            Supplier<Set<Capability>> capabilities) {}

    final M delegate;
    final LangChain4jRateLimiter rateLimit;
    private final Passed passed;

    ForwardingModel(M delegate, LangChain4jRateLimiter rateLimit, Passed passed) {
        this.delegate = delegate;
        this.rateLimit = rateLimit;
        this.passed = passed;
    }

    static Passed passed(ChatModel m) {
        return new Passed(m::defaultRequestParameters, m::listeners, m::provider, m::supportedCapabilities);
    }

    static Passed passed(StreamingChatModel m) {
        return new Passed(m::defaultRequestParameters, m::listeners, m::provider, m::supportedCapabilities);
    }

    /**
     * Returns the delegate's default request parameters.
     *
     * @return the delegate's
     */
    public ChatRequestParameters defaultRequestParameters() {
        return passed.parameters().get();
    }

    /**
     * Returns the delegate's listeners.
     *
     * @return the delegate's
     */
    public List<ChatModelListener> listeners() {
        return passed.listeners().get();
    }

    /**
     * Returns the delegate's provider.
     *
     * @return the delegate's
     */
    public ModelProvider provider() {
        return passed.provider().get();
    }

    /**
     * Returns the delegate's capabilities.
     *
     * @return the delegate's
     */
    public Set<Capability> supportedCapabilities() {
        return passed.capabilities().get();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate + "]";
    }
}
