package io.buslane.amqp;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/** The AMQP front end translates; it reaches the engine only through its facade and reads no clock itself. */
class AmqpArchitectureTest {

    private static JavaClasses amqp;

    @BeforeAll
    static void importClasses() {
        amqp = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.buslane.amqp");
    }

    @Test
    void usesOnlyTheEngineFacade() {
        noClasses().that().resideInAPackage("io.buslane.amqp..")
                .should().dependOnClassesThat().resideInAnyPackage("io.buslane.engine.partition..",
                        "io.buslane.engine.shard..", "io.buslane.engine.persist..", "io.buslane.engine.timer..",
                        "io.buslane.journal..")
                .because("front ends translate frames into engine calls; no back doors into partition state")
                .check(amqp);
    }

    @Test
    void hasNoCycleBetweenItsPackages() {
        slices().matching("io.buslane.amqp.(*)..").should().beFreeOfCycles()
                .because("the wire pump (transport) drives the link handlers, which see it only as a LinkContext")
                .check(amqp);
    }

    @Test
    void linksSeeTheirConnectionOnlyThroughLinkContext() {
        noClasses().that().resideInAnyPackage("io.buslane.amqp.link..", "io.buslane.amqp.mgmt..",
                        "io.buslane.amqp.codec..")
                .should().dependOnClassesThat().resideInAPackage("io.buslane.amqp.transport..")
                .check(amqp);
    }

    @Test
    void readsTimeOnlyThroughTheInjectedClock() {
        noClasses().that().resideInAPackage("io.buslane.amqp..")
                .should().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(java.time.Instant.class, "now")
                .check(amqp);
    }
}
