/**
 * JMH benchmarks of the sliding-window stores against the Redis ceiling and the peers users would
 * otherwise pick, and the runner that starts a private Redis, runs them all and writes the report.
 * Not published.
 */
@NullMarked
package dev.ratelimit.benchmarks;

import org.jspecify.annotations.NullMarked;
