package io.buslane.server;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The server wires the broker: storage, the engine, the front ends and the cluster. It builds the engine through
 * its facade and storage ({@code engine.persist.Storage}, the journals), and never reaches into partition state.
 */
class ServerArchitectureTest {

    private static JavaClasses server;

    @BeforeAll
    static void importClasses() {
        server = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.buslane.server");
    }

    @Test
    void usesNoEngineInternals() {
        noClasses().that().resideInAPackage("io.buslane.server..")
                .should().dependOnClassesThat().resideInAnyPackage("io.buslane.engine.partition..",
                        "io.buslane.engine.shard..", "io.buslane.engine.timer..", "io.buslane.engine.dedup..",
                        "io.buslane.engine.routing..", "io.buslane.engine.remote..", "io.buslane.engine.txn..",
                        "io.buslane.engine.receive..")
                .because("the composition root builds the engine through its facade; the rules live inside it")
                .check(server);
    }

    @Test
    void hasNoCycleBetweenItsPackages() {
        slices().matching("io.buslane.server.(*)..").should().beFreeOfCycles().check(server);
    }
}
