package dev.ratelimit.api;

import java.util.List;

/**
 * A budget shared by every user whose reservation names it, such as the requests and tokens per
 * minute an upstream provider allows one API key for one model.
 *
 * <p>A reservation charges the user's windows and its shared budgets together, all or nothing: a
 * request the shared budget rejects costs the user nothing, and one the user's windows reject costs
 * the shared budget nothing. Budgets are identified by name: every limiter that names the same
 * budget over the same store shares its counts.
 *
 * @param name the budget's identity and label, for example {@code "openai/gpt-4o"}
 * @param windows the budget's windows: not empty, no two counting the same unit over the same
 *     length, no two of the same name
 */
public record SharedBudget(String name, List<Window> windows) {

    /**
     * Validates the components and copies the window list.
     *
     * @throws NullPointerException if an argument or a window is {@code null}
     * @throws IllegalArgumentException if the name is blank, the list is empty, or two windows share
     *     a name, or a unit and a length
     */
    public SharedBudget {
        Checks.notBlank(name, "name");
        windows = Tier.validWindows(windows, "windows");
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
