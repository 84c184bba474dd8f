package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * chromium-driver}, driven through Selenium): it loads, then shows the traffic sent after it was
 * opened without a reload.
 */
class StatusPageBrowserTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final String HELLO =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @Test
    @DisplayName("the page shows each tenant's windows as bars and follows live traffic")
    void statusPageFollowsTraffic(@TempDir Path profile) throws Exception {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            fail("This test needs Debian's Chromium: apt-get install -y chromium chromium-driver"
                    + " (.ci/run installs them); missing " + (Files.isExecutable(CHROMIUM) ? CHROMEDRIVER : CHROMIUM));
        }
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false)) {
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
                    "--user-data-dir=" + profile,
                    "--window-size=1280,900");
            WebDriver browser = new ChromeDriver(service, options);
            try {
                browser.get(harness.base() + "/");
                assertThat(awaitRow(browser, "demo-user-free", "minute", "").value())
                        .isEqualTo("– / 5");
                assertThat(browser.getTitle()).isEqualTo("ratelimit gateway");

                for (int i = 0; i < 3; i++) {
                    assertThat(harness.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
                }
                assertThat(harness.chat("demo-pro", HELLO).statusCode()).isEqualTo(200);

                Row minute = awaitRow(browser, "demo-user-free", "minute", "3");
                assertThat(minute.limit()).isEqualTo("5");
                assertThat(minute.value()).startsWith("3 / 5 · ");
                assertThat(minute.fillStyle()).contains("width:60.0%");
                assertThat(awaitRow(browser, "demo-user-pro", "minute", "1").value())
                        .startsWith("1 / 60 · ");
                long prompt = new TokenCounter()
                        .chatPrompt("gpt-4o-mini", OpenAi.JSON.readTree(HELLO).get("messages"));
                long used = prompt + new TokenCounter().count("gpt-4o-mini", MockModel.reply("Hi"));
                // as of the third request's decision: two settled to their usage, the third at its estimate
                String tokens = Long.toString(2 * used + prompt + 1_024);
                assertThat(awaitRow(browser, "demo-user-free", "tokens-minute", tokens)
                                .value())
                        .startsWith(String.format(java.util.Locale.US, "%,d / 20,000", Long.parseLong(tokens)));
                assertThat(awaitRow(browser, "gpt-4o-mini", "rpm", "4").limit())
                        .as("the upstream cap counts every tenant's requests to the model")
                        .isEqualTo("5000");
                assertThat(awaitRow(browser, "demo-user-free", "in-flight", "0").limit())
                        .isEqualTo("2");
                assertThat(awaitRow(browser, "text-embedding-3-small", "tpm", "")
                                .limit())
                        .as("every upstream cap has its card, unused ones too")
                        .isEqualTo("1000000");
                assertThat(browser.getPageSource()).contains("upstream: built-in mock model");
            } finally {
                browser.quit();
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
