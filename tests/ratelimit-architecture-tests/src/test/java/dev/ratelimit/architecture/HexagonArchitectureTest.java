package dev.ratelimit.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The hexagon, stated as rules over the production classes of every module: api ← core ← adapters,
 * adapters side by side, third-party libraries confined to the code that owns them.
 */
class HexagonArchitectureTest {

    private static final String API = "dev.ratelimit.api..";
    private static final String CORE = "dev.ratelimit.core..";
    private static final String INMEMORY = "dev.ratelimit.inmemory..";
    private static final String MICROMETER = "dev.ratelimit.micrometer..";
    private static final String REDIS = "dev.ratelimit.redis..";
    private static final String LETTUCE = "dev.ratelimit.redis.lettuce..";
    private static final String JEDIS = "dev.ratelimit.redis.jedis..";
    private static final String HTTP = "dev.ratelimit.http..";
    private static final String SERVLET = "dev.ratelimit.servlet..";
    private static final String GATEWAY = "dev.ratelimit.gateway..";
    /** The fake model provider: a Jetty server, which the gateway's mock mode runs. */
    private static final String FAKE_MODEL = "dev.ratelimit.fakemodel..";

    private static final String SPRING = "dev.ratelimit.spring..";
    private static final String LANGCHAIN4J = "dev.ratelimit.langchain4j..";
    private static final String SPRING_AI = "dev.ratelimit.springai..";
    private static final String GENAI = "dev.ratelimit.genai..";
    private static final String TESTKIT = "dev.ratelimit.testkit..";
    private static final String TESTSUPPORT = "dev.ratelimit.testsupport..";

