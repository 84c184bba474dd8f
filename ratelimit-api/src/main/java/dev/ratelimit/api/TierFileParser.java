package dev.ratelimit.api;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The tier-file syntax: {@code tier.<tier>.<window> = <limit>[ <unit>]/<length>[@<step>][ fail-<policy>]}
 * (or {@code $<dollars>/<length>[@<step>]} for a spend window in micro-dollars; {@code fail-open},
 * {@code fail-closed} or {@code fail-local} sets the window's {@link FailurePolicy}; a length of
 * {@code month} or {@code year}, or {@code day} or {@code week} followed by {@code @calendar}, is a
 * calendar window, in UTC or in the zone named by {@code @calendar(<zone>)}) entries and
 * an optional {@code default-tier}, from a properties file or a map, into a {@link TierPolicy}. Every
 * error names the entry it is about.
 */
final class TierFileParser {

    private static final String DEFAULT_TIER = "default-tier";
    private static final String EXPECTED_VALUE =
            "'<limit>[ <unit>]/<length>[@<step>]' or '$<dollars>/<length>[@<step>]',"
                    + " where <length> may be day, week, month or year and @calendar or @calendar(<zone>)"
                    + " aligns it to the calendar, optionally followed by ' fail-open', ' fail-closed' or"
                    + " ' fail-local', then by ' shadow' to count it without enforcing it";
    private static final Pattern CALENDAR = Pattern.compile("calendar(?:\\((.+)\\))?", Pattern.CASE_INSENSITIVE);
    private static final Pattern WINDOW_VALUE = Pattern.compile(
            "\\s*(?:\\$\\s*(\\d+(?:\\.\\d{1,6})?)|(\\d+)\\s*([a-z][a-z0-9_]*)?)"
                    + "\\s*(?:/|per)\\s*([^@\\s]+)\\s*(?:@\\s*(\\S+)\\s*)?(?:\\s+fail-(\\S+)\\s*)?"
                    + "(?:\\s+(shadow)\\s*)?",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)([smhdw])");

    private TierFileParser() {}

    /** The entries of a properties file, by key. */
    static SortedMap<String, String> entries(Properties properties) {
        SortedMap<String, String> entries = new TreeMap<>();
        for (String key : properties.stringPropertyNames()) {
            entries.put(key, properties.getProperty(key));
        }
        return entries;
    }

    /**
     * The entries of a map, by key: a nested map's keys are joined to its own with dots, so that
     * {@code {"tier": {"free": {"minute": "5/1m"}}}} is the entry {@code tier.free.minute = 5/1m}.
     */
    static SortedMap<String, String> entries(Map<String, ?> map) {
        SortedMap<String, String> entries = new TreeMap<>();
        flatten("", map, entries);
        return entries;
    }

