package dev.ratelimit.gateway.config;

import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What requests cost and who besides the tenant pays: the price table, the teams and the
 * organisations. A tenant may belong to a team, and a team to an organisation; each level has
 * windows of its own in any unit (a monthly dollar budget, say), shared by its members, and a team
 * may limit a model apart. One reservation charges them all with the tenant's own windows and the
 * model's upstream cap, all or nothing.
 *
 * @param teams the teams by name, in file order
 * @param orgs the organisations by name, in file order
 * @param prices the price per model, for spend windows
 * @param batchPrices the price per model in a batch (OpenAI's Batch API, Anthropic's Message
 *     Batches), under the same names as {@code prices}: {@code batch-input} and {@code batch-output}
 *     where an entry gives them, else half the online price; cache reads and writes at half theirs
 */
public record Spending(Map<String, Team> teams, Map<String, Org> orgs, PriceTable prices, PriceTable batchPrices) {

    /** No teams, no organisations, no prices. */
    static final Spending NONE = new Spending(Map.of(), Map.of(), PriceTable.of(Map.of()), PriceTable.of(Map.of()));

    /** What a batch costs of a price no {@code batch-*} entry overrides: half, as OpenAI and Anthropic bill batches. */
    static final BigDecimal BATCH_DISCOUNT = new BigDecimal("0.5");

    /**
     * An organisation.
     *
     * @param name its name
     * @param budget its windows, shared by every tenant of its teams, as budget {@code org:<name>};
     *     {@code null} when it has none
     */
    public record Org(String name, @Nullable SharedBudget budget) {}

    /**
     * A team.
     *
     * @param name its name
     * @param org its organisation, or {@code null}
     * @param budget its windows, shared by its tenants, as budget {@code team:<name>}; {@code null}
     *     when it has none
     * @param models windows the team's tenants share for one model apart, by model name, as budgets
     *     {@code team:<name>/model:<model>}
     */
    public record Team(
            String name, @Nullable Org org, @Nullable SharedBudget budget, Map<String, SharedBudget> models) {}

    /** An organisation's entry as the file gives it. */
    record RawOrg(
            @Nullable Map<String, String> windows, @Nullable String mode) {}

    /** A team's entry as the file gives it. */
    record RawTeam(
            @Nullable String org,
            @Nullable Map<String, String> windows,
            @Nullable LinkedHashMap<String, @Nullable Map<String, String>> models,
            @Nullable String mode) {}

    /** A price entry as the file gives it: US dollars per million tokens. */
    record RawPrice(
            @Nullable BigDecimal input,
            @Nullable BigDecimal cachedInput,
            @Nullable BigDecimal cacheWrite,
            @Nullable BigDecimal output,
            @Nullable BigDecimal batchInput,
            @Nullable BigDecimal batchOutput) {}

    /**
     * Validates the three sections, recording every error found rather than stopping at the first.
     *
     * @return the spending; its entries with errors are left out (the caller reports the errors)
     */
    static Spending validate(
            @Nullable Map<String, @Nullable RawTeam> rawTeams,
            @Nullable Map<String, @Nullable RawOrg> rawOrgs,
            @Nullable Map<String, @Nullable RawPrice> rawPrices,
            List<String> errors) {
        Map<String, Org> orgs = new LinkedHashMap<>();
        if (rawOrgs != null) {
            rawOrgs.forEach((name, raw) -> collect(errors, () -> {
                String at = "orgs." + name;
                boolean shadow = ShadowMode.shadow(raw == null ? null : raw.mode(), at + ".mode");
                List<Window> windows =
                        ShadowMode.windows(shadow, windows(at + ".windows", raw == null ? null : raw.windows()));
                orgs.put(name, new Org(name, windows.isEmpty() ? null : new SharedBudget("org:" + name, windows)));
            }));
        }
        Map<String, Team> teams = new LinkedHashMap<>();
        if (rawTeams != null) {
            rawTeams.forEach((name, raw) -> {
                Team team = team(name, raw, orgs, rawOrgs, errors);
                if (team != null) {
                    teams.put(name, team);
                }
            });
        }
        Map<String, ModelPrice> prices = new LinkedHashMap<>();
        Map<String, ModelPrice> batchPrices = new LinkedHashMap<>();
        if (rawPrices != null) {
            rawPrices.forEach((model, raw) -> collect(errors, () -> {
                ModelPrice online = price(model, raw);
                ModelPrice batch = batchPrice(model, online, raw);
                prices.put(model, online);
                batchPrices.put(model, batch);
            }));
        }
        PriceTable table;
        PriceTable batchTable;
        try {
            table = PriceTable.of(prices);
            batchTable = PriceTable.of(batchPrices);
        } catch (IllegalArgumentException e) {
            errors.add("prices: " + e.getMessage());
            table = PriceTable.of(Map.of());
            batchTable = table;
        }
        return new Spending(Collections.unmodifiableMap(teams), Collections.unmodifiableMap(orgs), table, batchTable);
    }

