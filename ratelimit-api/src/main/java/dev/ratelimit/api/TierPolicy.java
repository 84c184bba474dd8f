package dev.ratelimit.api;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Maps tier names to their windows; unknown or missing names fall back to a default tier.
 *
 * <p>{@link #defaults()} gives the built-in plans: {@code free} (5 requests per minute, 100 per
 * day, the default), {@code pro} (60 per minute, 5,000 per day) and {@code enterprise} (600 per
 * minute, 100,000 per day). Custom policies come from {@link #builder()}, from a properties file
 * through {@link #fromProperties(Properties)}, or from a map of the same entries through {@link
 * #fromMap(Map)}; a value counts requests unless it names another unit ({@code tokens}, or any {@link
 * Window.Unit} such as {@code usd_micros}), {@code $<dollars>} is a spend window in micro-dollars,
 * and {@code @<step>} gives a long window a precision:
 *
 * <pre>{@code
 * default-tier = free
 * tier.free.minute = 5/60s
 * tier.free.day = 100/1d
 * tier.free.tokens-minute = 10000 tokens/1m
 * tier.free.tokens-day = 200000 tokens/1d@1m
 * tier.pro.minute = 60/1m
 * tier.pro.day = 5000/24h@1m
 * tier.pro.spend-day = $5/1d@1m
 * tier.pro.spend-month = $100/30d@1h
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class TierPolicy {

    private static final System.Logger LOG = System.getLogger(TierPolicy.class.getName());
    private static final int MAX_REMEMBERED_UNKNOWN_NAMES = 1_024;

    private static final TierPolicy DEFAULTS = builder()
            .tier(Tier.of(
                    "free", new Window("minute", 5, Duration.ofMinutes(1)), new Window("day", 100, Duration.ofDays(1))))
            .tier(Tier.of(
                    "pro",
                    new Window("minute", 60, Duration.ofMinutes(1)),
                    new Window("day", 5_000, Duration.ofDays(1))))
            .tier(Tier.of(
                    "enterprise",
                    new Window("minute", 600, Duration.ofMinutes(1)),
                    new Window("day", 100_000, Duration.ofDays(1))))
            .defaultTier("free")
            .build();

    private final Map<String, Tier> tiers;
    private final Tier defaultTier;
    private final Set<String> warnedNames = ConcurrentHashMap.newKeySet();

    private TierPolicy(Map<String, Tier> tiers, Tier defaultTier) {
        this.tiers = tiers;
        this.defaultTier = defaultTier;
    }

    /**
     * Returns the built-in policy: free (the default), pro and enterprise.
     *
     * @return the default policy
     */
    public static TierPolicy defaults() {
        return DEFAULTS;
    }

    /**
     * Returns a builder for a custom policy.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the tier named {@code tierName}, or the default tier when the name is {@code null} or
     * unknown (an unknown name is logged once, at WARNING).
     *
     * @param tierName the tier's name, typically from the authentication layer; may be {@code null}
     * @return the tier; never {@code null}
     */
    public Tier resolve(@Nullable String tierName) {
        if (tierName == null) {
            return defaultTier;
        }
        Tier tier = tiers.get(tierName);
        if (tier != null) {
            return tier;
        }
        if (warnedNames.size() < MAX_REMEMBERED_UNKNOWN_NAMES && warnedNames.add(tierName)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Unknown rate-limit tier ''{0}'': applying the default tier ''{1}''",
                    tierName,
                    defaultTier.name());
        }
        return defaultTier;
    }

    /**
     * Returns the tier used for unknown or missing names.
     *
     * @return the default tier
     */
    public Tier defaultTier() {
        return defaultTier;
    }

    /**
     * Returns every tier of the policy, by name, in the order they were added.
     *
     * @return an unmodifiable map of tier name to tier
     */
    public Map<String, Tier> tiers() {
        return tiers;
    }

    /**
     * Reads a policy from properties: {@code tier.<tier>.<window> = <limit>[ <unit>]/<length>[@<step>]}
     * entries and an optional {@code default-tier} (else {@code free} when defined, else the first
     * tier).
     *
     * <p>Lengths and steps are ISO-8601 durations ({@code PT1M}) or a number with a unit {@code s},
     * {@code m}, {@code h}, {@code d} or {@code w}; a bare number means seconds. A value counts
     * requests unless the limit is followed by a unit's name ({@code tokens}, {@code usd_micros} or
     * any other {@link Window.Unit}); {@code $<dollars>} (up to six decimals, such as {@code $0.50})
     * counts {@link Window.Unit#USD_MICROS}; {@code @<step>} sets the window's
     * {@linkplain Window#withPrecision precision}. Every error names the offending entry.
     *
     * @param properties the entries
     * @return the policy
     * @throws IllegalArgumentException if an entry is malformed, unknown, or describes an invalid
     *     tier
     */
    public static TierPolicy fromProperties(Properties properties) {
        Checks.notNull(properties, "properties");
        return TierFileParser.parse(TierFileParser.entries(properties));
    }

    /**
     * Reads a policy from a map with the entries of {@link #fromProperties(Properties)}, as
     * configuration sources such as YAML give them: a value is the text of an entry, or a map whose
     * keys continue the entry's key after a dot. These three give the same policy:
     *
     * <pre>{@code
     * TierPolicy.fromMap(Map.of("tier.free.minute", "5/60s", "default-tier", "free"));
     * TierPolicy.fromMap(Map.of("tier", Map.of("free", Map.of("minute", "5/60s")), "default-tier", "free"));
     * TierPolicy.fromProperties(properties); // tier.free.minute = 5/60s, default-tier = free
     * }</pre>
     *
     * <p>Entries are read in the order of their keys, as from a properties file, so the same entries
     * give the same policy whatever the map's order. Every error names the offending entry.
     *
     * @param entries the entries; keys are text, values text or maps of the same kind
     * @return the policy
     * @throws IllegalArgumentException if an entry is malformed, unknown, given twice (once flat, once
     *     nested), has no value or a value that is neither text nor a map, or describes an invalid tier
     */
    public static TierPolicy fromMap(Map<String, ?> entries) {
        Checks.notNull(entries, "entries");
        return TierFileParser.parse(TierFileParser.entries(entries));
    }

    /**
     * Reads a policy from a properties file (UTF-8); see {@link #fromProperties(Properties)}.
     *
     * @param file the file
     * @return the policy
     * @throws IOException if the file cannot be read
     * @throws IllegalArgumentException if an entry is invalid; the message names the file and entry
     */
    public static TierPolicy load(Path file) throws IOException {
        Checks.notNull(file, "file");
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        try {
            return fromProperties(properties);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Parses one window value, {@code <limit>[ <unit>]/<length>[@<step>]} or {@code
     * $<dollars>/<length>[@<step>]}, as tier files and other
     * configuration sources write it.
     *
     * @param windowName the window's name
     * @param value the value, for example {@code 5/1m}, {@code 200000 tokens/1d@1m}, {@code
     *     $100/30d@1h}
     * @return the window
     * @throws IllegalArgumentException if the value is malformed; the message quotes it
     */
    public static Window parseWindow(String windowName, String value) {
        Checks.notBlank(windowName, "windowName");
        Checks.notNull(value, "value");
        return TierFileParser.window(windowName, windowName, value.trim());
    }

    @Override
    public String toString() {
        return "TierPolicy{tiers=" + tiers.keySet() + ", default=" + defaultTier.name() + "}";
    }

    /** Builds a {@link TierPolicy}; not thread-safe. */
    public static final class Builder {

        private final Map<String, Tier> tiers = new LinkedHashMap<>();
        private @Nullable String defaultTier;

        private Builder() {}

        /**
         * Adds a tier.
         *
         * @param tier the tier; its name must not be taken yet
         * @return this builder
         */
        public Builder tier(Tier tier) {
            Checks.notNull(tier, "tier");
            if (tiers.putIfAbsent(tier.name(), tier) != null) {
                throw new IllegalArgumentException("tier '" + tier.name() + "' is defined twice");
            }
            return this;
        }

        /**
         * Adds a tier from its windows.
         *
         * @param name the tier's name
         * @param windows its windows
         * @return this builder
         */
        public Builder tier(String name, Window... windows) {
            return tier(Tier.of(name, windows));
        }

        /**
         * Names the tier applied to unknown or missing tier names; defaults to {@code free} when such
         * a tier exists, otherwise to the first tier added.
         *
         * @param name the default tier's name; must be one of the tiers added
         * @return this builder
         */
        public Builder defaultTier(String name) {
            this.defaultTier = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * Builds the policy.
         *
         * @return the policy
         * @throws IllegalArgumentException if no tier was added or the default tier is unknown
         */
        public TierPolicy build() {
            if (tiers.isEmpty()) {
                throw new IllegalArgumentException("a tier policy needs at least one tier");
            }
            String name = defaultTier;
            if (name == null) {
                name = tiers.containsKey("free")
                        ? "free"
                        : tiers.keySet().iterator().next();
            }
            Tier fallback = tiers.get(name);
            if (fallback == null) {
                throw new IllegalArgumentException(
                        "defaultTier '" + name + "' is not one of the tiers " + tiers.keySet());
            }
            return new TierPolicy(Collections.unmodifiableMap(new LinkedHashMap<>(tiers)), fallback);
        }
    }
}