    private static void flatten(String prefix, Map<?, ?> map, SortedMap<String, String> entries) {
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String name)) {
                throw new IllegalArgumentException("Tier policy entry '" + (prefix.isEmpty() ? "" : prefix + ".")
                        + entry.getKey() + "': a key must be text, was "
                        + (entry.getKey() == null
                                ? "null"
                                : entry.getKey().getClass().getSimpleName()));
            }
            String key = prefix.isEmpty() ? name : prefix + "." + name;
            Object value = entry.getValue();
            if (value instanceof Map<?, ?> nested) {
                flatten(key, nested, entries);
            } else if (value instanceof CharSequence text) {
                if (entries.putIfAbsent(key, text.toString()) != null) {
                    throw new IllegalArgumentException("Tier policy entry '" + key + "' is given twice");
                }
            } else if (value == null) {
                throw new IllegalArgumentException("Tier policy entry '" + key + "' has no value: expected "
                        + (key.equals(DEFAULT_TIER) ? "a tier's name" : EXPECTED_VALUE));
            } else {
                throw new IllegalArgumentException("Tier policy entry '" + key + "' must be text or a map, was "
                        + value.getClass().getSimpleName() + " '" + value + "'");
            }
        }
    }

    /** The policy of these entries, read in key order. */
    static TierPolicy parse(SortedMap<String, String> entries) {
        Map<String, List<Window>> windowsByTier = new LinkedHashMap<>();
        String defaultName = null;
        for (Map.Entry<String, String> entry : entries.entrySet()) {
            String key = entry.getKey();
            String value = entry.getValue().trim();
            if (key.equals(DEFAULT_TIER)) {
                defaultName = value;
                continue;
            }
            String[] parts = key.split("\\.", -1);
            if (parts.length != 3 || !parts[0].equals("tier") || parts[1].isBlank() || parts[2].isBlank()) {
                throw new IllegalArgumentException(
                        "Unknown tier policy entry '" + key + "': expected 'tier.<tier>.<window>"
                                + " = <limit>[ <unit>]/<length>[@<step>]' or 'default-tier'");
            }
            Window window = window(key, parts[2], value);
            windowsByTier.computeIfAbsent(parts[1], name -> new ArrayList<>()).add(window);
        }
        if (windowsByTier.isEmpty()) {
            throw new IllegalArgumentException("Tier policy defines no tier: add 'tier.<tier>.<window>' entries");
        }
        TierPolicy.Builder builder = TierPolicy.builder();
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

    /** One window value of entry {@code key}; {@code value} is already trimmed. */
    static Window window(String key, String windowName, String value) {
        Matcher matcher = WINDOW_VALUE.matcher(value);
        if (!matcher.matches()) {
            throw new IllegalArgumentException("Tier policy entry '" + key + "' = '" + value + "': expected "
                    + EXPECTED_VALUE + ", e.g. '5/60s', '10000 tokens/1d@1m' or '$100/30d@1h'");
        }
        long limit;
        Window.Unit unit;
        try {
            if (matcher.group(1) != null) {
                limit = new java.math.BigDecimal(matcher.group(1))
                        .movePointRight(6)
                        .longValueExact();
                unit = Window.Unit.USD_MICROS;
            } else {
                limit = Long.parseLong(matcher.group(2));
                unit = unit(key, value, matcher.group(3));
            }
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(
                    "Tier policy entry '" + key + "' = '" + value + "': limit is too large", e);
        }
        @Nullable String step = matcher.group(5);
        @Nullable String policy = matcher.group(6);
        Window.Calendar calendar = calendar(key, value, matcher.group(4), step);
        Duration length = calendar != null ? calendar.period().nominalLength() : length(key, value, matcher.group(4));
        Duration precision = step == null || calendar != null ? Duration.ZERO : length(key, value, step);
        try {
            Window window = calendar != null
                    ? Window.calendar(windowName, limit, unit, calendar.period(), calendar.zone())
                    : new Window(windowName, limit, length, unit, precision);
            Window policed = policy == null ? window : window.withFailurePolicy(FailurePolicy.of(policy));
            return matcher.group(7) == null ? policed : policed.withMode(Window.Mode.SHADOW);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Tier policy entry '" + key + "' = '" + value + "': " + e.getMessage(), e);
        }
    }

    /**
     * The calendar of a window value, or {@code null} for a sliding window: {@code month} and {@code
     * year} are always calendar periods; {@code day} and {@code week} are when {@code @calendar}
     * follows (without it they are sliding, 1d and 7d); {@code @calendar(<zone>)} names the zone.
     */
    private static Window.@Nullable Calendar calendar(String key, String value, String length, @Nullable String step) {
        String word = length.toLowerCase(Locale.ROOT);
        boolean periodWord = word.equals("day") || word.equals("week") || word.equals("month") || word.equals("year");
        Matcher aligned = step == null ? null : CALENDAR.matcher(step);
        boolean calendar = aligned != null && aligned.matches();
        if (calendar && !periodWord) {
            throw new IllegalArgumentException("Tier policy entry '" + key + "' = '" + value + "': @" + step
                    + " needs a length of day, week, month or year, was '" + length + "'");
        }
        if (!periodWord || (!calendar && (word.equals("day") || word.equals("week")))) {
            return null;
        }
        if (step != null && !calendar) {
            throw new IllegalArgumentException("Tier policy entry '" + key + "' = '" + value + "': a calendar " + word
                    + " takes no precision step, only @calendar or @calendar(<zone>), was '@" + step + "'");
        }
        ZoneId zone = ZoneOffset.UTC;
        @Nullable String zoneName = aligned == null ? null : aligned.group(1);
        if (zoneName != null) {
            try {
                zone = ZoneId.of(zoneName.trim());
            } catch (DateTimeException e) {
                throw new IllegalArgumentException(
                        "Tier policy entry '" + key + "' = '" + value + "': time zone '" + zoneName.trim()
                                + "' is not known (use a region such as America/New_York, or UTC)",
                        e);
            }
        }
        return new Window.Calendar(CalendarPeriod.of(word), zone);
    }

    /** The unit a window value names after its limit: requests when none. */
    private static Window.Unit unit(String key, String value, @Nullable String word) {
        if (word == null) {
            return Window.Unit.REQUESTS;
        }
        String lower = word.toLowerCase(Locale.ROOT);
        if (lower.equals("request") || lower.equals("requests")) {
            return Window.Unit.REQUESTS;
        } else if (lower.equals("token") || lower.equals("tokens")) {
            return Window.Unit.TOKENS;
        }
        try {
            return Window.Unit.of(lower);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Tier policy entry '" + key + "' = '" + value + "': unit '" + word + "': " + e.getMessage(), e);
        }
    }

    private static Duration length(String key, String value, String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        try {
            if (lower.startsWith("p")) {
                return Duration.parse(text);
            }
            if (lower.equals("day")) {
                return Duration.ofDays(1);
            }
            if (lower.equals("week")) {
                return Duration.ofDays(7);
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
}
