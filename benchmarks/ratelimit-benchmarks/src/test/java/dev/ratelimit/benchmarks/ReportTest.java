package dev.ratelimit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("the template renders every section with the run's figures and the machine it measured")
    void rendersTheTemplate() throws Exception {
        JmhRun ours = BenchmarkRunner.runs().stream()
                .filter(run -> run.id().equals("ours-lettuce-1t"))
                .findFirst()
                .orElseThrow();
        Machine machine = new Machine(
                        6,
                        "Test CPU @ 3.0GHz",
                        "Test VM 17",
                        "?",
                        "0.5 / 0.4 / 0.3",
                        "?",
                        0,
                        false,
                        "2026-12-01T00:00Z")
                .withRedis("7.0.15")
                .finished();
        Report report = new Report(
                machine,
                "JMH SampleTime mode",
                List.of(new RedisBenchmarkTool.Result(
                        "redis-benchmark, 1 client", 1, 1, Workload.SPREAD, 1_000, 12_345.0, 0.07, 0.12)),
                List.of(new JmhRun.Figures(ours, 9_146.0, 104.1, 180.0, 1_000, 0)),
                List.of(new RoundTrips.Result(
                        "ours: Lettuce", "spread, 1 window", 2_000, 1.0, Map.of("evalsha", 1.0), Map.of(), 9.5)),
                List.of(new MemoryPerTenant.Result("free", "ours (sliding log, both windows)", 3_920, 2, "rejected")),
                "",
                Duration.ofMinutes(12));
        Path markdown = dir.resolve("benchmarks.md");
        report.write(markdown, dir.resolve("benchmarks.png"));

        String text = Files.readString(markdown, StandardCharsets.UTF_8);
        assertThat(text)
                .doesNotContain("{{")
                .contains("# Benchmarks", "## Targets", "## Throughput and latency (JMH)")
                .contains("## Redis ceiling (`redis-benchmark`)", "## Round trips and Redis work per decision")
                .contains("## Redis memory per tenant at full budget", "![decisions per second](benchmarks.png)")
                .contains("**Machine**: 6 cores (Test CPU @ 3.0GHz), Test VM 17", "Redis 7.0.15", "share these 6 cores")
                .contains(
                        "| ours-lettuce-1t | ours: Lettuce blocking | spread | 1 | 1 thread | 9,146 | 104.1 | 180.0 |")
                .contains("| redis-benchmark, 1 client | spread | 1 | 1 | 1,000 | 12,345 | 0.070 | 0.120 |")
                .contains("1,000,000 per minute")
                .doesNotContain("2-core", "Smoke run")
                .doesNotContain("experiment", "oalescing", "caller thread", "flushes consolidated");
        assertThat(dir.resolve("benchmarks.png")).isNotEmptyFile();
    }

    @Test
    @DisplayName("the dropped experiments (coalescing, caller-thread replies, consolidated flushes) are not run")
    void noExperimentRuns() {
        assertThat(BenchmarkRunner.runs())
                .extracting(JmhRun::id)
                .isNotEmpty()
                .noneMatch(id -> id.endsWith("-co") || id.endsWith("-ct") || id.endsWith("-fc"));
    }

    @Test
    @DisplayName("a placeholder without a value fails the report instead of printing the placeholder")
    void unknownPlaceholderFails() {
        assertThat(Report.fill("a {{x}} b", Map.of("x", "$1\\"))).isEqualTo("a $1\\ b");
        assertThatThrownBy(() -> Report.fill("a {{missing}}", Map.of()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("{{missing}}");
    }
}
