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
                WebElement minute = awaitRow(browser, "demo-user-free", "minute", "");
                assertThat(minute.findElement(By.className("value")).getText()).isEqualTo("– / 5");
                assertThat(browser.getTitle()).isEqualTo("ratelimit gateway");

                for (int i = 0; i < 3; i++) {
                    assertThat(harness.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
                }
                assertThat(harness.chat("demo-pro", HELLO).statusCode()).isEqualTo(200);

                minute = awaitRow(browser, "demo-user-free", "minute", "3");
                assertThat(minute.getDomAttribute("data-limit")).isEqualTo("5");
                assertThat(minute.findElement(By.className("value")).getText()).startsWith("3 / 5 · ");
                assertThat(minute.findElement(By.className("fill")).getDomAttribute("style"))
                        .contains("width:60.0%");
                assertThat(awaitRow(browser, "demo-user-pro", "minute", "1")
                                .findElement(By.className("value"))
                                .getText())
                        .startsWith("1 / 60 · ");
                long prompt = new TokenCounter()
                        .chatPrompt("gpt-4o-mini", OpenAi.JSON.readTree(HELLO).get("messages"));
                long used = prompt + new TokenCounter().count("gpt-4o-mini", MockModel.reply("Hi"));
                // as of the third request's decision: two settled to their usage, the third at its estimate
                String tokens = Long.toString(2 * used + prompt + 1_024);
                assertThat(awaitRow(browser, "demo-user-free", "tokens-minute", tokens)
                                .findElement(By.className("value"))
                                .getText())
                        .startsWith(String.format(java.util.Locale.US, "%,d / 20,000", Long.parseLong(tokens)));
                assertThat(awaitRow(browser, "gpt-4o-mini", "rpm", "4").getDomAttribute("data-limit"))
                        .as("the upstream cap counts every tenant's requests to the model")
                        .isEqualTo("5000");
                WebElement inFlight = awaitRow(browser, "demo-user-free", "in-flight", "0");
                assertThat(inFlight.getDomAttribute("data-limit")).isEqualTo("2");
                List<String> models = browser.findElements(By.cssSelector("[data-model]")).stream()
                        .map(card -> card.getDomAttribute("data-model"))
                        .toList();
                assertThat(models).contains("gpt-4o-mini", "gpt-4o", "text-embedding-3-small");
                assertThat(browser.findElement(By.id("meta")).getText()).contains("upstream: built-in mock model");
            } finally {
                browser.quit();
                service.stop();
            }
        }
    }

    /** Waits until the page, refreshing itself every second, shows the row with that count. */
    private static WebElement awaitRow(WebDriver browser, String owner, String window, String used)
            throws InterruptedException {
        String selector = "[data-owner='" + owner + "'][data-window='" + window + "'][data-used='" + used + "']";
        Harness.await(
                "the page shows " + selector,
                () -> !browser.findElements(By.cssSelector(selector)).isEmpty());
        return browser.findElement(By.cssSelector(selector));
    }
}
