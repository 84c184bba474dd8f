package dev.ratelimit.architecture;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.ratelimit.gateway.store.ReachesUp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The gateway's layers, top to bottom: the process's root (the composition root), then the
 * management and batch doors and the built-in mock, the web layer (servlets and filters), the
 * protocols, admission, the upstream transport, the metrics, the configuration and the store. A
 * package may use the layers below it, never one above; and no two packages depend on each other.
 */
class GatewayLayersTest {

    private static final String ROOT = "dev.ratelimit.gateway";

    private static JavaClasses gateway;

    @BeforeAll
    static void importGateway() {
        gateway = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT);
    }

    /** The rule, over whatever classes it is given. */
    static ArchRule layers() {
        return layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("Root")
                .definedBy(ROOT)
                .layer("Admin")
                .definedBy(ROOT + ".admin..")
                .layer("Batch")
                .definedBy(ROOT + ".batch..")
                .layer("Mock")
                .definedBy(ROOT + ".mock..")
                .layer("Web")
                .definedBy(ROOT + ".web..")
                .layer("Protocol")
                .definedBy(ROOT + ".protocol..")
                .layer("Admission")
                .definedBy(ROOT + ".admission..")
                .layer("Upstream")
                .definedBy(ROOT + ".upstream..")
                .layer("Metrics")
                .definedBy(ROOT + ".metrics..")
                .layer("Config")
                .definedBy(ROOT + ".config..")
                .layer("Store")
                .definedBy(ROOT + ".store..")
                .whereLayer("Root")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("Admin")
                .mayOnlyBeAccessedByLayers("Root")
                .whereLayer("Batch")
                .mayOnlyBeAccessedByLayers("Root")
                .whereLayer("Mock")
                .mayOnlyBeAccessedByLayers("Root")
                .whereLayer("Web")
                .mayOnlyBeAccessedByLayers("Root", "Admin", "Batch", "Mock")
                .whereLayer("Protocol")
                .mayOnlyBeAccessedByLayers("Root", "Admin", "Batch", "Mock", "Web")
                .whereLayer("Admission")
                .mayOnlyBeAccessedByLayers("Root", "Admin", "Batch", "Mock", "Web", "Protocol")
                .whereLayer("Upstream")
                .mayOnlyBeAccessedByLayers("Root", "Admin", "Batch", "Mock", "Web", "Protocol")
                .whereLayer("Metrics")
                .mayOnlyBeAccessedByLayers("Root", "Admin", "Batch", "Mock", "Web", "Protocol", "Admission", "Upstream")
                .whereLayer("Config")
                .mayOnlyBeAccessedByLayers(
                        "Root", "Admin", "Batch", "Mock", "Web", "Protocol", "Admission", "Upstream", "Metrics")
                .whereLayer("Store")
                .mayOnlyBeAccessedByLayers(
                        "Root",
                        "Admin",
                        "Batch",
                        "Mock",
                        "Web",
                        "Protocol",
                        "Admission",
                        "Upstream",
                        "Metrics",
                        "Config");
    }

    @Test
    @DisplayName("the gateway's packages depend only downward")
    void layersHold() {
        layers().check(gateway);
    }

    @Test
    @DisplayName("the gateway's packages are free of cycles")
    void noCycles() {
        slices().matching(ROOT + ".(*)..").should().beFreeOfCycles().check(gateway);
    }

    @Test
    @DisplayName("the layer rule fails for a class of a lower layer that uses a higher one")
    void ruleCatchesAnUpwardDependency() {
        // the gateway's classes and this module's test class in its store package, which uses the web layer
        JavaClasses withViolation = new ClassFileImporter().importPackages(ROOT);
        assertThat(withViolation.contain(ReachesUp.class)).isTrue();
        EvaluationResult result = layers().evaluate(withViolation);
        assertThat(result.hasViolation()).isTrue();
        assertThat(result.getFailureReport().getDetails())
                .anySatisfy(detail -> assertThat(detail).contains(ReachesUp.class.getName()));
    }
}
