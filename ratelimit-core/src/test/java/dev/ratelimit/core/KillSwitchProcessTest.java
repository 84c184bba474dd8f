package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The kill switch's environment variable can only be set for a new process: these tests start one
 * with {@code RATE_LIMIT_DISABLED} set, with and without the system property that overrides it.
 */
class KillSwitchProcessTest {

    /** Builds a limiter with no explicit choice and prints what one check did. */
    public static void main(String[] args) {
        AtomicInteger storeCalls = new AtomicInteger();
        WindowStore store = Stores.answering(request -> {
            storeCalls.incrementAndGet();
            return Evaluation.allowed(0, new long[] {1}, new long[] {60_000});
        });
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        Decision decision = limiter.check("user", 5, Duration.ofMinutes(1));
        System.out.println("remaining=" + decision.remaining() + " storeCalls=" + storeCalls.get());
    }

    @Test
    @DisplayName("RATE_LIMIT_DISABLED=true disables a limiter built without an explicit choice, with a WARN")
    void environmentVariableDisables() throws Exception {
        Result result = run("true", null);
        assertThat(result.stdout).contains("remaining=5 storeCalls=0");
        assertThat(result.stderr).contains("DISABLED");
    }

    @Test
    @DisplayName("the system property wins over the environment variable")
    void propertyWins() throws Exception {
        Result result = run("true", "false");
        assertThat(result.stdout).contains("remaining=4 storeCalls=1");
        assertThat(result.stderr).doesNotContain("DISABLED");
    }

    @Test
    @DisplayName("without either, the limiter is on")
    void onByDefault() throws Exception {
        assertThat(run(null, null).stdout).contains("remaining=4 storeCalls=1");
    }

    private record Result(String stdout, String stderr) {}

    private static Result run(String variable, String property) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path")));
        if (property != null) {
            command.add("-D" + SlidingWindowRateLimiter.DISABLED_PROPERTY + "=" + property);
        }
        command.add(KillSwitchProcessTest.class.getName());
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().remove(SlidingWindowRateLimiter.DISABLED_ENVIRONMENT_VARIABLE);
        if (variable != null) {
            builder.environment().put(SlidingWindowRateLimiter.DISABLED_ENVIRONMENT_VARIABLE, variable);
        }
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue())
                .as(new String(err, StandardCharsets.UTF_8))
                .isZero();
        return new Result(new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }
}
