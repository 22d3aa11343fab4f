package io.buslane.testsupport;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority made with {@code openssl} for the TLS tests: its certificate (to trust), and
 * server certificates it signs for {@code localhost}, valid or already expired. JDK only (and the {@code openssl}
 * command), like {@link BrokerProcess}: for the conformance suite's and the framework tests' TLS brokers.
 */
public final class TestCa {

    private final Path dir;
    private final Path caCert;
    private final Path caKey;

    private TestCa(Path dir) {
        this.dir = dir;
        this.caCert = dir.resolve("ca.crt");
        this.caKey = dir.resolve("ca.key");
    }

    /** A new CA in a fresh temporary folder. */
    public static TestCa create() throws Exception {
        TestCa ca = new TestCa(Files.createTempDirectory("buslane-tls-ca-"));
        openssl(ca.dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                "-days", "30", "-subj", "/CN=Buslane Test CA");
        return ca;
    }

    /**
     * Signs a certificate for {@code dnsName} (a host name, or an IP address, which it names as such) into
     * {@code name}.crt / {@code name}.key, good for servers and clients (no key usage restricts it); {@code days}
     * below zero gives one that has already expired.
     */
    public Path[] issue(String name, String dnsName, int days) throws Exception {
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=" + dnsName);
        boolean ip = dnsName.matches("[0-9.]+") || dnsName.contains(":");
        Files.writeString(dir.resolve(name + ".ext"), "subjectAltName=" + (ip ? "IP:" : "DNS:") + dnsName + "\n");
        openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", caKey.getFileName().toString(),
                "-CAcreateserial", "-days", Integer.toString(days), "-extfile", name + ".ext", "-out", name + ".crt");
        return new Path[] {dir.resolve(name + ".crt"), dir.resolve(name + ".key")};
    }

    /** An SSL context that trusts this CA only. */
    public SSLContext sslContext() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers().getTrustManagers(), null);
        return context;
    }

    /** A PKCS#12 trust store holding this CA (for {@code javax.net.ssl.trustStore}), password "changeit". */
    public Path trustStore() throws Exception {
        KeyStore store = keyStore();
        Path file = dir.resolve("trust.p12");
        try (var out = Files.newOutputStream(file)) {
            store.store(out, "changeit".toCharArray());
        }
        return file;
    }

    /** The CA's certificate (PEM), for clients that take a file to trust. */
    public Path caCert() {
        return caCert;
    }

    private TrustManagerFactory trustManagers() throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(keyStore());
        return tmf;
    }

    private KeyStore keyStore() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caCert)) {
            store.setCertificateEntry("buslane-test-ca", CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        return store;
    }

    private static void openssl(Path dir, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }
}