    /** The team, or {@code null} after recording each of its errors (its org, windows and models apart). */
    private static @Nullable Team team(
            String name,
            @Nullable RawTeam raw,
            Map<String, Org> orgs,
            @Nullable Map<String, @Nullable RawOrg> declaredOrgs,
            List<String> errors) {
        String at = "teams." + name;
        if (raw == null) {
            errors.add(at + ": empty entry (give it windows, models or an org)");
            return null;
        }
        int before = errors.size();
        boolean shadow = read(errors, false, () -> ShadowMode.shadow(raw.mode(), at + ".mode"));
        Org org = null;
        if (raw.org() != null) {
            org = orgs.get(raw.org());
            if (org == null) {
                errors.add(at + ".org: '" + raw.org() + "' "
                        + (declaredOrgs != null && declaredOrgs.containsKey(raw.org())
                                ? "has errors of its own"
                                : "is not one of the orgs " + (declaredOrgs == null ? "[]" : declaredOrgs.keySet())));
            }
        }
        List<Window> windows =
                read(errors, List.of(), () -> ShadowMode.windows(shadow, windows(at + ".windows", raw.windows())));
        Map<String, List<Window>> limits =
                read(errors, Map.of(), () -> ShadowMode.perModel(shadow, perModel(at + ".models", raw.models())));
        Map<String, SharedBudget> models = new LinkedHashMap<>();
        limits.forEach((model, windowsOfModel) ->
                models.put(model, new SharedBudget("team:" + name + "/model:" + model, windowsOfModel)));
        if (errors.size() > before) {
            return null;
        }
        return new Team(
                name,
                org,
                windows.isEmpty() ? null : new SharedBudget("team:" + name, windows),
                Collections.unmodifiableMap(models));
    }

    private static ModelPrice price(String model, @Nullable RawPrice raw) {
        String at = "prices." + model;
        if (raw == null || raw.input() == null || raw.output() == null) {
            throw new IllegalArgumentException(at + ": set input and output (US dollars per million tokens)"
                    + "; cached-input, cache-write, batch-input and batch-output are optional");
        }
        BigDecimal input = raw.input();
        BigDecimal cached = raw.cachedInput() == null ? input : raw.cachedInput();
        BigDecimal write = raw.cacheWrite() == null ? input : raw.cacheWrite();
        try {
            return new ModelPrice(input, cached, write, raw.output());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(at + ": " + e.getMessage(), e);
        }
    }

    /**
     * A model's price in a batch: {@code batch-input} and {@code batch-output} when the entry gives
     * them, else half the online input and output prices; cache reads and writes at half their
     * online prices.
     */
    private static ModelPrice batchPrice(String model, ModelPrice online, @Nullable RawPrice raw) {
        BigDecimal input = raw == null ? null : raw.batchInput();
        BigDecimal output = raw == null ? null : raw.batchOutput();
        nonNegative(model, "batch-input", input);
        nonNegative(model, "batch-output", output);
        return new ModelPrice(
                input == null ? online.input().multiply(BATCH_DISCOUNT) : input,
                online.cachedInput().multiply(BATCH_DISCOUNT),
                online.cacheWrite().multiply(BATCH_DISCOUNT),
                output == null ? online.output().multiply(BATCH_DISCOUNT) : output);
    }

