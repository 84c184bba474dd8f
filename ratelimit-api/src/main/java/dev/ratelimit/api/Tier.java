package dev.ratelimit.api;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A named set of windows that apply together, such as a pricing plan's requests and tokens per
 * minute and per day.
 *
 * @param name the tier's name, for example {@code "free"}
 * @param windows the windows of the tier: not empty, no two counting the same unit over the same
 *     length (a calendar window and a sliding one of the same length may), no two of the same name; kept in the order given (checks evaluate them shortest first
 *     regardless)
 */
public record Tier(String name, List<Window> windows) {

    /**
     * Validates the components and copies the window list.
     *
     * @param name the tier's name, for example {@code "free"}
     * @param windows the windows of the tier: not empty, no two counting the same unit over the same
     *     length (a calendar window and a sliding one of the same length may), no two of the same name; kept in the order given (checks evaluate them shortest first
     *     regardless)
     * @throws NullPointerException if an argument or a window is {@code null}
     * @throws IllegalArgumentException if the name is blank, the list is empty, or two windows share
     *     a name, or a unit and a length
     */
    public Tier {
        Checks.notBlank(name, "name");
        windows = validWindows(windows, "windows");
    }

    /**
     * Creates a tier from windows.
     *
     * @param name the tier's name
     * @param windows the windows
     * @return the tier
     */
    public static Tier of(String name, Window... windows) {
        Checks.notNull(windows, "windows");
        return new Tier(name, List.of(windows));
    }

    static List<Window> validWindows(List<Window> windows, String argument) {
        Checks.notNull(windows, argument);
        if (windows.isEmpty()) {
            throw new IllegalArgumentException(argument + " must not be empty");
        }
        List<Window> copy = new ArrayList<>(windows.size());
        Set<String> lengths = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (Window window : windows) {
            Checks.notNull(window, argument + " element");
            Window.Calendar calendar = window.calendar();
            if (!lengths.add(window.unit() + "/" + window.lengthSeconds() + (calendar != null ? "/calendar" : "")
                    + (window.inShadow() ? "/shadow" : ""))) {
                throw new IllegalArgumentException(argument + " must not hold two windows counting "
                        + window.unit().name().toLowerCase(java.util.Locale.ROOT) + " over the same length, found "
                        + (calendar != null ? "a calendar " + calendar.period() : window.length())
                        + (window.inShadow() ? " in shadow" : "")
                        + " twice");
            }
            if (!names.add(window.name())) {
                throw new IllegalArgumentException(
                        argument + " must not hold two windows of the same name, found '" + window.name() + "' twice");
            }
            copy.add(window);
        }
        return List.copyOf(copy);
    }
}
