package dev.ratelimit.gateway;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every command clients send to a private redis-server while it is open, as Redis {@code MONITOR}
 * reports them (the commands a script runs, marked {@code [0 lua]}, are left out): each one a list
 * of its words, unquoted, for tests that count the store calls naming a key.
 */
final class RedisMonitor implements AutoCloseable {

    private final RespClient client;
    private final List<List<String>> commands = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private RedisMonitor(RedisServer redis) {
        client = redis.connect();
        client.readTimeout(Duration.ofMinutes(5));
        client.send("MONITOR");
        client.read(); // +OK: every command after it is reported
        reader = new Thread(this::read, "redis-monitor");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts monitoring {@code redis}: every command from now on is recorded. */
    static RedisMonitor start(RedisServer redis) {
        return new RedisMonitor(redis);
    }

    private void read() {
        try {
            while (true) {
                String line = String.valueOf(client.read());
                int quote = line.indexOf('"');
                if (quote > 0 && !line.substring(0, quote).contains(" lua]")) {
                    commands.add(words(line.substring(quote)));
                }
            }
        } catch (RuntimeException e) {
            // closed
        }
    }

    /** The commands recorded so far whose words (keys or arguments) include one starting with {@code prefix}. */
    List<List<String>> naming(String prefix) {
        List<List<String>> found = new ArrayList<>();
        for (List<String> command : commands) {
            if (command.stream().anyMatch(word -> word.startsWith(prefix))) {
                found.add(command);
            }
        }
        return found;
    }

    /** MONITOR's quoted words: {@code "EVALSHA" "ab12" "2" ...}, with {@code \"} and {@code \\} escapes. */
    private static List<String> words(String quoted) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        for (int i = 0; i < quoted.length(); i++) {
            char c = quoted.charAt(i);
            if (word == null) {
                if (c == '"') {
                    word = new StringBuilder();
                }
            } else if (c == '\\' && i + 1 < quoted.length()) {
                word.append(quoted.charAt(++i));
            } else if (c == '"') {
                words.add(word.toString());
                word = null;
            } else {
                word.append(c);
            }
        }
        return words;
    }

    @Override
    public void close() {
        client.close();
        try {
            reader.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