    private static void nonNegative(String model, String field, @Nullable BigDecimal price) {
        if (price != null && price.signum() < 0) {
            throw new IllegalArgumentException(
                    "prices." + model + "." + field + ": must not be negative, was " + price);
        }
    }

    /**
     * Reads windows in the tier-file syntax ({@code 5/1m}, {@code 20000 tokens/1m}, {@code
     * $500/30d@1h}); no entry gives no window.
     */
    static List<Window> windows(String at, @Nullable Map<String, String> entries) {
        if (entries == null || entries.isEmpty()) {
            return List.of();
        }
        List<Window> windows;
        try {
            windows = TierPolicy.fromMap(Map.of("tier", Map.of("level", entries)))
                    .resolve("level")
                    .windows();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(at + ": " + e.getMessage(), e);
        }
        charged(at, windows);
        return windows;
    }

    /**
     * Refuses a window of a unit the gateway never charges (a typo such as {@code 20 dollars/1d}
     * would otherwise be a window that never fills): requests, tokens and US dollars only.
     */
    static void charged(String at, List<Window> windows) {
        for (Window window : windows) {
            Window.Unit unit = window.unit();
            if (!unit.isRequests() && !unit.equals(Window.Unit.TOKENS) && !unit.equals(Window.Unit.USD_MICROS)) {
                throw new IllegalArgumentException(at + "." + window.name() + ": the gateway charges requests ("
                        + "N/length), tokens (N tokens/length) and US dollars ($N/length), not '" + unit + "'");
            }
        }
    }

    /** Reads per-model limits: for each model, its windows, at least one. */
    static Map<String, List<Window>> perModel(String at, @Nullable Map<String, @Nullable Map<String, String>> entries) {
        Map<String, List<Window>> models = new LinkedHashMap<>();
        if (entries == null) {
            return models;
        }
        entries.forEach((model, limits) -> {
            List<Window> windows = windows(at + "." + model, limits);
            if (windows.isEmpty()) {
                throw new IllegalArgumentException(at + "." + model + ": define at least one window");
            }
            models.put(model, windows);
        });
        return models;
    }

    /**
     * Tells whether any of the windows counts money.
     *
     * @param windows windows
     * @return {@code true} when one counts {@link Window.Unit#USD_MICROS}
     */
    static boolean spends(List<Window> windows) {
        for (Window window : windows) {
            if (window.unit().equals(Window.Unit.USD_MICROS)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Tells whether any level's windows count money: the team's, its per-model limits', or its
     * organisation's.
     *
     * @param team a team
     * @return {@code true} when a spend window applies through the team
     */
    static boolean spends(Team team) {
        return (team.budget() != null && spends(team.budget().windows()))
                || team.models().values().stream().anyMatch(budget -> spends(budget.windows()))
                || (team.org() != null
                        && team.org().budget() != null
                        && spends(team.org().budget().windows()));
    }

    /** What {@code read} gives, or {@code otherwise} after recording its error. */
    private static <T> T read(List<String> errors, T otherwise, Supplier<T> read) {
        try {
            return read.get();
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
            return otherwise;
        }
    }

    private static void collect(List<String> errors, Runnable check) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            errors.add(String.valueOf(e.getMessage()));
        }
    }

    /** The models named under {@code models:} (and "*" aside) that have no price. */
    public List<String> unpriced(Iterable<String> models) {
        List<String> unpriced = new ArrayList<>();
        for (String model : models) {
            if (!model.equals(GatewayConfig.ANY_MODEL) && prices.priceOf(model) == null) {
                unpriced.add(model);
            }
        }
        return unpriced;
    }
}
