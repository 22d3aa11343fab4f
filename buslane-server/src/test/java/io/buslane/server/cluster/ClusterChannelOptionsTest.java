package io.buslane.server.cluster;

import io.buslane.journal.postgres.PostgresOptions;
import io.buslane.server.BrokerOptions;
import io.buslane.server.tls.ClusterTls;
import io.buslane.testsupport.TestCa;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the channel between cluster nodes is secured, as the options say: mutual TLS from three files (checked at
 * start and when they change), a shared secret of at least 32 bytes where no TLS is given, and the refusals.
 */
class ClusterChannelOptionsTest {

    private static TestCa ca;
    private static Path[] node;
    private static Path[] other;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCa.create();
        node = ca.issue("node", "127.0.0.1", 30);
        other = ca.issue("other", "127.0.0.1", 30);
    }

    private static BrokerOptions onPostgres() {
        return BrokerOptions.defaults().withPostgres(PostgresOptions.parse("postgresql://db/buslane", "node-a",
                Duration.ofSeconds(5), null));
    }

    private static ClusterTls tls(Path cert, Path key) {
        return new ClusterTls(cert, key, ca.caCert());
    }

    @Test
    void aSecretOfFewerThan32BytesIsRefusedAndOneOf32Accepted() {
        assertThatThrownBy(() -> onPostgres().withCluster("127.0.0.1:5400", "sixteen-chars-ok", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 32 bytes")
                .hasMessageContaining("this one has 16");
        assertThat(onPostgres().withCluster("127.0.0.1:5400", "x".repeat(32), null).clusterSecret())
                .hasSize(32);
        assertThatThrownBy(() -> onPostgres().withCluster("127.0.0.1:5400", null, null))
                .hasMessageContaining("--cluster-tls-cert");
    }

    @Test
    void mutualTlsNeedsNoSecretButItsClusterAddress() {
        ClusterTls t = tls(node[0], node[1]);
        assertThat(onPostgres().withCluster("127.0.0.1:5400", null, t).clusterTls()).isEqualTo(t);
        assertThatThrownBy(() -> onPostgres().withCluster(null, null, t)).hasMessageContaining("--cluster-address");
        assertThatThrownBy(() -> onPostgres().withCluster("127.0.0.1:5400", "short", t))
                .hasMessageContaining("at least 32 bytes");
    }

    @Test
    void theFilesAreCheckedBeforeTheyAreUsed() throws Exception {
        assertThat(tls(node[0], node[1]).load().server().getTrustOptions()).isNotNull();
        assertThatThrownBy(() -> tls(node[0], other[1]).load()).hasMessageContaining("is not the key of");
        assertThatThrownBy(() -> new ClusterTls(node[0], node[1], node[1]).load())
                .hasMessageContaining("holds no PEM certificate");
    }

    @Test
    void aChangedCertificateIsHandedOnAndABrokenReplacementIsNot() throws Exception {
        Path dir = Files.createTempDirectory("buslane-cluster-tls-");
        Path cert = Files.copy(node[0], dir.resolve("node.crt"));
        Path key = Files.copy(node[1], dir.resolve("node.key"));
        List<Object> handed = new ArrayList<>();
        ClusterTls.Watch watch = tls(cert, key).watch((server, client) -> handed.add(server));
        assertThat(watch.check()).as("nothing changed").isFalse();

        Files.copy(other[0], cert, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(cert, FileTime.fromMillis(System.currentTimeMillis() + 5_000));
        assertThat(watch.check()).as("a certificate whose key is not the key file's is not used").isFalse();
        assertThat(handed).isEmpty();

        Files.copy(other[1], key, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(key, FileTime.fromMillis(System.currentTimeMillis() + 10_000));
        assertThat(watch.check()).as("the renewed pair").isTrue();
        assertThat(handed).hasSize(1);
    }
}
