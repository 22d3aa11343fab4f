package io.buslane.server.tls;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The self-signed material is private (docs/security.md): made in-process, the directory {@code 0700}, the
 * PKCS#12 store and its random password {@code 0600}. Before, the store was world-readable ({@code 0644}) under
 * the constant password {@code buslane}, so any local user could take the key. A store of that kind is re-encrypted
 * and made private on the next start, keeping the certificate clients trust.
 */
class SelfSignedMaterialTest {

    private Vertx vertx;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void theStoreAndItsRandomPasswordAreReadableByTheBrokersUserOnly(@TempDir Path dir) throws Exception {
        Path tls = dir.resolve("tls");
        TlsMaterial.load(vertx, new TlsOptions(0, 0, null, null, tls));

        Path store = tls.resolve(TlsMaterial.SELF_SIGNED_STORE);
        Path password = tls.resolve(TlsMaterial.SELF_SIGNED_PASSWORD);
        assertThat(mode(tls)).isEqualTo("rwx------");
        assertThat(mode(store)).isEqualTo("rw-------");
        assertThat(mode(password)).isEqualTo("rw-------");
        assertThat(mode(tls.resolve(TlsMaterial.SELF_SIGNED_CERT))).isEqualTo("rw-r--r--");
        String secret = Files.readString(password).strip();
        assertThat(secret).hasSizeGreaterThanOrEqualTo(24).isNotEqualTo("buslane");

        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, secret.toCharArray());
        }
        X509Certificate cert = (X509Certificate) ks.getCertificate("buslane");
        assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=localhost");
        assertThat(cert.getSubjectAlternativeNames()).extracting(n -> String.valueOf(n.get(1)))
                .contains("localhost", "127.0.0.1");
        assertThat(cert.getNotAfter().getTime() - System.currentTimeMillis()).isGreaterThan(3000L * 86_400_000);

        // a second start keeps the material
        TlsMaterial.load(vertx, new TlsOptions(0, 0, null, null, tls));
        assertThat(Files.readString(password).strip()).isEqualTo(secret);
    }

    @Test
    void aStoreOfAnEarlierVersionIsReEncryptedAndMadePrivateKeepingItsCertificate(@TempDir Path dir)
            throws Exception {
        Path tls = dir.resolve("tls");
        Path store = tls.resolve(TlsMaterial.SELF_SIGNED_STORE);
        Path crt = tls.resolve(TlsMaterial.SELF_SIGNED_CERT);
        TlsMaterial.makeSelfSigned(tls, store, crt);
        // turn it into what earlier versions left: the constant password, no password file, world-readable
        String made = Files.readString(tls.resolve(TlsMaterial.SELF_SIGNED_PASSWORD)).strip();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, made.toCharArray());
        }
        PrivateKey key = (PrivateKey) ks.getKey("buslane", made.toCharArray());
        Certificate cert = ks.getCertificate("buslane");
        KeyStore legacy = KeyStore.getInstance("PKCS12");
        legacy.load(null, null);
        legacy.setKeyEntry("buslane", key, "buslane".toCharArray(), new Certificate[] {cert});
        try (var out = Files.newOutputStream(store)) {
            legacy.store(out, "buslane".toCharArray());
        }
        Files.delete(tls.resolve(TlsMaterial.SELF_SIGNED_PASSWORD));
        Files.setPosixFilePermissions(store, PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(tls, PosixFilePermissions.fromString("rwxr-xr-x"));

        TlsMaterial.load(vertx, new TlsOptions(0, 0, null, null, tls));

        assertThat(mode(tls)).isEqualTo("rwx------");
        assertThat(mode(store)).isEqualTo("rw-------");
        String secret = Files.readString(tls.resolve(TlsMaterial.SELF_SIGNED_PASSWORD)).strip();
        assertThat(secret).isNotEqualTo("buslane");
        KeyStore now = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            now.load(in, secret.toCharArray());
        }
        assertThat(now.getCertificate("buslane")).isEqualTo(cert);
        try (InputStream in = Files.newInputStream(crt)) {
            assertThat(CertificateFactory.getInstance("X.509").generateCertificate(in)).isEqualTo(cert);
        }
        assertThat(List.of(tls.toFile().list())).doesNotContain(TlsMaterial.SELF_SIGNED_STORE + ".tmp");
    }
}
