package dev.ratelimit.testsupport.redis;

/** Thrown by {@link RespClient} when Redis answers with an error reply. */
public final class RespException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the error reply, for example {@code "NOSCRIPT No matching script"}
     */
    public RespException(String message) {
        super(message);
    }
}
