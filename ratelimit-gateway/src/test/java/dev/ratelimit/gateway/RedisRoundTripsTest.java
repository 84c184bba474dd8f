package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round trips to Redis per metered request, counted by the server itself ({@code INFO
 * commandstats} on a private redis-server, reset before the request): the reservation with its
 * concurrency slot, and the settlement that frees it. Commands the script runs count under their
 * own names; every round trip of a client is an {@code EVALSHA} (or {@code EVAL}) or a command
 * outside the script's set. On a private Redis Cluster the same count, summed over the masters,
 * grows with the levels a request is charged to: each is a scope of its own there.
 */
class RedisRoundTripsTest {

    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAM =
            "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    /** The commands the store's script runs: counted in commandstats, but no round trip of their own. */
    private static final List<String> IN_SCRIPT = List.of(
            "time",
            "zremrangebyscore",
            "zcard",
            "zrange",
            "zrangebyscore",
            "zadd",
            "zrem",
            "get",
            "set",
            "del",
            "incrby",
            "decrby",
            "getrange",
            "setrange",
            "expire");

    private static final Pattern STAT = Pattern.compile("cmdstat_([a-z|]+):calls=(\\d+)");

    @TempDir
    Path directory;

    @Test
    @DisplayName("a metered request on Redis makes exactly 2 round trips: reserve with its slot, settle freeing it")
    void twoRoundTripsPerRequest() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-rt, tenant: rt, tier: one }
                tiers:
                  one:
                    max-concurrent: 2
                    windows: { minute: 100000/1m }
                """);
        try (RedisServer redis = RedisServer.start(List.of());
                Harness harness = Harness.start(
                        Harness.Store.MEMORY, // the private server below
                        true,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            assertThat(harness.chat("k-rt", PLAIN).statusCode()).isEqualTo(200); // scripts loaded, connected
            Harness.await("the first request settled", () -> harness.inFlight("rt") == 0);

            redis.call("CONFIG", "RESETSTAT");
            assertThat(harness.chat("k-rt", PLAIN).statusCode()).isEqualTo(200);
            Harness.await("settled", () -> scripts(roundTrips(redis)) == 2);
            Map<String, Long> plain = roundTrips(redis);
            System.out.println("gateway round trips to Redis, one plain request: " + plain);
            assertThat(plain).as("round trips of one plain request").containsOnlyKeys("evalsha");
            assertThat(plain.get("evalsha")).isEqualTo(2);

            redis.call("CONFIG", "RESETSTAT");
            CountDownLatch release = new CountDownLatch(1);
            harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
            HttpResponse<InputStream> stream =
                    harness.http.send(harness.chatRequest("k-rt", STREAM), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(stream.statusCode()).isEqualTo(200);
            assertThat(roundTrips(redis))
                    .as("before the stream's end: one round trip, its reservation with the slot")
                    .containsEntry("evalsha", 1L)
                    .containsOnlyKeys("evalsha");
            release.countDown();
            stream.body().readAllBytes();
            Harness.await("the stream settled", () -> scripts(roundTrips(redis)) == 2);
            assertThat(roundTrips(redis)).as("a stream's round trips").containsOnlyKeys("evalsha");
        }
    }

    @Test
    @DisplayName("on a Redis Cluster a metered request makes 2 round trips per level: each level reserved and"
            + " settled in its own slot")
    void twoRoundTripsPerLevelOnACluster() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-solo, tenant: solo, tier: one }
                  - { key: k-member, tenant: member, tier: one, team: research }
                orgs:
                  acme: { windows: { spend-month: $100/30d@1h } }
                teams:
                  research: { org: acme, windows: { spend-month: $50/30d@1h } }
                tiers:
                  one:
                    max-concurrent: 2
                    windows: { minute: 100000/1m }
                models:
                  gpt-4o-mini: { rpm: 100000, tpm: 100000000 }
                prices:
                  gpt-4o-mini: { input: 0.15, output: 0.60 }
                """);
        // levels: the tenant alone; the tenant and the model's cap; the tenant, its team, its organisation and the cap.
        // Each level holds tokens or dollars, which the settlement moves from the estimate to the usage: a level of
        // request windows alone would keep its reservation as it is, and its settlement would need no call
        // (the tenant's always does: it frees the slot)
        Map<String, Integer> levels = new LinkedHashMap<>();
        levels.put("k-solo other-model", 1);
        levels.put("k-solo gpt-4o-mini", 2);
        levels.put("k-member gpt-4o-mini", 4);
        try (Harness harness =
                Harness.start(Harness.Store.CLUSTER, false, Map.of("GATEWAY_CONFIG", config.toString()))) {
            List<RedisServer> masters = Harness.cluster().masters();
            for (String request : levels.keySet()) { // scripts loaded on every master, node connections open
                assertThat(send(harness, request)).isEqualTo(200);
            }
            Harness.await(
                    "the first requests settled",
                    () -> harness.server.gateway().admission().open() == 0);

            Map<String, Long> counted = new LinkedHashMap<>();
            for (Map.Entry<String, Integer> request : levels.entrySet()) {
                masters.forEach(master -> master.call("CONFIG", "RESETSTAT"));
                assertThat(send(harness, request.getKey())).isEqualTo(200);
                // every settlement, of every level, has been applied once the admission is no longer open (a
                // slot count would read Redis)
                Harness.await(
                        "settled", () -> harness.server.gateway().admission().open() == 0);
                counted.put(request.getKey() + " (" + request.getValue() + " levels)", scripts(masters));
            }
            System.out.println("gateway round trips to a Redis Cluster, one plain request: " + counted);
            assertThat(counted.values()).containsExactly(2L, 4L, 8L);
        }
    }

    private static int send(Harness harness, String request) throws Exception {
        String[] keyAndModel = request.split(" ");
        return harness.chat(
                        keyAndModel[0],
                        "{\"model\":\"" + keyAndModel[1] + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
                .statusCode();
    }

    /** The scripts run on the cluster's masters since their last reset: one round trip each. */
    private static long scripts(List<RedisServer> masters) {
        return masters.stream().mapToLong(master -> scripts(roundTrips(master))).sum();
    }

    /** Calls per command since the last reset, without the script's own commands and this test's INFO. */
    private static Map<String, Long> roundTrips(RedisServer redis) {
        Object info = redis.call("INFO", "commandstats");
        String text = info instanceof byte[] bytes
                ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
                : String.valueOf(info);
        Map<String, Long> calls = new LinkedHashMap<>();
        Matcher stat = STAT.matcher(text);
        while (stat.find()) {
            String command = stat.group(1);
            // hget: the managed keys' version poll, every ManagedKeys.POLL_EVERY whatever the traffic
            if (!IN_SCRIPT.contains(command)
                    && !command.equals("info")
                    && !command.startsWith("config")
                    && !command.equals("hget")) {
                calls.put(command, Long.parseLong(stat.group(2)));
            }
        }
        return calls;
    }

    private static long scripts(Map<String, Long> calls) {
        return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
    }
}
