package io.buslane.server.tls;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The mutual TLS of the channel between cluster nodes (docs/cluster.md): this node's certificate and key, and the
 * cluster's CA, the only one trusted on that channel (not the JVM's, not the client listeners'). Both sides present
 * their certificate; the connecting side checks that the other's names the host of its cluster address. TLS 1.3
 * only: every peer is a Buslane node. The files are read at start, checked as the client listeners' are (the key
 * is the certificate's, the certificate is valid now, the chain is signed), and re-read when one of the three
 * changes; a replacement that fails the check is not used.
 *
 * @param certFile PEM certificate chain of this node (leaf first)
 * @param keyFile  its PEM private key
 * @param caFile   PEM certificates of the cluster CA (one or more)
 */
public record ClusterTls(Path certFile, Path keyFile, Path caFile) {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterTls.class);
    private static final Set<String> PROTOCOLS = Set.of("TLSv1.3");

    public ClusterTls {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(caFile, "caFile");
    }

    /** The options both sides of the channel use, as read from the files at one moment. */
    public record Options(ServerSSLOptions server, ClientSSLOptions client) {
    }

    /** Reads and checks the three files; fails with what is wrong. */
    public Options load() throws IOException {
        CertificateCheck.validate(certFile, keyFile, System.currentTimeMillis());
        if (!Files.readString(caFile).contains("-----BEGIN CERTIFICATE-----")) {
            throw new IllegalArgumentException("the cluster CA file " + caFile + " holds no PEM certificate");
        }
        PemKeyCertOptions keyCert = new PemKeyCertOptions().setCertValue(Buffer.buffer(Files.readAllBytes(certFile)))
                .setKeyValue(Buffer.buffer(Files.readAllBytes(keyFile)));
        PemTrustOptions trust = new PemTrustOptions().addCertValue(Buffer.buffer(Files.readAllBytes(caFile)));
        ServerSSLOptions server = new ServerSSLOptions().setKeyCertOptions(keyCert).setTrustOptions(trust)
                .setClientAuth(ClientAuth.REQUIRED).setEnabledSecureTransportProtocols(PROTOCOLS);
        ClientSSLOptions client = new ClientSSLOptions().setKeyCertOptions(keyCert).setTrustOptions(trust)
                .setHostnameVerificationAlgorithm("HTTPS").setEnabledSecureTransportProtocols(PROTOCOLS);
        return new Options(server, client);
    }

    /**
     * Watches the three files: {@link Watch#check} (called periodically) re-reads them when one changed and hands
     * the new options to {@code onChange}; a set that fails the check is logged and the previous one kept.
     */
    public Watch watch(BiConsumer<ServerSSLOptions, ClientSSLOptions> onChange) throws IOException {
        TlsMaterial.warnIfReadableByOthers(keyFile);
        return new Watch(onChange, times());
    }

    private List<FileTime> times() throws IOException {
        List<FileTime> t = new ArrayList<>(3);
        for (Path p : List.of(certFile, keyFile, caFile)) {
            t.add(Files.getLastModifiedTime(p));
        }
        return t;
    }

    /** See {@link #watch}. */
    public final class Watch {
        private final BiConsumer<ServerSSLOptions, ClientSSLOptions> onChange;
        private List<FileTime> seen;

        private Watch(BiConsumer<ServerSSLOptions, ClientSSLOptions> onChange, List<FileTime> seen) {
            this.onChange = onChange;
            this.seen = seen;
        }

        /** Re-reads the files if one changed since the last look; returns whether new options were handed over. */
        public synchronized boolean check() {
            try {
                List<FileTime> now = times();
                if (now.equals(seen)) {
                    return false;
                }
                seen = now;
                Options o = load();
                onChange.accept(o.server(), o.client());
                LOG.info("Cluster TLS material {} changed: new node connections use it", certFile);
                return true;
            } catch (IOException | RuntimeException e) {
                LOG.warn("Cluster TLS material {} / {} / {} changed but is not used (kept the previous one): {}",
                        certFile, keyFile, caFile, e.getMessage());
                return false;
            }
        }
    }
}
