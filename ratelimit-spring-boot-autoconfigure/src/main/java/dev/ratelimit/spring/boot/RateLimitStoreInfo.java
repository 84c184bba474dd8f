package dev.ratelimit.spring.boot;

/**
 * Describes the store the auto-configuration created: which one, and whether its asynchronous
 * checks are non-blocking (Lettuce) or CPU-only (in-memory), so that a reactive filter may run them
 * on an event-loop thread. A store defined by the application has no such description and is
 * treated as blocking.
 *
 * @param type {@code in-memory}, {@code lettuce} or {@code jedis}
 * @param nonBlocking whether {@code checkAsync} never blocks the calling thread
 */
public record RateLimitStoreInfo(String type, boolean nonBlocking) {}
