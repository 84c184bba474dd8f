package dev.ratelimit.fakemodel;

/** How the fake model answers one call: a {@link Reply}, a {@link Failure}, or a script of a test's own. */
@FunctionalInterface
public interface Behaviour {

    /**
     * Answers one call. An exception thrown once the answer has begun breaks the connection off, as
     * an upstream that dies mid-stream does; one thrown before answers 500.
     *
     * @param call what the fake received
     * @param exchange where the answer goes
     * @throws Exception to break the answer off
     */
    void answer(Call call, Exchange exchange) throws Exception;
}
