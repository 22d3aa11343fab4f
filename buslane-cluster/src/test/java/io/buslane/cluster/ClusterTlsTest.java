package io.buslane.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.TestCa;
import io.vertx.core.Vertx;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The node channel in mutual TLS, over real sockets: a node whose certificate the cluster CA signed is served; a
 * peer without a certificate, with one another CA signed, or speaking plain TCP is refused before any operation
 * runs; a node refuses a server whose certificate does not name the host it connects to; a renewed certificate is
 * used by the next connections.
 */
class ClusterTlsTest {

    private static final byte[] SECRET = "a cluster secret of at least thirty-two bytes"
            .getBytes(StandardCharsets.UTF_8);
    private static TestCa ca;
    private static TestCa rogue;
    private static Path[] nodeA;
    private static Path[] nodeB;
    private static Path[] otherHost;
    private static Path[] rogueNode;

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private Vertx vertx;
    private Engine owner;

    @BeforeAll
    static void certificates() throws Exception {
        ca = TestCa.create();
        nodeA = ca.issue("node-a", "127.0.0.1", 30);
        nodeB = ca.issue("node-b", "127.0.0.1", 30);
        otherHost = ca.issue("other-host", "node-x.example", 30);
        rogue = TestCa.create();
        rogueNode = rogue.issue("rogue", "127.0.0.1", 30);
    }

    @BeforeEach
    void setUp() {
        vertx = Vertx.vertx();
        owner = Engine.start(new EngineConfig(new ManualClock(1_700_000_000_000L),
                Storage.of(new InMemoryJournalFactory()), 1, ThreadingMode.DEDICATED));
        toClose.add(owner);
        join(owner.createQueue(QueueProperties.builder("q").build()));
        join(owner.send("q", List.of(Message.builder().messageId("m1").body("x".getBytes(StandardCharsets.UTF_8))
                .build())));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        vertx.close().await();
    }

    private static ServerSSLOptions serverTls(Path[] cert, TestCa trusted) {
        return new ServerSSLOptions().setKeyCertOptions(keyCert(cert))
                .setTrustOptions(new PemTrustOptions().addCertPath(trusted.caCert().toString()))
                .setClientAuth(ClientAuth.REQUIRED).setEnabledSecureTransportProtocols(Set.of("TLSv1.3"));
    }

    private static ClientSSLOptions clientTls(Path[] cert, TestCa trusted) {
        ClientSSLOptions o = new ClientSSLOptions()
                .setTrustOptions(new PemTrustOptions().addCertPath(trusted.caCert().toString()))
                .setHostnameVerificationAlgorithm("HTTPS").setEnabledSecureTransportProtocols(Set.of("TLSv1.3"));
        return cert == null ? o : o.setKeyCertOptions(keyCert(cert));
    }

    private static PemKeyCertOptions keyCert(Path[] cert) {
        return new PemKeyCertOptions().setCertPath(cert[0].toString()).setKeyPath(cert[1].toString());
    }

    private ClusterServer serve(ServerSSLOptions tls) {
        ClusterServer server = new ClusterServer(vertx, owner, SECRET, 64, tls);
        toClose.add(server);
        return server;
    }

    private int listen(ClusterServer server) {
        return server.listen("127.0.0.1", 0).await();
    }

    private ClusterClient client(String host, int port, ClientSSLOptions tls) {
        ClusterClient c = new ClusterClient(vertx, shard -> host + ":" + port, SECRET, 8, Duration.ofSeconds(5), tls);
        toClose.add(c);
        return c;
    }

    private static RuntimeCounts counts(ClusterClient c) {
        return join(c.call(0, new PartitionOp.Counts("q", 0)));
    }

    @Test
    void nodesWhoseCertificatesTheClusterCaSignedTalkOverMutualTls() {
        int port = listen(serve(serverTls(nodeA, ca)));
        assertThat(counts(client("127.0.0.1", port, clientTls(nodeB, ca))).activeMessageCount()).isEqualTo(1);
    }

    @Test
    void aPeerWithoutACertificateWithAnotherCasOrOnPlainTcpIsRefusedBeforeAnyOperationRuns() {
        int port = listen(serve(serverTls(nodeA, ca)));
        for (ClusterClient c : List.of(client("127.0.0.1", port, clientTls(null, ca)),
                client("127.0.0.1", port, clientTls(rogueNode, ca)),
                client("127.0.0.1", port, null))) {
            assertThatThrownBy(() -> join(c.call(0, new PartitionOp.Purge("q", 0))))
                    .isInstanceOfSatisfying(BrokerException.class,
                            e -> assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        }
        assertThat(join(owner.counts("q")).activeMessageCount()).as("no purge ran").isEqualTo(1);
    }

    @Test
    void aNodeRefusesAServerWhoseCertificateDoesNotNameTheHostItConnectsTo() {
        int port = listen(serve(serverTls(otherHost, ca)));
        ClusterClient c = client("127.0.0.1", port, clientTls(nodeB, ca));
        assertThatThrownBy(() -> counts(c)).isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        // nor one another CA signed, though it names the host
        int roguePort = listen(serve(serverTls(rogueNode, ca)));
        assertThatThrownBy(() -> counts(client("127.0.0.1", roguePort, clientTls(nodeB, ca))))
                .isInstanceOf(BrokerException.class);
    }

    @Test
    void aRenewedCertificateIsUsedByTheNextConnections() {
        ClusterServer server = serve(serverTls(otherHost, ca));
        int port = listen(server);
        assertThatThrownBy(() -> counts(client("127.0.0.1", port, clientTls(nodeB, ca))))
                .isInstanceOf(BrokerException.class);
        assertThat(server.updateTls(serverTls(nodeA, ca)).await()).isTrue();
        assertThat(counts(client("127.0.0.1", port, clientTls(nodeB, ca))).activeMessageCount()).isEqualTo(1);
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new CompletionException(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
