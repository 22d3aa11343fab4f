package io.buslane.console;

import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.File;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Clicks through the web console in a real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}
 * packages) against the packaged broker: log in, create a queue, send a message with a property, browse it,
 * dead-letter it, resubmit it from the dead-letter queue, purge, and check the phone-width layout. Saves a
 * screenshot to {@code target/console.png}, and to {@code docs/images/console.png} with
 * {@code -Dbuslane.updateScreenshot=true}.
 *
 * <p>Skipped when the browser is not installed, unless {@code BUSLANE_REQUIRE_BROWSER=1} (as CI sets it), which
 * makes a missing browser a failure.
 */
class ConsoleBrowserTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static BrokerProcess broker;
    private static WebDriver driver;
    private static Path profile;

    @BeforeAll
    static void start() throws Exception {
        Path chromium = Path.of(System.getProperty("buslane.chromium", "/usr/bin/chromium"));
        Path chromedriver = Path.of(System.getProperty("buslane.chromedriver", "/usr/bin/chromedriver"));
        if (!Files.isExecutable(chromium) || !Files.isExecutable(chromedriver)) {
            String why = "The console browser test needs Chromium and chromedriver (" + chromium + ", " + chromedriver
                    + "); install them with: apt-get install -y chromium chromium-driver";
            if ("1".equals(System.getenv("BUSLANE_REQUIRE_BROWSER"))) {
                fail(why + " (BUSLANE_REQUIRE_BROWSER=1 makes this a failure)");
            }
            Assumptions.abort(why + ". Skipped; set BUSLANE_REQUIRE_BROWSER=1 to make this a failure.");
        }
        broker = BrokerProcess.builder().tempPrefix("buslane-console-").jvmOptions("-Xmx256m").start();
        profile = Files.createTempDirectory("buslane-chromium-");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile, "--window-size=1280,860", "--force-device-scale-factor=1",
                "--lang=en-US");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver.toFile()).usingAnyFreePort().build();
        driver = new ChromeDriver(service, options);
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (driver != null) {
                driver.quit();
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
            if (profile != null) {
                try (Stream<Path> files = Files.walk(profile)) {
                    files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
                }
            }
        }
    }

    private WebDriverWait waiting() {
        return new WebDriverWait(driver, WAIT);
    }

    private WebElement visible(By by) {
        return waiting().until(ExpectedConditions.visibilityOfElementLocated(by));
    }

    /** Clicks what {@code by} finds once clickable, finding it again if the page re-rendered it in between. */
    private void click(By by) {
        waiting().ignoring(StaleElementReferenceException.class).until(d -> {
            WebElement e = ExpectedConditions.elementToBeClickable(by).apply(d);
            if (e == null) {
                return false;
            }
            e.click();
            return true;
        });
    }

    private void type(By by, String text) {
        WebElement e = visible(by);
        e.clear();
        e.sendKeys(text);
    }

    private void countIs(String id, String value) {
        waiting().withMessage(() -> "#" + id + " should show " + value)
                .until(ExpectedConditions.textToBe(By.id(id), value));
    }

    /** Expands the first message card shown and returns it. */
    private WebElement openFirstMessage() {
        WebElement card = visible(By.cssSelector("#messages details.message"));
        if (card.getAttribute("open") == null) {
            card.findElement(By.cssSelector("summary")).click();
        }
        waiting().until(ExpectedConditions.visibilityOf(card.findElement(By.cssSelector("pre.body-content"))));
        return card;
    }

    private void acceptConfirm() {
        waiting().until(ExpectedConditions.alertIsPresent()).accept();
    }

    @Test
    void clickThroughCreateSendBrowseDeadLetterResubmitAndPurge() throws Exception {
        // the root sends a browser to the console, which asks for a log-in prefilled with the emulator's rule
        driver.get(broker.baseUrl() + "/");
        visible(By.id("login-form"));
        assertThat(driver.getCurrentUrl()).endsWith("/console/");
        assertThat(driver.findElement(By.id("login-key-name")).getAttribute("value"))
                .isEqualTo("RootManageSharedAccessKey");
        click(By.id("login-submit"));
        visible(By.id("tree"));
        assertThat(visible(By.id("whoami")).getText()).isEqualTo("RootManageSharedAccessKey");

        // create a queue
        click(By.id("new-queue"));
        type(By.id("queue-name"), "orders");
        click(By.id("create-queue-submit"));
        waiting().until(ExpectedConditions.textToBe(By.id("entity-title"), "orders"));
        visible(By.cssSelector("#tree-queues [data-path='orders']"));

        // send a JSON message with an application property
        click(By.id("tab-send"));
        type(By.id("send-body"), "{\"orderId\":42,\"item\":\"book\",\"qty\":1}");
        type(By.id("send-content-type"), "application/json");
        type(By.cssSelector("#send-props .prop-name"), "tenant");
        type(By.cssSelector("#send-props .prop-value"), "contoso");
        click(By.id("send-submit"));
        countIs("count-active", "1");

        // browse: body pretty-printed, properties shown
        click(By.id("tab-active"));
        WebElement card = openFirstMessage();
        assertThat(card.findElement(By.cssSelector("pre.body-content")).getText())
                .contains("\"orderId\" : 42").contains("\"item\" : \"book\"");
        assertThat(card.findElement(By.cssSelector("table.app-props")).getText()).contains("tenant")
                .contains("contoso");
        assertThat(card.findElement(By.cssSelector("table.system-props")).getText())
                .contains("ContentType").contains("application/json");

        // dead-letter it
        click(By.cssSelector("#messages .action-deadletter"));
        countIs("count-deadletter", "1");
        countIs("count-active", "0");

        // the dead-letter queue shows it with its reason; resubmit it
        click(By.id("tab-deadletter"));
        card = openFirstMessage();
        assertThat(card.findElement(By.cssSelector("table.app-props")).getText()).contains("DeadLetterReason")
                .contains("tenant");
        click(By.cssSelector("#messages .action-resubmit"));
        countIs("count-active", "1");
        countIs("count-deadletter", "0");

        // back in the active queue, properties intact
        click(By.id("tab-active"));
        card = openFirstMessage();
        assertThat(card.findElement(By.cssSelector("pre.body-content")).getText()).contains("\"item\" : \"book\"");
        assertThat(card.findElement(By.cssSelector("table.app-props")).getText()).contains("contoso")
                .doesNotContain("DeadLetterReason");

        // a topic too, so that the screenshot shows the whole tree
        click(By.id("new-topic"));
        type(By.id("topic-name"), "events");
        click(By.id("create-topic-submit"));
        waiting().until(ExpectedConditions.textToBe(By.id("entity-title"), "events"));
        click(By.id("tab-subscriptions"));
        type(By.id("sub-name"), "audit");
        click(By.id("create-subscription-submit"));
        visible(By.cssSelector("#tree-topics [data-path='events/Subscriptions/audit']"));

        // screenshot: the queue with its message open
        click(By.cssSelector("#tree-queues [data-path='orders']"));
        waiting().until(ExpectedConditions.textToBe(By.id("entity-title"), "orders"));
        openFirstMessage();
        ((JavascriptExecutor) driver).executeScript("document.getElementById('toast').hidden = true;");
        screenshot("console.png", true);

        // purge
        click(By.id("purge"));
        acceptConfirm();
        countIs("count-active", "0");
        visible(By.id("no-messages"));

        // counts are live: a message sent by someone else shows up in the tree without a click
        HttpResponse<String> sent = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(broker.baseUrl() + "/console/api/send"))
                .header("Authorization", sasToken(broker.baseUrl() + "/", "RootManageSharedAccessKey", "SAS_KEY_VALUE"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"entity\":\"orders\",\"body\":\"from elsewhere\"}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
        waiting().withMessage("the tree's count for orders should refresh by itself")
                .until(ExpectedConditions.textToBe(By.cssSelector("#tree-queues [data-path='orders'] .badge-active"),
                        "1"));
        countIs("count-active", "1");

        // errors are shown with the broker's reason
        click(By.id("new-queue"));
        type(By.id("queue-name"), "orders");
        click(By.id("create-queue-submit"));
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("#toast.toast-error"),
                "already exists"));
        click(By.cssSelector("#tree-queues [data-path='orders']"));

        // phone width: the tree sits behind a menu button that still opens it, and nothing overflows sideways
        driver.manage().window().setSize(new Dimension(390, 844));
        WebElement toggle = visible(By.id("menu-toggle"));
        if (!driver.findElement(By.id("tree")).isDisplayed()) {
            toggle.click();
        }
        visible(By.cssSelector("#tree-queues [data-path='orders']"));
        assertThat(toggle.getAttribute("aria-expanded")).isEqualTo("true");
        Object overflow = ((JavascriptExecutor) driver).executeScript(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth;");
        assertThat(((Number) overflow).intValue()).as("horizontal overflow at phone width").isLessThanOrEqualTo(0);
        click(By.cssSelector("#tree-queues [data-path='orders']"));
        waiting().until(ExpectedConditions.textToBe(By.id("entity-title"), "orders"));
        assertThat(driver.findElement(By.id("tree")).isDisplayed()).isFalse();
        screenshot("console-phone.png", false);
    }

    /** A SAS token for {@code resource}, valid for an hour, as the SDKs build it. */
    static String sasToken(String resource, String keyName, String key) throws Exception {
        String sr = URLEncoder.encode(resource, StandardCharsets.UTF_8);
        long se = System.currentTimeMillis() / 1000 + 3600;
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String sig = Base64.getEncoder().encodeToString(mac.doFinal((sr + "\n" + se).getBytes(StandardCharsets.UTF_8)));
        return "SharedAccessSignature sr=" + sr + "&sig=" + URLEncoder.encode(sig, StandardCharsets.UTF_8) + "&se=" + se
                + "&skn=" + keyName;
    }

    private void screenshot(String name, boolean forReadme) throws Exception {
        byte[] png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES);
        Path target = Path.of("target", name);
        Files.createDirectories(target.getParent());
        Files.write(target, png);
        if (forReadme && Boolean.getBoolean("buslane.updateScreenshot")) {
            Path docs = Path.of(System.getProperty("buslane.repoRoot", ".."), "docs", "images", name);
            Files.createDirectories(docs.getParent());
            Files.write(docs, png);
        }
    }
}
