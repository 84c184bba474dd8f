package dev.ratelimit.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;

/** Reads a figure of the report from the JSON results file JMH writes for one run. */
final class JmhResults {

    private static final ObjectMapper JSON = new ObjectMapper();

    private JmhResults() {}

    /**
     * Returns the figure of a run: throughput from the sampled mean time per call (threads / mean),
     * JMH's sampled p50 and p99, and the number of samples.
     *
     * @param run the run whose results the file holds
     * @param file JMH's JSON results of that run alone
     * @return the figure; asynchronous runs have no latency (NaN)
     * @throws IOException if the file cannot be read or is not JMH's JSON
     */
    static JmhRun.Figures read(JmhRun run, Path file) throws IOException {
        JsonNode results = JSON.readTree(file.toFile());
        if (!results.isArray() || results.size() != 1) {
            throw new IOException("expected one JMH result for " + run.id() + " in " + file + ", got " + results);
        }
        JsonNode metric = results.get(0).path("primaryMetric");
        String unit = metric.path("scoreUnit").asText();
        if (!unit.equals("us/op")) {
            throw new IOException("expected SampleTime in us/op for " + run.id() + ", got " + unit);
        }
        double meanMicros = metric.path("score").asDouble();
        double perSecond = run.threads() * 1_000_000.0 / meanMicros;
        long samples = 0;
        // rawDataHistogram: per fork, per iteration, [value, count] pairs
        for (JsonNode fork : metric.path("rawDataHistogram")) {
            for (JsonNode iteration : fork) {
                for (JsonNode bin : iteration) {
                    samples += bin.path(1).asLong();
                }
            }
        }
        if (run.isAsync()) {
            // An async call's time is the wait for room among those in flight: Little's law gives latency.
            return new JmhRun.Figures(run, perSecond, Double.NaN, Double.NaN, samples, 0);
        }
        JsonNode percentiles = metric.path("scorePercentiles");
        return new JmhRun.Figures(
                run,
                perSecond,
                percentiles.path("50.0").asDouble(Double.NaN),
                percentiles.path("99.0").asDouble(Double.NaN),
                samples,
                0);
    }
}
