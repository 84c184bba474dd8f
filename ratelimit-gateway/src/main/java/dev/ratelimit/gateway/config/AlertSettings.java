package dev.ratelimit.gateway.config;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@code alerts:} section.
 *
 * @param thresholds per cent of a window's limit, ascending
 * @param windows thresholds for windows of these names instead (an empty list: no alerts)
 * @param webhook where alerts are posted, or {@code null}
 * @param maxAttempts the most times one alert is posted before it is given up
 */
public record AlertSettings(
        List<Integer> thresholds,
        Map<String, List<Integer>> windows,
        @Nullable URI webhook,
        int maxAttempts) {

    /** The thresholds when the configuration names none, in per cent of a window's limit. */
    public static final List<Integer> DEFAULT_THRESHOLDS = List.of(50, 80, 100);

    /** The section when the file has none: the default thresholds, no webhook. */
    public static final AlertSettings DEFAULT = new AlertSettings(DEFAULT_THRESHOLDS, Map.of(), null, 8);

    /** The thresholds of the window of this name. */
    public List<Integer> of(String window) {
        return windows.getOrDefault(window, thresholds);
    }

    /** Validates the file's section; errors are recorded, each naming its setting. */
    public static AlertSettings validate(@Nullable Raw raw, List<String> errors) {
        if (raw == null) {
            return DEFAULT;
        }
        List<Integer> thresholds = raw.thresholds() == null
                ? DEFAULT_THRESHOLDS
                : thresholds(raw.thresholds(), "alerts.thresholds", errors);
        Map<String, List<Integer>> windows = new LinkedHashMap<>();
        if (raw.windows() != null) {
            raw.windows()
                    .forEach((name, list) -> windows.put(name, thresholds(list, "alerts.windows." + name, errors)));
        }
        URI webhook = null;
        int attempts = DEFAULT.maxAttempts();
        RawWebhook hook = raw.webhook();
        if (hook != null) {
            if (hook.url() == null || hook.url().isBlank()) {
                errors.add("alerts.webhook.url: missing (such as https://hooks.example.com/budget)");
            } else {
                try {
                    webhook = UpstreamConfig.url(hook.url(), "alerts.webhook.url");
                } catch (IllegalArgumentException e) {
                    errors.add(String.valueOf(e.getMessage()));
                }
            }
            if (hook.maxAttempts() != null) {
                if (hook.maxAttempts() < 1 || hook.maxAttempts() > 30) {
                    errors.add("alerts.webhook.max-attempts: must be 1 to 30, was " + hook.maxAttempts());
                } else {
                    attempts = hook.maxAttempts();
                }
            }
        }
        return new AlertSettings(thresholds, Map.copyOf(windows), webhook, attempts);
    }

    private static List<Integer> thresholds(@Nullable List<Integer> given, String at, List<String> errors) {
        if (given == null) {
            return List.of();
        }
        List<Integer> sorted = new ArrayList<>();
        for (Integer percent : given) {
            if (percent == null || percent < 1 || percent > 1_000) {
                errors.add(at + ": each threshold is a per cent from 1 to 1000, was " + percent);
            } else if (!sorted.contains(percent)) {
                sorted.add(percent);
            }
        }
        sorted.sort(Integer::compare);
        return List.copyOf(sorted);
    }

    /** The file's shape of the section. */
    public record Raw(
            @Nullable List<Integer> thresholds,
            @Nullable LinkedHashMap<String, @Nullable List<Integer>> windows,
            @Nullable RawWebhook webhook) {}

    /** The file's shape of the webhook. */
    public record RawWebhook(@Nullable String url, @Nullable Integer maxAttempts) {}
}
