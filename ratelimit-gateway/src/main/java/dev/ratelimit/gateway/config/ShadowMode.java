package dev.ratelimit.gateway.config;

import dev.ratelimit.api.Window;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@code mode:} of a tier, team, organisation or key: {@code enforce} (the default) or {@code
 * shadow}, which puts every window of that level in {@linkplain Window#inShadow() shadow}: counted
 * exactly as if enforced, never refusing. One window alone is put in shadow by its spec's {@code
 * shadow} suffix ({@code 10/1m shadow}), which the library's parser reads.
 */
public final class ShadowMode {

    /**
     * Ends the name of the library tier a key in shadow is charged under: a tier of the file never
     * has it, since the tier-file syntax takes no dot in a tier's name.
     */
    static final String KEY_TIER_SUFFIX = ".shadow";

    private ShadowMode() {}

    /**
     * Reads a {@code mode:} entry.
     *
     * @param mode the entry as written, or {@code null} when unset
     * @param at the entry's path, for the message
     * @return {@code true} for {@code shadow}; {@code false} for {@code enforce} or unset
     * @throws IllegalArgumentException naming {@code at} for any other value
     */
    static boolean shadow(@Nullable String mode, String at) {
        if (mode == null) {
            return false;
        }
        return switch (mode.strip().toLowerCase(Locale.ROOT)) {
            case "enforce" -> false;
            case "shadow" -> true;
            default -> throw new IllegalArgumentException(at + ": must be enforce or shadow, was '" + mode + "'");
        };
    }

    /** The windows, every one in shadow when {@code shadow} is set, else as they are. */
    static List<Window> windows(boolean shadow, List<Window> windows) {
        return shadow
                ? windows.stream()
                        .map(window -> window.withMode(Window.Mode.SHADOW))
                        .toList()
                : windows;
    }

    /** Per-model windows, every one in shadow when {@code shadow} is set, else as they are. */
    static Map<String, List<Window>> perModel(boolean shadow, Map<String, List<Window>> models) {
        if (!shadow) {
            return models;
        }
        Map<String, List<Window>> copy = new LinkedHashMap<>();
        models.forEach((model, windows) -> copy.put(model, windows(true, windows)));
        return copy;
    }
}
