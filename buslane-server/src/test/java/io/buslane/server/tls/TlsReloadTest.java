package io.buslane.server.tls;

import io.buslane.server.ops.BrokerMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.net.ServerSSLOptions;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A renewed certificate is checked before it replaces the one in use (docs/tls.md): one that does not match its key,
 * has expired or is not valid yet is refused and the previous one kept, so new handshakes go on working. Before,
 * any pair that parsed was swapped in and every new handshake then failed. The certificate's expiry is a gauge in
 * {@code /metrics}.
 */
class TlsReloadTest {

    private static final long DAY = 86_400_000L;

    @TempDir
    Path dir;
    private Vertx vertx;
    private Path cert;
    private Path key;
    private long mtime = System.currentTimeMillis() - 3_600_000;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        cert = dir.resolve("chain.pem");
        key = dir.resolve("key.pem");
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        return g.generateKeyPair();
    }

    private static X509Certificate certificate(KeyPair pair, long notBeforeMs, long notAfterMs) throws Exception {
        X500Name name = new X500Name("CN=localhost");
        var builder = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(System.nanoTime()),
                new Date(notBeforeMs), new Date(notAfterMs), name, pair.getPublic());
        return new JcaX509CertificateConverter().getCertificate(builder.build(
                new JcaContentSignerBuilder("SHA256withRSA").build(pair.getPrivate())));
    }

    private static String pem(Object o) throws Exception {
        StringWriter w = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(w)) {
            writer.writeObject(o);
        }
        return w.toString();
    }

    /** Writes the pair as an operator's renewal would, with a newer modification time. */
    private void write(X509Certificate certificate, KeyPair pair) throws Exception {
        Files.writeString(cert, pem(certificate));
        Files.writeString(key, pem(pair.getPrivate()));
        mtime += 10_000;
        Files.setLastModifiedTime(cert, FileTime.fromMillis(mtime));
        Files.setLastModifiedTime(key, FileTime.fromMillis(mtime));
    }

    @Test
    void aRenewalThatCannotWorkIsRefusedAndThePreviousCertificateKept() throws Exception {
        long now = System.currentTimeMillis();
        KeyPair a = keyPair();
        X509Certificate first = certificate(a, now - DAY, now + 90 * DAY);
        write(first, a);
        TlsMaterial material = TlsMaterial.load(vertx, new TlsOptions(0, 0, cert, key, dir));
        ServerSSLOptions inUse = material.sslOptions();
        List<ServerSSLOptions> changes = new ArrayList<>();
        material.onChange(changes::add);
        assertThat(material.notAfterMs()).isEqualTo(first.getNotAfter().getTime());

        KeyPair b = keyPair();
        write(certificate(b, now - 10 * DAY, now - DAY), b); // expired
        material.checkForChange();
        write(certificate(b, now + DAY, now + 90 * DAY), b); // not valid yet
        material.checkForChange();
        write(certificate(b, now - DAY, now + 90 * DAY), a); // another key
        material.checkForChange();
        assertThat(changes).isEmpty();
        assertThat(material.sslOptions()).isSameAs(inUse);
        assertThat(material.notAfterMs()).isEqualTo(first.getNotAfter().getTime());

        X509Certificate renewed = certificate(b, now - DAY, now + 180 * DAY);
        write(renewed, b);
        material.checkForChange();
        assertThat(changes).hasSize(1);
        assertThat(material.sslOptions()).isNotSameAs(inUse);
        assertThat(material.notAfterMs()).isEqualTo(renewed.getNotAfter().getTime());
    }

    @Test
    void aPairThatCannotWorkIsRefusedAtStart() throws Exception {
        long now = System.currentTimeMillis();
        KeyPair a = keyPair();
        KeyPair b = keyPair();
        write(certificate(a, now - DAY, now + 90 * DAY), b);
        assertThatThrownBy(() -> TlsMaterial.load(vertx, new TlsOptions(0, 0, cert, key, dir)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not the key of the certificate");
        write(certificate(a, now - 10 * DAY, now - DAY), a);
        assertThatThrownBy(() -> TlsMaterial.load(vertx, new TlsOptions(0, 0, cert, key, dir)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expired");
    }

    @Test
    void theCertificatesExpiryIsAGauge() throws Exception {
        long now = System.currentTimeMillis();
        KeyPair a = keyPair();
        write(certificate(a, now - DAY, now + 10 * DAY), a);
        TlsMaterial material = TlsMaterial.load(vertx, new TlsOptions(0, 0, cert, key, dir));
        BrokerMetrics metrics = new BrokerMetrics();
        metrics.bindTlsCertificate(material::notAfterMs);
        String line = metrics.scrape().lines().filter(l -> l.startsWith("buslane_tls_certificate_expiry_seconds"))
                .findFirst().orElseThrow();
        double seconds = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        assertThat(seconds).isBetween(9.9 * 86_400, 10.0 * 86_400);
    }
}
