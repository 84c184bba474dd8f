package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.testsupport.RequiredTools;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The status page in a real headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}, driven through Selenium): it loads, then shows, without a reload, what the store
 * holds as traffic and time go by after it was opened, the upstream cooldowns in force, and the
 * shadow windows with the requests they would have refused.
 */
class StatusPageBrowserTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAM = PLAIN.replace("{\"model\"", "{\"stream\":true,\"model\"");
    private static final String FREE = "demo-user-free";
    private static final String PRO = "demo-user-pro";
    private static final long STUB_TOTAL = StubUpstream.PROMPT + StubUpstream.COMPLETION;

    @Test
    @DisplayName(
            "the page shows the store's live counts: traffic after it loaded, a reservation in flight, time passing")
    void statusPageFollowsTraffic(@TempDir Path profile) throws Exception {
        // skipped with a notice on a machine without Chromium; under CI=true (.ci/run installs both) it fails
        RequiredTools.require("apt-get install chromium chromium-driver", CHROMIUM, CHROMEDRIVER);
        // the held stream waits while the page is read: longer than the test configuration's idle timeout
        Path config = profile.resolve("gateway.yaml");
        Files.writeString(
                config,
                Files.readString(Harness.testConfig())
                        .replace("upstream-idle-timeout-ms: 1500", "upstream-idle-timeout-ms: 60000"));
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true, Map.of("GATEWAY_CONFIG", config.toString()))) {
            Browser chromium = Browser.open(profile);
            WebDriver browser = chromium.driver();
            CountDownLatch release = new CountDownLatch(1);
            try {
                browser.get(harness.server.managementUrl() + "/");
                assertThat(awaitRow(browser, FREE, "minute", "0").value()).isEqualTo("0 / 5");
                assertThat(awaitRow(browser, FREE, "in-flight", "0").limit()).isEqualTo("2");
                assertThat(browser.getTitle()).isEqualTo("ratelimit gateway");

                // traffic after the page loaded: two answered requests, one of another tenant, one stream held open
                for (int i = 0; i < 2; i++) {
                    assertThat(harness.chat("demo-free", PLAIN).statusCode()).isEqualTo(200);
                }
                assertThat(harness.chat("demo-pro", PLAIN).statusCode()).isEqualTo(200);
                harness.stub()
                        .enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
                CompletableFuture<HttpResponse<String>> stream = harness.http.sendAsync(
                        harness.chatRequest("demo-free", STREAM), HttpResponse.BodyHandlers.ofString());

                Row minute = awaitRow(browser, FREE, "minute", "3");
                assertThat(minute.value()).startsWith("3 / 5 · ");
                assertThat(minute.fillStyle()).contains("width:60.0%");
                assertThat(awaitRow(browser, FREE, "in-flight", "1").value()).isEqualTo("1 / 2");
                long estimate = new TokenCounter()
                                .chatPrompt(
                                        "gpt-4o-mini",
                                        OpenAi.JSON.readTree(STREAM).get("messages"))
                        + 1_024;
                assertThat(awaitRow(browser, FREE, "tokens-minute", Long.toString(2 * STUB_TOTAL + estimate))
                                .value())
                        .as("two requests settled to their usage, the open stream reserved at its estimate")
                        .startsWith(String.format(Locale.US, "%,d / 20,000", 2 * STUB_TOTAL + estimate));
                assertThat(awaitRow(browser, PRO, "minute", "1").value()).startsWith("1 / 60 · ");
                assertThat(awaitRow(browser, "gpt-4o-mini", "rpm", "4").limit())
                        .as("the upstream cap counts every tenant's requests to the model")
                        .isEqualTo("5000");

                release.countDown();
                assertThat(stream.get(20, TimeUnit.SECONDS).body()).endsWith("data: [DONE]\n\n");
                assertThat(awaitRow(browser, FREE, "in-flight", "0").value()).isEqualTo("0 / 2");
                awaitRow(browser, FREE, "tokens-minute", Long.toString(3 * STUB_TOTAL));

                // no request from here on: only a live read of the store can show the minute windows emptying
                harness.clock.advance(Duration.ofSeconds(61));
                assertThat(awaitRow(browser, FREE, "minute", "0").value()).isEqualTo("0 / 5");
                awaitRow(browser, FREE, "tokens-minute", "0");
                awaitRow(browser, "gpt-4o-mini", "rpm", "0");
                assertThat(awaitRow(browser, FREE, "day", "3").value()).startsWith("3 / 100 · ");
                awaitRow(browser, FREE, "tokens-day", Long.toString(3 * STUB_TOTAL));
                assertThat(awaitRow(browser, "text-embedding-3-small", "tpm", "0")
                                .limit())
                        .as("every upstream cap has its card, unused ones too")
                        .isEqualTo("1000000");
                assertThat(browser.getPageSource())
                        .contains(
                                "upstream: upstream (openai, " + harness.stub().baseUrl());
            } finally {
                release.countDown();
                chromium.close();
            }
        }
    }

    @Test
    @DisplayName("the page lists an upstream cooldown while it is in force, and 'none' once it ended")
    void statusPageShowsCooldowns(@TempDir Path profile) throws Exception {
        RequiredTools.require("apt-get install chromium chromium-driver", CHROMIUM, CHROMEDRIVER);
        try (Upstreams upstreams = Upstreams.start(Harness.Store.MEMORY, profile)) {
            Harness harness = upstreams.harness;
            Browser chromium = Browser.open(profile);
            try {
                WebDriver browser = chromium.driver();
                browser.get(harness.server.managementUrl() + "/");
                awaitCooldowns(browser, "none");

                upstreams.anthropic.enqueue(AnthropicStub.status(429, Map.of("retry-after", "60")));
                assertThat(Upstreams.messages(harness, "demo-pro", Upstreams.body(UpstreamsTest.MODEL, false))
                                .statusCode())
                        .isEqualTo(429);
                String shown = awaitCooldowns(browser, "anthropic · " + UpstreamsTest.MODEL + ": 429 for ");
                assertThat(shown).matches("anthropic · " + UpstreamsTest.MODEL + ": 429 for \\d+ s more");

                harness.clock.advance(Duration.ofSeconds(61)); // the cooldown's end passes on the gateway's clock
                awaitCooldowns(browser, "none");
            } finally {
                chromium.close();
            }
        }
    }

    @Test
    @DisplayName("a shadow window's bar is marked shadow and says how many requests it would have refused")
    void statusPageMarksShadowWindows(@TempDir Path profile) throws Exception {
        RequiredTools.require("apt-get install chromium chromium-driver", CHROMIUM, CHROMEDRIVER);
        Path config = Path.of(
                StatusPageBrowserTest.class.getResource("gateway-shadow.yaml").toURI());
        try (Harness harness =
                Harness.start(Harness.Store.MEMORY, false, Map.of("GATEWAY_CONFIG", config.toString()))) {
            for (int i = 0; i < 4; i++) {
                assertThat(harness.chat("shadow-key", PLAIN).statusCode()).isEqualTo(200);
            }
            Browser chromium = Browser.open(profile);
            try {
                WebDriver browser = chromium.driver();
                browser.get(harness.server.managementUrl() + "/");
                assertThat(awaitRow(browser, "shadowed", "rpm", "3").value())
                        .as("the fourth request was admitted, counted as a refusal, not in the window")
                        .endsWith("· would have refused 1");
                WebElement shadow = browser.findElement(By.cssSelector(
                        "[data-owner='shadowed'][data-window='rpm'][data-mode='shadow'][data-shadow-refusals='1']"));
                assertThat(shadow.findElement(By.className("label")).getText()).isEqualTo("rpm (requests, shadow)");
                assertThat(awaitRow(browser, "enforced", "rpm", "0").value()).doesNotContain("refused");
                assertThat(browser.findElements(
                                By.cssSelector("[data-owner='enforced'][data-window='rpm'][data-mode='enforce']")))
                        .hasSize(1);
            } finally {
                chromium.close();
            }
        }
    }

    /** Waits until the page's {@code #cooldowns} element starts with {@code text}, and returns what it shows. */
    private static String awaitCooldowns(WebDriver browser, String text) throws InterruptedException {
        String[] shown = new String[1];
        Harness.await("the page's cooldowns show " + text, () -> {
            try {
                shown[0] = browser.findElement(By.id("cooldowns")).getText();
                return shown[0].startsWith(text);
            } catch (StaleElementReferenceException e) {
                return false;
            }
        });
        return shown[0];
    }

    /** A headless Chromium driven through its chromedriver, with a profile of its own. */
    private record Browser(ChromeDriverService service, WebDriver driver) implements AutoCloseable {

        static Browser open(Path profile) throws Exception {
            ChromeDriverService service = new ChromeDriverService.Builder()
                    .usingDriverExecutable(CHROMEDRIVER.toFile())
                    .usingAnyFreePort()
                    .build();
            ChromeOptions options = new ChromeOptions();
            options.setBinary(CHROMIUM.toFile());
            options.addArguments(
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--user-data-dir=" + Files.createDirectories(profile.resolve("chromium")),
                    "--window-size=1280,900");
            return new Browser(service, new ChromeDriver(service, options));
        }

        @Override
        public void close() {
            try {
                driver.quit();
            } finally {
                service.stop();
            }
        }
    }

    /** What one bar row shows. */
    record Row(String limit, String value, String fillStyle) {}

    /**
     * Waits until the page, re-rendering itself every second, shows the row with that count, and
     * reads it in one go (a re-render between finding and reading makes the elements stale: then
     * it looks again).
     */
    private static Row awaitRow(WebDriver browser, String owner, String window, String used)
            throws InterruptedException {
        String selector = "[data-owner='" + owner + "'][data-window='" + window + "'][data-used='" + used + "']";
        Row[] row = new Row[1];
        Harness.await("the page shows " + selector, () -> {
            try {
                List<WebElement> found = browser.findElements(By.cssSelector(selector));
                if (found.isEmpty()) {
                    return false;
                }
                WebElement element = found.get(0);
                row[0] = new Row(
                        element.getDomAttribute("data-limit"),
                        element.findElement(By.className("value")).getText(),
                        element.findElement(By.className("fill")).getDomAttribute("style"));
                return true;
            } catch (StaleElementReferenceException e) {
                return false;
            }
        });
        return row[0];
    }
}
