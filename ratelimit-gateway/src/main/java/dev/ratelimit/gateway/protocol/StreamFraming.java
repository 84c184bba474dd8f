package dev.ratelimit.gateway.protocol;

import dev.ratelimit.gateway.upstream.Relay;

/**
 * How a stream's bytes frame its events, for a {@link Relay}: server-sent events ({@link SseRelay}),
 * or a JSON array streamed element by element ({@link JsonArrayRelay}, Gemini's default). Each feeds
 * its {@link SseRelay.Events} watcher one event at a time and knows how its stream ended.
 */
public interface StreamFraming extends Relay.Transform {

    /** The events' watcher. */
    SseRelay.Events events();

    /** How the stream ended, given how its relay ended. */
    SseRelay.Ending ending(Relay.End end);

    /** What the client gets last after a stream that broke off, so it does not take it as finished. */
    byte[] brokenNotice();
}
