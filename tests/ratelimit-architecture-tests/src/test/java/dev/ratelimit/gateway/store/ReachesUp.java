package dev.ratelimit.gateway.store;

import dev.ratelimit.gateway.web.MeteredServlet;

/**
 * A class of the gateway's lowest layer that uses its web layer: it exists only to show that
 * {@code GatewayLayersTest}'s rule fails for such a dependency.
 */
public final class ReachesUp {

    private ReachesUp() {}

    /** Names a servlet's type from the store's layer: an upward dependency. */
    public static Class<?> upward() {
        return MeteredServlet.class;
    }
}
