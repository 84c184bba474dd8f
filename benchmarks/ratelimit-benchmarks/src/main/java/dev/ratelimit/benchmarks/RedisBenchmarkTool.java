package dev.ratelimit.benchmarks;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Redis ceiling: {@code redis-benchmark} sending {@code EVALSHA} of our script with the same
 * arguments as the stores (server time, one permit, a random member, the minute window and limit).
 */
final class RedisBenchmarkTool {

    /** One {@code redis-benchmark} result. */
    record Result(
            String label,
            int clients,
            int pipeline,
            String keys,
            long requests,
            double rps,
            double p50Ms,
            double p99Ms) {}

    private RedisBenchmarkTool() {}

    static Result run(RedisServer redis, String label, int clients, int pipeline, boolean contended, long requests) {
        return run(redis, BenchScripts.CURRENT, label, clients, pipeline, contended, requests);
    }

    /**
     * Runs {@code redis-benchmark} on the seed's four-command script (one window, a random member):
     * the ceiling the asynchronous target is measured against.
     */
    static Result runSeed(RedisServer redis, String label, int clients, int pipeline, long requests) {
        return run(redis, BenchScripts.SEED, label, clients, pipeline, false, requests);
    }

    private static Result run(
            RedisServer redis,
            BenchScripts script,
            String label,
            int clients,
            int pipeline,
            boolean contended,
            long requests) {
        redis.call("FLUSHALL");
        redis.call("SCRIPT", "LOAD", script.source());
        List<String> command = new ArrayList<>(List.of(
                System.getenv().getOrDefault("REDIS_BENCHMARK", "redis-benchmark"),
                "-h",
                redis.host(),
                "-p",
                Integer.toString(redis.port()),
                "-c",
                Integer.toString(clients),
                "-n",
                Long.toString(requests),
                "-P",
                Integer.toString(pipeline),
                // __rand_int__ is replaced independently in the key and the member; -r bounds both
                "-r",
                contended ? "1000000000" : Integer.toString(Workload.USERS),
                "--csv",
                "EVALSHA",
                script.sha1(),
                "1",
                contended ? Workload.minuteKey(0) : "ratelimit:tenant-__rand_int__:60"));
        String member = contended ? "m:__rand_int__" : "m:__rand_int__:__rand_int__";
        if (script == BenchScripts.SEED) { // now (server time), permits, member, length, limit
            command.addAll(List.of(
                    "",
                    "1",
                    member,
                    Long.toString(Workload.MINUTE.lengthMillis()),
                    Long.toString(Workload.MINUTE.limit())));
        } else {
            command.addAll(List.of(ScriptArgs.oneWindowHead()));
            command.add(member);
            command.addAll(List.of(ScriptArgs.oneWindowTail()));
        }
        String output;
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException("redis-benchmark failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run redis-benchmark (is Redis installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
        Object rejectedCheck = redis.call("DBSIZE");
        for (String line : output.split("\n")) {
            if (line.startsWith("\"EVALSHA")) {
                String[] fields = line.split("\",\"");
                double rps = Double.parseDouble(strip(fields[1]));
                double p50 = Double.parseDouble(strip(fields[4]));
                double p99 = Double.parseDouble(strip(fields[6]));
                if (rejectedCheck instanceof Long keys && keys == 0) {
                    throw new IllegalStateException("redis-benchmark wrote nothing: the script did not run");
                }
                return new Result(
                        label,
                        clients,
                        pipeline,
                        contended ? Workload.CONTENDED : Workload.SPREAD,
                        requests,
                        rps,
                        p50,
                        p99);
            }
        }
        throw new IllegalStateException("Unexpected redis-benchmark output: " + output);
    }

    private static String strip(String field) {
        return field.replace("\"", "").trim();
    }
}
