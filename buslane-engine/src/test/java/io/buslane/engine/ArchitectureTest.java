package io.buslane.engine;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The engine's layering, enforced in the build: no protocol in the engine, storage behind one package, pure
 * state machines, and no clock or thread of its own outside the places made for them.
 */
class ArchitectureTest {

    private static JavaClasses engine;

    @BeforeAll
    static void importClasses() {
        engine = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.buslane.engine");
    }

    @Test
    void engineKnowsNoProtocol() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine..")
                .should().dependOnClassesThat().resideInAnyPackage("io.vertx..", "io.netty..", "org.apache.qpid..",
                        "com.fasterxml..", "javax.xml..", "jakarta..", "org.w3c..")
                .because("the engine is protocol-free; front ends translate");
        rule.check(engine);
    }

    @Test
    void onlyPersistTalksToTheJournal() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine..")
                .and().resideOutsideOfPackage("io.buslane.engine.persist")
                .should().dependOnClassesThat().resideInAPackage("io.buslane.journal..")
                .because("storage sits behind a narrow interface (architecture guide, rules of layering)");
        rule.check(engine);
    }

    @Test
    void stateMachinesArePure() {
        ArchRule rule = noClasses().that().resideInAnyPackage("io.buslane.engine.partition..",
                        "io.buslane.engine.timer..", "io.buslane.engine.filter..", "io.buslane.engine.entity..",
                        "io.buslane.engine.message..")
                .should().dependOnClassesThat().resideInAnyPackage("io.buslane.engine.shard..",
                        "io.buslane.engine.persist..", "io.buslane.journal..")
                .because("partition logic takes nowMs and returns records through PartitionLog; it owns no "
                        + "thread and no storage");
        rule.check(engine);
    }

    @Test
    void nothingReadsTheSystemClock() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine..")
                .should().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(java.time.Instant.class, "now")
                .orShould().callMethod(java.time.LocalDateTime.class, "now")
                .orShould().callMethod(java.time.OffsetDateTime.class, "now")
                .orShould().callMethod(java.time.ZonedDateTime.class, "now")
                .orShould().callMethod(java.time.Clock.class, "systemUTC")
                .orShould().callMethod(java.time.Clock.class, "systemDefaultZone")
                .because("all time comes from the injected io.buslane.common.time.Clock");
        rule.check(engine);
    }

    @Test
    void onlyShardsCreateThreads() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine..")
                .and().resideOutsideOfPackage("io.buslane.engine.shard")
                .should().callConstructor(Thread.class, Runnable.class, String.class)
                .orShould().callConstructor(Thread.class, Runnable.class)
                .orShould().callConstructor(Thread.class)
                .orShould().dependOnClassesThat().haveFullyQualifiedName("java.util.concurrent.Executors")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("java.util.concurrent.ThreadPoolExecutor")
                .because("threads exist only in engine.shard (single writer per partition)");
        rule.check(engine);
    }
}
