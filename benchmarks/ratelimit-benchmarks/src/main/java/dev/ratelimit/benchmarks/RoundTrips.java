package dev.ratelimit.benchmarks;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * Counts what one decision costs Redis: the commands clients send (round trips, from {@code MONITOR},
 * where commands run by a script are tagged {@code lua}) and every command executed, scripts'
 * included (from {@code INFO commandstats} deltas).
 */
final class RoundTrips {

    private static final String END_MARK = "ratelimit-bench-round-trips-end";

    /** The commands of one measured contender, per decision. */
    record Result(
            String label,
            String workload,
            long decisions,
            double roundTrips,
            Map<String, Double> clientCommands,
            Map<String, Double> executedCommands,
            double serverMicros) {

        String clientSummary() {
            return summary(clientCommands);
        }

        String executedSummary() {
            return summary(executedCommands);
        }

        private static String summary(Map<String, Double> perDecision) {
            List<String> parts = new ArrayList<>();
            perDecision.forEach(
                    (command, count) -> parts.add(command + " " + String.format(Locale.ROOT, "%.2f", count)));
            return String.join(", ", parts);
        }
    }

    private RoundTrips() {}

    /**
     * Measures a contender: {@code threads} threads each make {@code perThread} decisions through
     * {@code decide} (called with the thread's index); the contender must already be warmed up, so
     * that connection set-up is not counted.
     */
    static Result measure(
            RedisServer redis, String label, String workload, int threads, int perThread, IntConsumer decide)
            throws InterruptedException {
        try (RespClient control = redis.connect();
                RespClient monitor = redis.connect()) {
            String controlAddress = address(control);
            monitor.readTimeout(Duration.ofSeconds(60));
            if (!"OK".equals(monitor.call("MONITOR"))) {
                throw new IllegalStateException("MONITOR refused");
            }
            Map<String, Long> clientCounts = new TreeMap<>();
            AtomicReference<RuntimeException> monitorFailure = new AtomicReference<>();
            CountDownLatch ended = new CountDownLatch(1);
            Thread reader = new Thread(
                    () -> {
                        try {
                            while (true) {
                                Object line = monitor.read();
                                String text = String.valueOf(line);
                                if (text.contains(END_MARK)) {
                                    break;
                                }
                                int open = text.indexOf('[');
                                int close = text.indexOf(']', open + 1);
                                if (open < 0 || close < 0) {
                                    continue;
                                }
                                String source = text.substring(open + 1, close);
                                if (source.endsWith(" lua") || source.endsWith(" " + controlAddress)) {
                                    continue;
                                }
                                int quote = text.indexOf('"', close);
                                int endQuote = text.indexOf('"', quote + 1);
                                String command =
                                        text.substring(quote + 1, endQuote).toLowerCase(Locale.ROOT);
                                synchronized (clientCounts) {
                                    clientCounts.merge(command, 1L, Long::sum);
                                }
                            }
                        } catch (RuntimeException e) {
                            monitorFailure.set(e);
                        } finally {
                            ended.countDown();
                        }
                    },
                    "monitor-reader");
            reader.setDaemon(true);
            reader.start();
            runWorkers(threads, perThread, decide);
            control.call("ECHO", END_MARK);
            ended.await();
            if (monitorFailure.get() != null) {
                throw monitorFailure.get();
            }
            monitor.close();
            // Second pass without MONITOR, which slows every command it reports: Redis's own counters.
            control.call("CONFIG", "RESETSTAT");
            runWorkers(threads, perThread, decide);
            Object stats = control.call("INFO", "commandstats");
            long decisions = (long) threads * perThread;
            Map<String, Double> client = new TreeMap<>();
            long total = 0;
            for (Map.Entry<String, Long> entry : clientCounts.entrySet()) {
                client.put(entry.getKey(), entry.getValue() / (double) decisions);
                total += entry.getValue();
            }
            Map<String, Double> executed = new TreeMap<>();
            double clientUsec = 0;
            for (String line : String.valueOf(stats).split("\r?\n")) {
                if (!line.startsWith("cmdstat_")) {
                    continue;
                }
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                if (command.equals("info") || command.equals("config|resetstat") || command.equals("monitor")) {
                    continue;
                }
                long calls = Long.parseLong(
                        line.replaceAll("^cmdstat_[^:]+:calls=(\\d+),.*$", "$1").trim());
                executed.put(command, calls / (double) decisions);
                if (client.containsKey(command)) {
                    // a script's time includes the commands it runs; those are not client commands: where a
                    // command is both (Bucket4j's GET), only the clients' share of its calls is counted
                    long usec = Long.parseLong(
                            line.replaceAll("^.*[:,]usec=(\\d+),.*$", "$1").trim());
                    double clientShare = Math.min(1.0, client.get(command) * decisions / (double) calls);
                    clientUsec += usec * clientShare;
                }
            }
            return new Result(
                    label,
                    workload,
                    decisions,
                    total / (double) decisions,
                    client,
                    executed,
                    clientUsec / (double) decisions);
        }
    }

    private static void runWorkers(int threads, int perThread, IntConsumer decide) throws InterruptedException {
        Thread[] workers = new Thread[threads];
        AtomicReference<RuntimeException> workFailure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            workers[t] = new Thread(
                    () -> {
                        try {
                            for (int i = 0; i < perThread; i++) {
                                decide.accept(index);
                            }
                        } catch (RuntimeException e) {
                            workFailure.set(e);
                        }
                    },
                    "round-trips-" + t);
            workers[t].start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (workFailure.get() != null) {
            throw workFailure.get();
        }
    }

    private static String address(RespClient client) {
        String info = String.valueOf(client.call("CLIENT", "INFO"));
        for (String field : info.trim().split(" ")) {
            if (field.startsWith("addr=")) {
                return field.substring("addr=".length());
            }
        }
        throw new IllegalStateException("No addr in CLIENT INFO: " + info);
    }
}