    private static final String[] DRIVERS_AND_FRAMEWORKS = {
        "io.lettuce..", "redis.clients..", "org.redisson..", "io.netty..",
        "com.github.benmanes.caffeine..", "jakarta.servlet..", "javax.servlet..", "org.eclipse.jetty.."
    };

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.ratelimit");
    }

    @Test
    @DisplayName("the modules under test are all on the class path")
    void everyModuleIsImported() {
        assertThat(classes.containPackage("dev.ratelimit.api")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.core")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.inmemory")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.micrometer")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.testkit")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.http")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.servlet")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.redis.internal")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.redis.lettuce")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.redis.jedis")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.gateway")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.spring.boot")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.spring.cloud.gateway")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.langchain4j")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.springai")).isTrue();
        assertThat(classes.containPackage("dev.ratelimit.genai")).isTrue();
    }

    @Test
    @DisplayName("the Spring Boot module composes api, core, adapters and the servlet filter; nothing depends on it")
    void springBootIsAnOuterLayer() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        API, CORE, INMEMORY, REDIS, HTTP, SERVLET, GATEWAY, TESTKIT, LANGCHAIN4J, SPRING_AI, GENAI)
                .should()
                .dependOnClassesThat()
                .resideInAPackage(SPRING)
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages(SPRING, SPRING_AI)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "reactor..")
                .check(classes);
    }

    @Test
    @DisplayName("api depends on nothing of ours and on no third party but JSpecify")
    void apiStandsAlone() {
        ArchRule rule = classes()
                .that()
                .resideInAPackage(API)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(API, "java..", "org.jspecify..");
        rule.check(classes);
    }

    @Test
    @DisplayName("core depends on api only: no driver, no cache, no servlet, no metrics library")
    void coreDependsOnApiOnly() {
        ArchRule rule = classes()
                .that()
                .resideInAPackage(CORE)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(API, CORE, "java..", "org.jspecify..", "io.github.resilience4j..");
        rule.check(classes);
    }

    @Test
    @DisplayName("the Micrometer binding depends on api, core's metrics interface and Micrometer only")
    void micrometerBindingIsAnAdapter() {
        classes()
                .that()
                .resideInAPackage(MICROMETER)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(API, CORE, MICROMETER, "java..", "org.jspecify..", "io.micrometer..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages(MICROMETER, SPRING, GATEWAY)
                .should()
                .dependOnClassesThat()
                .resideInAPackage(MICROMETER)
                .because("only the compositions (the Spring Boot module, the gateway) choose Micrometer")
                .check(classes);
    }

    @Test
    @DisplayName("the HTTP rules depend on api only: no core, no servlet, no web framework")
    void httpRulesStandAlone() {
        classes()
                .that()
                .resideInAPackage(HTTP)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(API, HTTP, "java..", "org.jspecify..")
                .check(classes);
    }

    @Test
    @DisplayName("adapters never depend on each other, nor on the servlet filter")
    void adaptersAreIndependent() {
        noClasses()
                .that()
                .resideInAPackage(INMEMORY)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(REDIS, SERVLET, GATEWAY)
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage(LETTUCE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(JEDIS, INMEMORY, SERVLET, GATEWAY)
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage(JEDIS)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(LETTUCE, INMEMORY, SERVLET, GATEWAY)
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage(SERVLET)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(INMEMORY, REDIS, GATEWAY, TESTKIT)
                .check(classes);
    }

    @Test
    @DisplayName("the LangChain4j adapter depends on api and core only, never on a store or another adapter;"
            + " LangChain4j stays out of every other module")
    void langchain4jIsAnAdapter() {
        classes()
                .that()
                .resideInAPackage(LANGCHAIN4J)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        API,
                        CORE,
                        GENAI,
                        LANGCHAIN4J,
                        "java..",
                        "org.jspecify..",
                        "dev.langchain4j..",
                        "com.knuddels.jtokkit..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackage(LANGCHAIN4J)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(LANGCHAIN4J, "dev.langchain4j..")
                .check(classes);
    }

    @Test
    @DisplayName("the Spring AI adapter depends on api and the shared GenAI pieces only; the shared pieces on api only")
    void springAiIsAnAdapter() {
        classes()
                .that()
                .resideInAPackage(SPRING_AI)
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        API,
                        GENAI,
                        SPRING_AI,
                        "java..",
                        "org.jspecify..",
                        "org.springframework.ai..",
                        "org.springframework.core..",
                        "reactor..",
                        "com.knuddels.jtokkit..")
                .check(classes);
        classes()
                .that()
                .resideInAPackage(GENAI)
                .should()
                .onlyDependOnClassesThat()
                // Micrometer (optional): the GenAI client meters, in the two classes the next rule names
                .resideInAnyPackage(API, GENAI, "java..", "org.jspecify..", "com.knuddels.jtokkit..", "io.micrometer..")
                .check(classes);
    }

    @Test
    @DisplayName("nothing published depends on the gateway, the test kit or the unpublished test support")
    void nothingDependsOnGatewayOrKit() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        API, CORE, INMEMORY, REDIS, HTTP, SERVLET, SPRING, TESTKIT, LANGCHAIN4J, SPRING_AI, GENAI)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(GATEWAY, TESTSUPPORT)
                .check(classes);
        noClasses()
                .that()
                .resideInAnyPackage(API, CORE, INMEMORY, REDIS, HTTP, SERVLET, SPRING, LANGCHAIN4J)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(TESTKIT)
                .check(classes);
    }

    @Test
    @DisplayName("the kit reaches the store through the port only, and never through a driver")
    void kitIsDriverFree() {
        noClasses()
                .that()
                .resideInAPackage(TESTKIT)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(DRIVERS_AND_FRAMEWORKS)
                .orShould()
                .dependOnClassesThat()
                .resideInAnyPackage(INMEMORY, REDIS, SERVLET, GATEWAY)
                .check(classes);
    }

    @Test
    @DisplayName(
            "resilience4j is confined to the core, and to the Spring Boot module and the gateway that configure its breaker")
    void resilience4jConfined() {
        noClasses()
                .that()
                .resideOutsideOfPackages(CORE, SPRING, GATEWAY)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.github.resilience4j..")
                .check(classes);
    }

    @Test
    @DisplayName("Micrometer is confined to the limiter's Micrometer binding, the gateway and Spring Boot module that"
            + " expose it, and in genai-common to the GenAI client meters (GenAiMeters) and the builder method that takes"
            + " a registry")
    void micrometerConfined() {
        noClasses()
                .that()
                .resideOutsideOfPackages(MICROMETER, GATEWAY, SPRING, GENAI)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.micrometer..")
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage(GENAI)
                .and()
                .doNotHaveFullyQualifiedName("dev.ratelimit.genai.GenAiMeters")
                .and()
                .doNotHaveFullyQualifiedName("dev.ratelimit.genai.ModelCatalog$Builder")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.micrometer..")
                .check(classes);
    }

    @Test
    @DisplayName("each driver is confined to its own adapter (and the Spring Boot module that builds its client);"
            + " Caffeine to the in-memory store; Jetty and the Servlet API to the filter, the gateway and the"
            + " fake model provider")
    void driversConfined() {
        noClasses()
                .that()
                .resideOutsideOfPackages(LETTUCE, GATEWAY, SPRING)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.lettuce..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages(JEDIS, SPRING)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("redis.clients..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackage(INMEMORY)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("com.github.benmanes.caffeine..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages(SERVLET, GATEWAY, SPRING, FAKE_MODEL)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("jakarta.servlet..", "org.eclipse.jetty..")
                .check(classes);
    }

    @Test
    @DisplayName("decisions take time from the injected clock or the store, never from the wall clock")
    void noWallClockOnTheDecisionPath() {
        noClasses()
                .that()
                .resideInAnyPackage(API, CORE, INMEMORY, REDIS, HTTP, SERVLET, SPRING, LANGCHAIN4J)
                .should()
                .callMethod(System.class, "currentTimeMillis")
                .orShould()
                .callMethod(java.time.Instant.class, "now")
                .orShould()
                .callMethod(java.time.LocalDateTime.class, "now")
                .check(classes);
        // Only the in-memory store owns a clock (its default is the system clock); everyone else is given one.
        // Four classes read the wall clock, never for a decision's time: on the store's time a calendar
        // window's periods are named around it for the server to choose from (ScriptCall), where the
        // store cannot be asked, a fail-local share's period and the settle queue's last retry are placed
        // by it (StoreGuard, SettleQueue), and a lease held on the real clock shows its end on it
        // (BudgetLeases' leases(): the lease itself ends on System.nanoTime).
        noClasses()
                .that()
                .resideInAnyPackage(API, CORE, REDIS, HTTP, SERVLET)
                .and()
                .haveNameNotMatching("dev\\.ratelimit\\.(core\\.(StoreGuard|SettleQueue|BudgetLeases(\\$.*)?)"
                        + "|redis\\.internal\\.ScriptCall)")
                .should()
                .callMethod(java.time.Clock.class, "systemUTC")
                .orShould()
                .callMethod(java.time.Clock.class, "systemDefaultZone")
                .check(classes);
    }

    @Test
    @DisplayName("no package cycles (the gateway's own packages: GatewayLayersTest)")
    void noCycles() {
        slices().matching("dev.ratelimit.(**)")
                .that(com.tngtech.archunit.base.DescribedPredicate.describe(
                        "outside the gateway", slice -> !slice.getNamePart(1).startsWith("gateway.")))
                .should()
                .beFreeOfCycles()
                .check(classes);
    }
}
