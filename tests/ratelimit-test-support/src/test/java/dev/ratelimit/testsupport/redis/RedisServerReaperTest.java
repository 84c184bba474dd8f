package dev.ratelimit.testsupport.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RedisServerReaperTest {

    /** Starts a server, prints its port and pid, and waits to be killed. */
    public static void main(String[] args) throws InterruptedException {
        RedisServer server = RedisServer.start();
        System.out.println(server.port() + " " + server.directory());
        System.out.flush();
        Thread.sleep(TimeUnit.MINUTES.toMillis(2));
    }

    @Test
    @DisplayName("a server left behind by a JVM killed with SIGKILL is reaped by the next fixture start")
    void orphansAreReaped() throws Exception {
        String javaBinary =
                Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(List.of(
                        javaBinary,
                        "-cp",
                        System.getProperty("java.class.path"),
                        RedisServerReaperTest.class.getName()))
                .redirectErrorStream(true)
                .start();
        String line;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            line = out.readLine();
        }
        assertThat(line).as("the child's server").isNotNull();
        int port = Integer.parseInt(line.split(" ")[0]);
        Path directory = Path.of(line.split(" ", 2)[1]);
        child.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        try (RespClient orphan = RespClient.connect(RedisServer.HOST, port, Duration.ofSeconds(5))) {
            assertThat(orphan.call("PING")).as("the orphan outlived its JVM").isEqualTo("PONG");
        }

        RedisServer.reapOrphans();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean gone = false;
        while (!gone && System.nanoTime() < deadline) {
            try (RespClient probe = RespClient.connect(RedisServer.HOST, port, Duration.ofSeconds(1))) {
                probe.call("PING");
                Thread.sleep(100);
            } catch (RuntimeException e) {
                gone = true;
            }
        }
        assertThat(gone).as("the orphan on port %d was killed", port).isTrue();
        assertThat(directory).doesNotExist();
    }
}
