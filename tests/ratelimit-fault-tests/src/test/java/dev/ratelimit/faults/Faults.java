package dev.ratelimit.faults;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RespClient;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** Faults injected into a private Redis: signals, memory, and what the server itself can do. */
final class Faults {

    private Faults() {}

    /** Freezes the server ({@code SIGSTOP}): connections stay open and nothing answers. */
    static void freeze(RedisServer server) {
        signal(server, "STOP");
    }

    /** Lets a frozen server run again ({@code SIGCONT}). */
    static void thaw(RedisServer server) {
        signal(server, "CONT");
    }

    private static void signal(RedisServer server, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(server.pid()))
                    .inheritIO()
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run kill", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Puts the server over its memory limit: writes 2 MB of junk keys, then sets {@code maxmemory}
     * half a megabyte below what the server uses, so every command that may grow memory is refused
     * ({@code OOM}) as long as the policy is {@code noeviction}. (Filling up to a limit instead
     * leaves the server just under it as soon as the refused command's buffer is freed.)
     */
    static void exhaustMemory(RedisServer server) {
        String value = "x".repeat(10 * 1024);
        try (RespClient raw = server.connect()) {
            for (int i = 0; i < JUNK_KEYS; i++) {
                raw.call("SET", "junk:" + i, value);
            }
            String info = String.valueOf(raw.call("INFO", "memory"));
            long used = Long.parseLong(info.lines()
                    .filter(line -> line.startsWith("used_memory:"))
                    .findFirst()
                    .orElseThrow()
                    .substring("used_memory:".length())
                    .trim());
            raw.call("CONFIG", "SET", "maxmemory", Long.toString(used - 512 * 1024));
        }
    }

    /** Lifts the memory limit and deletes the junk {@link #exhaustMemory} wrote. */
    static void restoreMemory(RedisServer server) {
        try (RespClient raw = server.connect()) {
            raw.call("CONFIG", "SET", "maxmemory", "0");
            for (int i = 0; i < JUNK_KEYS; i++) {
                raw.call("DEL", "junk:" + i);
            }
        }
    }

    private static final int JUNK_KEYS = 200;
}
