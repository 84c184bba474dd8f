package dev.ratelimit.core;

/**
 * A {@link WindowStore} that holds resources of its own (a connection, say) and releases them on
 * {@link #close()}; closing never touches resources the caller passed in, such as a driver client.
 */
public interface CloseableWindowStore extends WindowStore, AutoCloseable {

    /** Releases the store's own resources; later checks fail as unavailable. Closing twice is harmless. */
    @Override
    void close();
}
