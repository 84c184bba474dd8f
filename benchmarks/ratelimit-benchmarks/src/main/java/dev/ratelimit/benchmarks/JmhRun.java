package dev.ratelimit.benchmarks;

/**
 * One JMH figure of the report: a benchmark method, a thread count and the workload parameters.
 *
 * @param id a short stable id the ratios refer to
 * @param group ceiling, ours or peer
 * @param contender who is measured, for example {@code ours: Lettuce blocking}
 * @param benchmark the benchmark class
 * @param method the benchmark method
 * @param threads benchmark threads (1 for the asynchronous runs, which keep {@link BenchRedis#IN_FLIGHT}
 *     calls in flight from one thread)
 * @param keys {@code contended} or {@code spread}
 * @param windows windows per check
 */
record JmhRun(
        String id,
        String group,
        String contender,
        Class<?> benchmark,
        String method,
        int threads,
        String keys,
        int windows) {

    /** The benchmark method of the asynchronous runs. */
    private static final String ASYNC = "async64";

    static JmhRun async(String id, String group, String contender, Class<?> benchmark, String keys, int windows) {
        return new JmhRun(id, group, contender, benchmark, ASYNC, 1, keys, windows);
    }

    /** Returns the parameters as the benchmark's outcome line spells them. */
    String outcomeParams() {
        return "keys=" + keys + ",windows=" + windows;
    }

    /**
     * Returns which case of {@link ReserveBenchmark} the run measures, {@code seed} for the seed's
     * script in {@link LettuceEvalshaBenchmark}, {@code check} for other benchmarks.
     */
    String variant() {
        if (benchmark == ReserveBenchmark.class) {
            return id.replaceFirst("^tb-", "").replaceFirst("-8t$", "");
        }
        return id.startsWith("seed-") ? "seed" : "check";
    }

    boolean isAsync() {
        return method.equals(ASYNC);
    }

    /** The measured figures of a run. */
    record Figures(
            JmhRun run, double decisionsPerSecond, double p50Micros, double p99Micros, long samples, int otherJvms) {}
}
