package dev.ratelimit.spring.boot.web.internal;

import java.util.List;

/**
 * Servlet-style URL patterns for the WebFlux filter, so {@code ratelimit.paths} and {@code
 * ratelimit.exclude-paths} mean the same on both stacks: {@code /*} everything, {@code /api/*} that
 * path and everything below it, anything else exactly that path. Not API.
 */
public final class PathPatterns {

    private final List<String> exact;
    private final List<String> prefixes;

    private PathPatterns(List<String> exact, List<String> prefixes) {
        this.exact = exact;
        this.prefixes = prefixes;
    }

    /**
     * Parses patterns.
     *
     * @param patterns the patterns, each starting with {@code /}
     * @param property the property they come from, named in errors
     * @return the patterns
     * @throws IllegalArgumentException if a pattern does not start with {@code /} or has a wildcard
     *     elsewhere than a trailing {@code /*}
     */
    public static PathPatterns of(List<String> patterns, String property) {
        List<String> exact = new java.util.ArrayList<>();
        List<String> prefixes = new java.util.ArrayList<>();
        for (String pattern : patterns) {
            if (!pattern.startsWith("/")) {
                throw new IllegalArgumentException(property + " entries must start with '/', was '" + pattern + "'");
            }
            int star = pattern.indexOf('*');
            if (star >= 0 && !(pattern.endsWith("/*") && star == pattern.length() - 1)) {
                throw new IllegalArgumentException(
                        property + " entries may only end with '/*' as a wildcard, was '" + pattern + "'");
            }
            if (star >= 0) {
                prefixes.add(pattern.substring(0, pattern.length() - 2));
            } else {
                exact.add(pattern);
            }
        }
        return new PathPatterns(List.copyOf(exact), List.copyOf(prefixes));
    }

    /**
     * Tells whether a path matches one of the patterns.
     *
     * @param path the request's path within the application
     * @return whether it matches
     */
    public boolean matches(String path) {
        if (exact.contains(path)) {
            return true;
        }
        for (String prefix : prefixes) {
            if (prefix.isEmpty() || path.equals(prefix) || path.startsWith(prefix + "/")) {
                return true;
            }
        }
        return false;
    }
}
