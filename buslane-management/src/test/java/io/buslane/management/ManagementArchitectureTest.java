package io.buslane.management;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The HTTP front ends (ATOM admin API, REST data plane, console) translate; they reach the engine's facade only. */
class ManagementArchitectureTest {

    private static JavaClasses management;

    @BeforeAll
    static void importClasses() {
        management = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.buslane.management");
    }

    @Test
    void usesNoEngineInternals() {
        noClasses().that().resideInAPackage("io.buslane.management..")
                .should().dependOnClassesThat().resideInAnyPackage("io.buslane.engine.partition..",
                        "io.buslane.engine.shard..", "io.buslane.engine.persist..", "io.buslane.engine.timer..",
                        "io.buslane.engine.dedup..", "io.buslane.engine.routing..", "io.buslane.engine.remote..",
                        "io.buslane.engine.txn..", "io.buslane.journal..", "io.buslane.cluster..")
                .because("front ends translate requests into engine calls; no back doors into partition state")
                .check(management);
    }
}
