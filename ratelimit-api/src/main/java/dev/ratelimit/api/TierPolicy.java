package dev.ratelimit.api;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Maps tier names to their windows; unknown or missing names fall back to a default tier.
 *
 * <p>{@link #defaults()} gives the built-in plans: {@code free} (5 requests per minute, 100 per
 * day, the default), {@code pro} (60 per minute, 5,000 per day) and {@code enterprise} (600 per
 * minute, 100,000 per day). Custom policies come from {@link #builder()} or from a properties file
 * through {@link #fromProperties(Properties)}; a value counts requests unless it says {@code tokens},
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
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class TierPolicy {

    private static final System.Logger LOG = System.getLogger(TierPolicy.class.getName());
    private static final int MAX_REMEMBERED_UNKNOWN_NAMES = 1_024;
    private static final Pattern WINDOW_VALUE = Pattern.compile(
            "\\s*(\\d+)\\s*(tokens?|requests?)?\\s*(?:/|per)\\s*([^@\\s]+)\\s*(?:@\\s*(\\S+)\\s*)?",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)([smhdw])");

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
     * Reads a policy from properties: {@code tier.<tier>.<window> = <limit>[ tokens]/<length>[@<step>]}
     * entries and an optional {@code default-tier} (else {@code free} when defined, else the first
     * tier).
     *
     * <p>Lengths and steps are ISO-8601 durations ({@code PT1M}) or a number with a unit {@code s},
     * {@code m}, {@code h}, {@code d} or {@code w}; a bare number means seconds. A value counts
     * requests unless the limit is followed by {@code tokens}; {@code @<step>} sets the window's
     * {@linkplain Window#withPrecision precision}. Every error names the offending entry.
     *
     * @param properties the entries
     * @return the policy
     * @throws IllegalArgumentException if an entry is malformed, unknown, or describes an invalid
     *     tier
     */
    public static TierPolicy fromProperties(Properties properties) {
        Checks.notNull(properties, "properties");
        Map<String, List<Window>> windowsByTier = new LinkedHashMap<>();
        String defaultName = null;
        for (String key : new TreeSet<>(properties.stringPropertyNames())) {
            String value = properties.getProperty(key).trim();
            if (key.equals("default-tier")) {
                defaultName = value;
                continue;
            }
            String[] parts = key.split("\\.", -1);
            if (parts.length != 3 || !parts[0].equals("tier") || parts[1].isBlank() || parts[2].isBlank()) {
                throw new IllegalArgumentException("Unknown tier policy entry '" + key
                        + "': expected 'tier.<tier>.<window> = <limit>[ tokens]/<length>[@<step>]' or 'default-tier'");
            }
            Window window = parseWindow(key, parts[2], value);
            windowsByTier.computeIfAbsent(parts[1], name -> new ArrayList<>()).add(window);
        }
        if (windowsByTier.isEmpty()) {
            throw new IllegalArgumentException("Tier policy defines no tier: add 'tier.<tier>.<window>' entries");
        }
        Builder builder = builder();
        windowsByTier.forEach((name, windows) -> {
            windows.sort((a, b) -> a.length().compareTo(b.length()));
            try {
                builder.tier(new Tier(name, windows));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Tier '" + name + "': " + e.getMessage(), e);
            }
        });
        if (defaultName == null) {
            defaultName = windowsByTier.containsKey("free")
                    ? "free"
                    : windowsByTier.keySet().iterator().next();
        } else if (!windowsByTier.containsKey(defaultName)) {
            throw new IllegalArgumentException("Tier policy entry 'default-tier' names '" + defaultName
                    + "', which is not defined; defined: " + windowsByTier.keySet());
        }
        return builder.defaultTier(defaultName).build();
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
     * Parses one window value, {@code <limit>[ tokens]/<length>[@<step>]}, as tier files and other
     * configuration sources write it.
     *
     * @param windowName the window's name
     * @param value the value, for example {@code 5/1m}, {@code 200000 tokens/1d@1m}
     * @return the window
     * @throws IllegalArgumentException if the value is malformed; the message quotes it
     */
    public static Window parseWindow(String windowName, String value) {
        Checks.notBlank(windowName, "windowName");
        Checks.notNull(value, "value");
        return parseWindow(windowName, windowName, value.trim());
    }

    private static Window parseWindow(String key, String windowName, String value) {
        Matcher matcher = WINDOW_VALUE.matcher(value);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("Tier policy entry '" + key + "' = '" + value
                    + "': expected '<limit>[ tokens]/<length>[@<step>]', e.g. '5/60s' or '10000 tokens/1d@1m'");
        }
        long limit;
        try {
            limit = Long.parseLong(matcher.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "Tier policy entry '" + key + "' = '" + value + "': limit is too large", e);
        }
        String unit = matcher.group(2);
        boolean tokens = unit != null && unit.toLowerCase(Locale.ROOT).startsWith("token");
        Duration length = parseLength(key, value, matcher.group(3));
        String step = matcher.group(4);
        Duration precision = step == null ? Duration.ZERO : parseLength(key, value, step);
        try {
            return new Window(windowName, limit, length, tokens ? Window.Unit.TOKENS : Window.Unit.REQUESTS, precision);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Tier policy entry '" + key + "' = '" + value + "': " + e.getMessage(), e);
        }
    }

    private static Duration parseLength(String key, String value, String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        try {
            if (lower.startsWith("p")) {
                return Duration.parse(text);
            }
            if (lower.chars().allMatch(Character::isDigit)) {
                return Duration.ofSeconds(Long.parseLong(lower));
            }
            Matcher unit = SHORT_DURATION.matcher(lower);
            if (unit.matches()) {
                long amount = Long.parseLong(unit.group(1));
                switch (unit.group(2)) {
                    case "s":
                        return Duration.ofSeconds(amount);
                    case "m":
                        return Duration.ofMinutes(amount);
                    case "h":
                        return Duration.ofHours(amount);
                    case "d":
                        return Duration.ofDays(amount);
                    default:
                        return Duration.ofDays(amount * 7);
                }
            }
        } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
            // fall through to the message below
        }
        throw new IllegalArgumentException("Tier policy entry '" + key + "' = '" + value + "': length '" + text
                + "' is not a duration (use 60s, 1m, 1h, 1d, 1w or PT1M)");
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
