package io.buslane.engine;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The engine's layering, enforced in the build: no protocol in the engine, storage behind one package, pure
 * state machines, and no clock or thread of its own outside the places made for them. Inside the engine the
 * packages form layers, from the facade down: {@code Engine} → {@code owner} → {@code txn} → {@code receive} →
 * {@code routing} → {@code remote} → {@code namespace} → the core (shards, partitions, duplicate detection,
 * storage, timers, filters, entities, messages, and the shared {@code api} types); nothing below imports what
 * stands above it.
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
                        "io.buslane.engine.dedup..", "io.buslane.engine.timer..", "io.buslane.engine.filter..",
                        "io.buslane.engine.entity..", "io.buslane.engine.message..")
                .should().dependOnClassesThat().resideInAnyPackage("io.buslane.engine.shard..",
                        "io.buslane.engine.persist..", "io.buslane.journal..")
                .because("partition logic takes nowMs and returns records through PartitionLog; it owns no "
                        + "thread and no storage");
        rule.check(engine);
    }

    /** Configuration comes in through EngineConfig and the shard: no state machine reads a system property. */
    @Test
    void stateMachinesReadNoSystemProperty() {
        ArchRule rule = noClasses().that().resideInAnyPackage("io.buslane.engine.partition..",
                        "io.buslane.engine.dedup..", "io.buslane.engine.timer..", "io.buslane.engine.filter..",
                        "io.buslane.engine.entity..", "io.buslane.engine.message..")
                .should().callMethod(Long.class, "getLong", String.class, long.class)
                .orShould().callMethod(Long.class, "getLong", String.class)
                .orShould().callMethod(Integer.class, "getInteger", String.class, int.class)
                .orShould().callMethod(System.class, "getProperty", String.class)
                .orShould().callMethod(System.class, "getProperty", String.class, String.class)
                .because("a property read deep in the core is configuration nobody sees; it belongs in EngineConfig "
                        + "or the shard that builds the state");
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

    @Test
    void noSubPackageImportsTheFacade() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine.(*)..")
                .should().dependOnClassesThat().resideInAPackage("io.buslane.engine")
                .because("the facade package stands above every engine package; what they share lives in "
                        + "engine.api");
        rule.check(engine);
    }

    @Test
    void engineLayersRunDownward() {
        ArchRule rule = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Facade").definedBy("io.buslane.engine")
                .layer("Owner").definedBy("io.buslane.engine.owner..")
                .layer("Transactions").definedBy("io.buslane.engine.txn..")
                .layer("Receive").definedBy("io.buslane.engine.receive..")
                .layer("Routing").definedBy("io.buslane.engine.routing..")
                .layer("Remote").definedBy("io.buslane.engine.remote..")
                .layer("Namespace").definedBy("io.buslane.engine.namespace..")
                .layer("Core").definedBy("io.buslane.engine.shard..", "io.buslane.engine.partition..",
                        "io.buslane.engine.dedup..", "io.buslane.engine.persist..", "io.buslane.engine.timer..",
                        "io.buslane.engine.filter..", "io.buslane.engine.entity..", "io.buslane.engine.message..",
                        "io.buslane.engine.api..")
                .whereLayer("Facade").mayNotBeAccessedByAnyLayer()
                .whereLayer("Owner").mayOnlyBeAccessedByLayers("Facade")
                .whereLayer("Transactions").mayOnlyBeAccessedByLayers("Facade", "Owner")
                .whereLayer("Receive").mayOnlyBeAccessedByLayers("Facade", "Owner", "Transactions")
                .whereLayer("Routing").mayOnlyBeAccessedByLayers("Facade", "Owner", "Transactions", "Receive")
                .whereLayer("Remote").mayOnlyBeAccessedByLayers("Facade", "Owner", "Transactions", "Receive",
                        "Routing")
                .whereLayer("Namespace").mayOnlyBeAccessedByLayers("Facade", "Owner", "Transactions", "Receive",
                        "Routing")
                .whereLayer("Core").mayOnlyAccessLayers("Core")
                .withOptionalLayers(true)
                .because("facade → owner (the cluster seam's owning side) → txn → receive → routing → remote (the "
                        + "cluster port and its operation values) → namespace → core: each package holds its rules "
                        + "and calls only downward");
        rule.check(engine);
    }

    @Test
    void apiDependsOnNoOtherEnginePackage() {
        ArchRule rule = noClasses().that().resideInAPackage("io.buslane.engine.api..")
                .should().dependOnClassesThat(resideInAPackage("io.buslane.engine..")
                        .and(resideOutsideOfPackage("io.buslane.engine.api..")))
                .because("the shared API types are the bottom of the engine: front ends and every engine package "
                        + "use them");
        rule.check(engine);
    }

    @Test
    void enginePackagesAreFreeOfCycles() {
        ArchRule rule = slices().matching("io.buslane.engine.(*)..").should().beFreeOfCycles()
                .because("packages that import each other cannot be understood or changed one at a time");
        rule.check(engine);
    }
}
