package io.buslane.cluster;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleName;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The node channel carries the engine's operation values and nothing of its insides: it sees the facade, the shared
 * API and message types, the cluster port with its operation values and their codec ({@code engine.remote}) and,
 * for the frames, the record encoding of {@code engine.persist}; never a partition, shard, namespace, receiver or
 * transaction, nor the journal's codecs (the operations encode themselves).
 */
class ClusterArchitectureTest {

    private static JavaClasses cluster;

    @BeforeAll
    static void importClasses() {
        cluster = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.buslane.cluster");
    }

    @Test
    void seesOnlyTheFacadeThePortAndTheEncoding() {
        noClasses().that().resideInAPackage("io.buslane.cluster..")
                .should().dependOnClassesThat(resideInAPackage("io.buslane.engine..")
                        .and(com.tngtech.archunit.base.DescribedPredicate.not(resideInAnyPackage(
                                "io.buslane.engine", "io.buslane.engine.api..", "io.buslane.engine.message..",
                                "io.buslane.engine.remote..")))
                        .and(com.tngtech.archunit.base.DescribedPredicate.not(resideInAPackage(
                                "io.buslane.engine.persist").and(simpleName("RecordWriter")
                                .or(simpleName("RecordReader"))))))
                .because("the channel carries operation values; what runs them is the owner's engine")
                .check(cluster);
    }

    @Test
    void touchesNoJournal() {
        noClasses().that().resideInAPackage("io.buslane.cluster..")
                .should().dependOnClassesThat().resideInAPackage("io.buslane.journal..")
                .check(cluster);
    }
}
