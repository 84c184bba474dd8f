package dev.ratelimit.redis.internal;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The keys and arguments of one run of the sliding-window script for one {@link StoreRequest}; see
 * the header of {@code sliding_window.lua} for their meaning.
 *
 * <p>Arguments: {@code now} in milliseconds (empty for the server's {@code TIME}), permits, a member
 * base from {@link MemberIds}, then each window's length in milliseconds and limit.
 */
public final class ScriptCall {

    private final String[] keys;
    private final String[] args;

    private ScriptCall(String[] keys, String[] args) {
        this.keys = keys;
        this.args = args;
    }

    /**
     * Builds the call for a request, with a fresh member base.
     *
     * @param request the request, windows shortest first
     * @param layout the key layout of the target deployment
     * @return the call
     */
    public static ScriptCall of(StoreRequest request, KeyLayout layout) {
        return of(request, KeySpace.of(layout), MemberIds.next());
    }

    /**
     * Builds the call for a request in a key space, with a fresh member base.
     *
     * @param request the request, windows in evaluation order
     * @param keys the layout and prefix of the target deployment
     * @return the call
     */
    public static ScriptCall of(StoreRequest request, KeySpace keys) {
        return of(request, keys, MemberIds.next());
    }

    /**
     * Builds the call for a request with the given member base.
     *
     * @param request the request, windows shortest first
     * @param layout the key layout of the target deployment
     * @param memberBase the unique name of the entries to record
     * @return the call
     */
    public static ScriptCall of(StoreRequest request, KeyLayout layout, String memberBase) {
        return of(request, KeySpace.of(Objects.requireNonNull(layout, "layout must not be null")), memberBase);
    }

    /**
     * Builds the call for a request in a key space with the given member base.
     *
     * @param request the request, windows in evaluation order
     * @param space the layout and prefix of the target deployment
     * @param memberBase the unique name of the entries to record
     * @return the call
     */
    public static ScriptCall of(StoreRequest request, KeySpace space, String memberBase) {
        Objects.requireNonNull(request, "request must not be null");
        Objects.requireNonNull(space, "space must not be null");
        KeyLayout layout = space.layout();
        Objects.requireNonNull(memberBase, "memberBase must not be null");
        if (layout == KeyLayout.CLUSTER && request.scopes().size() > 1) {
            // One script may only touch keys of one hash slot; piecewise evaluation would not be atomic.
            throw new UnsupportedOperationException(
                    "Redis Cluster evaluates one scope per check: scopes of different subjects lie in different slots");
        }
        List<Window> windows = request.windows();
        int n = windows.size();
        String[] keys = new String[n];
        String[] args = new String[3 + 2 * n];
        args[0] = request.hasTime() ? Long.toString(request.nowMillis()) : "";
        args[1] = Integer.toString(request.permits());
        args[2] = memberBase;
        for (int i = 0; i < n; i++) {
            Window window = windows.get(i);
            keys[i] = space.key(request.subjectOf(i), window.lengthSeconds());
            args[3 + 2 * i] = Long.toString(window.lengthMillis());
            args[4 + 2 * i] = Integer.toString(window.limit());
        }
        return new ScriptCall(keys, args);
    }

    /**
     * Returns the keys, one per window, shortest window first.
     *
     * @return a fresh array
     */
    public String[] keys() {
        return keys.clone();
    }

    /**
     * Returns the arguments.
     *
     * @return a fresh array
     */
    public String[] args() {
        return args.clone();
    }

    /**
     * Returns the keys as a list.
     *
     * @return an unmodifiable list
     */
    public List<String> keyList() {
        return List.of(keys);
    }

    /**
     * Returns the arguments as a list.
     *
     * @return an unmodifiable list
     */
    public List<String> argList() {
        return List.of(args);
    }

    /**
     * Returns the number of windows, which is the number of keys.
     *
     * @return the window count
     */
    public int windowCount() {
        return keys.length;
    }

    @Override
    public String toString() {
        return "ScriptCall{keys=" + Arrays.toString(keys) + ", args=" + Arrays.toString(args) + "}";
    }
}
