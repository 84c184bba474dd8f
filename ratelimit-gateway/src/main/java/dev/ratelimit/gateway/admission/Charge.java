package dev.ratelimit.gateway.admission;

import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.config.Spending;
import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.TokenCounts;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Who pays for one metered request and how much: the budgets it is charged to beyond the tenant's
 * own windows (its team's and organisation's, the per-model limits of its tier and team, the
 * model's upstream cap and its tier's share of it), and the model's price, which turns tokens into
 * micro-dollars for spend windows. One reservation charges them all with the tenant's windows, all
 * or nothing.
 *
 * @param tenant the tenant
 * @param team the tenant's team, or {@code null}
 * @param model the model the request names
 * @param price the model's price, or {@code null} when the price table has none
 * @param cap the model's upstream cap, or {@code null}
 * @param levels the budgets beyond the tenant's windows, in the order they are charged
 */
public record Charge(
        String tenant,
        Spending.@Nullable Team team,
        String model,
        @Nullable ModelPrice price,
        @Nullable ModelCap cap,
        List<Level> levels) {

    /**
     * One budget a request is charged to besides the tenant's windows.
     *
     * @param kind what the budget is: {@code key} (a managed key's own windows), {@code team}, {@code org}, {@code tier-model}, {@code
     *     team-model}, {@code upstream}, {@code share} or, for a batch, {@code batch-tokens}
     * @param description how messages name it, such as {@code team 'research'}
     * @param budget the budget
     */
    public record Level(String kind, String description, SharedBudget budget) {}

    /**
     * The charge of a request of {@code account} for {@code model} under {@code config}.
     *
     * @param config the configuration the request runs under
     * @param account the caller
     * @param model the model the request names
     * @return the charge
     */
    public static Charge of(GatewayConfig config, Account account, String model) {
        List<Level> levels = new ArrayList<>();
        SharedBudget own = account.budget();
        if (own != null) {
            levels.add(new Level("key", "the windows of key '" + own.name().substring("key:".length()) + "'", own));
        }
        Spending.Team team = account.team();
        if (team != null) {
            if (team.budget() != null) {
                levels.add(new Level("team", "team '" + team.name() + "'", team.budget()));
            }
            Spending.Org org = team.org();
            if (org != null && org.budget() != null) {
                levels.add(new Level("org", "organisation '" + org.name() + "'", org.budget()));
            }
        }
        List<Window> tierModel = account.tier().models().get(model);
        if (tierModel != null) {
            levels.add(new Level(
                    "tier-model",
                    "the " + model + " limit of tier " + account.tier().name(),
                    tierModel(account.tenant(), model, tierModel)));
        }
        if (team != null && team.models().containsKey(model)) {
            levels.add(new Level(
                    "team-model",
                    "the " + model + " limit of team '" + team.name() + "'",
                    team.models().get(model)));
        }
        ModelCap cap = config.capOf(model);
        SharedBudget capBudget = cap == null ? null : cap.budget();
        if (cap != null && capBudget != null) {
            levels.add(new Level("upstream", "the upstream cap of " + cap.model(), capBudget));
            SharedBudget share = cap.shares().get(account.tier().name());
            if (share != null) {
                levels.add(new Level(
                        "share",
                        "tier " + account.tier().name() + "'s "
                                + cap.percents().get(account.tier().name()) + "% share of the upstream cap of "
                                + cap.model(),
                        share));
            }
        }
        ModelPrice price = config.spending().prices().priceOf(model);
        return new Charge(account.tenant(), team, model, price, cap, List.copyOf(levels));
    }

    /**
     * The budget of a tier's per-model limit for one tenant: the tenant's own, apart from its tier
     * windows, named {@code tenant:<tenant>/model:<model>}.
     */
    public static SharedBudget tierModel(String tenant, String model, List<Window> windows) {
        return new SharedBudget("tenant:" + tenant + "/model:" + model, windows);
    }

    /**
     * Returns the model as metrics tag it: the name under {@code models:} whose cap the request is
     * charged to ({@code *} for the default cap), else {@code other}. Never the request's own text,
     * which a client chooses: the tags stay as few as the configuration's entries.
     *
     * @return the tag
     */
    public String metricModel() {
        return cap == null ? "other" : cap.model();
    }

    /**
     * Returns the budgets to reserve in, after the tenant's own windows.
     *
     * @return the budgets, in charge order
     */
    List<SharedBudget> budgets() {
        List<SharedBudget> budgets = new ArrayList<>(levels.size());
        for (Level level : levels) {
            budgets.add(level.budget());
        }
        return budgets;
    }

    /**
     * Returns the level a shared budget is, for the message of a refusal it decided.
     *
     * @param budget the budget's name, as {@link dev.ratelimit.api.Decision#budget()} gives it
     * @return the level, or {@code null} when none of this charge's budgets has that name
     */
    @Nullable
    public Level level(@Nullable String budget) {
        for (Level level : levels) {
            if (level.budget().name().equals(budget)) {
                return level;
            }
        }
        return null;
    }

    /**
     * Returns the call as the metered-call engine reserves and settles it: the prompt and the most
     * it may produce, at the model's price, charged to the tenant's windows and every level of this
     * charge in one reservation.
     *
     * @param promptTokens the counted prompt
     * @param maxOutputTokens the most the request may produce
     * @return the engine's request
     */
    public ModelCall.Request request(long promptTokens, long maxOutputTokens) {
        return new ModelCall.Request(
                model, null, price, TokenCounts.forModel(model), promptTokens, maxOutputTokens, budgets());
    }
}
