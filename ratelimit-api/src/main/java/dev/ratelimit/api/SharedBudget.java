package dev.ratelimit.api;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A budget shared by every user whose reservation names it, such as the requests and tokens per
 * minute an upstream provider allows one API key for one model.
 *
 * <p>A reservation charges the user's windows and its shared budgets together, all or nothing: a
 * request the shared budget rejects costs the user nothing, and one the user's windows reject costs
 * the shared budget nothing. Budgets are identified by name: every limiter that names the same
 * budget over the same store shares its counts.
 *
 * <p>A budget may be {@linkplain #leased leased}: each instance then takes slices of it in the store
 * and admits requests against its slice in memory (see {@link Leasing}); the user's own windows are
 * still charged in the store on every request.
 *
 * @param name the budget's identity and label, for example {@code "openai/gpt-4o"}
 * @param windows the budget's windows: not empty, no two counting the same unit over the same
 *     length, no two of the same name
 * @param leasing how instances lease the budget, or {@code null} to charge it in the store on every
 *     request
 */
public record SharedBudget(
        String name, List<Window> windows, @Nullable Leasing leasing) {

    /**
     * Validates the components and copies the window list.
     *
     * @param name the budget's identity and label, for example {@code "openai/gpt-4o"}
     * @param windows the budget's windows: not empty, no two counting the same unit over the same
     *     length, no two of the same name
     * @param leasing how instances lease the budget, or {@code null} to charge it in the store on every
     *     request
     * @throws NullPointerException if an argument or a window is {@code null}
     * @throws IllegalArgumentException if the name is blank, the list is empty, or two windows share
     *     a name, or a unit and a length; or if the budget is leased and a window is not an exact
     *     sliding window, is in shadow, or is not longer than the lease's duration
     */
    public SharedBudget {
        Checks.notBlank(name, "name");
        windows = Tier.validWindows(windows, "windows");
        if (leasing != null) {
            Duration duration = leasing.duration();
            for (Window window : windows) {
                if (!window.isExact() || window.isCalendar() || window.inShadow()) {
                    throw new IllegalArgumentException(
                            "leasing needs exact sliding windows not in shadow, budget '" + name + "' has " + window);
                }
                if (duration != null && window.length().compareTo(duration) <= 0) {
                    throw new IllegalArgumentException("leasing's duration " + duration
                            + " must be shorter than every window of budget '" + name + "', " + window + " is not");
                }
            }
        }
    }

    /**
     * Creates a budget charged in the store on every request.
     *
     * @param name the budget's name
     * @param windows its windows
     * @throws NullPointerException if an argument or a window is {@code null}
     * @throws IllegalArgumentException if a component is invalid
     */
    public SharedBudget(String name, List<Window> windows) {
        this(name, windows, null);
    }

    /**
     * Returns this budget leased to each instance as {@code leasing} says.
     *
     * @param leasing how instances lease it, for example {@link Leasing#auto()}
     * @return the budget, of the same name and windows
     * @throws IllegalArgumentException if a window cannot be leased (see the constructor)
     */
    public SharedBudget leased(Leasing leasing) {
        Checks.notNull(leasing, "leasing");
        return new SharedBudget(name, windows, leasing);
    }

    /**
     * Creates a shared budget from windows.
     *
     * @param name the budget's name
     * @param windows its windows
     * @return the budget
     */
    public static SharedBudget of(String name, Window... windows) {
        Checks.notNull(windows, "windows");
        return new SharedBudget(name, List.of(windows));
    }
}
