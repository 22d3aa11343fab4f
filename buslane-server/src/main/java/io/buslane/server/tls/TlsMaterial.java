package io.buslane.server.tls;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The broker's certificate: a PEM chain and key given by the operator, re-read when either file changes (the next
 * connection gets the new certificate, open ones keep theirs), or a self-signed certificate for {@code localhost}
 * made once with the JDK's {@code keytool} and kept in the data directory. TLS 1.2 and 1.3 only, with an explicit
 * list of forward-secret AEAD cipher suites ({@link #cipherSuites}) and no client-initiated renegotiation.
 */
public final class TlsMaterial {

    private static final Logger LOG = LoggerFactory.getLogger(TlsMaterial.class);
    static final String SELF_SIGNED_STORE = "buslane-selfsigned.p12";
    static final String SELF_SIGNED_CERT = "buslane-selfsigned.crt";
    private static final String STORE_PASSWORD = "buslane";
    static final String CIPHER_SUITES_PROPERTY = "buslane.tls.cipherSuites";
    private static final String RENEGOTIATION_PROPERTY = "jdk.tls.rejectClientInitiatedRenegotiation";
    private static final List<String> DEFAULT_CIPHER_SUITES = List.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

    static {
        refuseClientRenegotiation();
    }

    private final Vertx vertx;
    private final Path cert;
    private final Path key;
    private final List<Consumer<ServerSSLOptions>> listeners = new ArrayList<>();
    private volatile ServerSSLOptions current;
    private FileTime certTime;
    private FileTime keyTime;

    private TlsMaterial(Vertx vertx, Path cert, Path key, ServerSSLOptions initial) {
        this.vertx = vertx;
        this.cert = cert;
        this.key = key;
        this.current = initial;
    }

    /** Loads the operator's certificate, or makes (once) and loads a self-signed one. */
    public static TlsMaterial load(Vertx vertx, TlsOptions options) throws IOException {
        if (options.certFile() != null) {
            TlsMaterial m = new TlsMaterial(vertx, options.certFile(), options.keyFile(), null);
            m.certTime = Files.getLastModifiedTime(options.certFile());
            m.keyTime = Files.getLastModifiedTime(options.keyFile());
            m.current = ssl(pem(options.certFile(), options.keyFile()));
            LOG.info("TLS certificate {} (key {}), re-read when either file changes", options.certFile(),
                    options.keyFile());
            return m;
        }
        Path dir = options.selfSignedDir().toAbsolutePath();
        Path store = dir.resolve(SELF_SIGNED_STORE);
        Path certPem = dir.resolve(SELF_SIGNED_CERT);
        if (!Files.isRegularFile(store) || !Files.isRegularFile(certPem)) {
            makeSelfSigned(dir, store, certPem);
        }
        LOG.warn("TLS without --tls-cert/--tls-key: using a self-signed certificate for localhost, {}. Clients must "
                + "trust {} (JVM: keytool -importcert into a trust store; Node.js: NODE_EXTRA_CA_CERTS; Python: "
                + "connection_verify). See docs/tls.md.", store, certPem);
        PfxOptions pfx = new PfxOptions().setValue(Buffer.buffer(Files.readAllBytes(store)))
                .setPassword(STORE_PASSWORD);
        return new TlsMaterial(vertx, null, null, ssl(pfx));
    }

    private static PemKeyCertOptions pem(Path certFile, Path keyFile) throws IOException {
        return new PemKeyCertOptions()
                .setCertValue(Buffer.buffer(Files.readAllBytes(certFile)))
                .setKeyValue(Buffer.buffer(Files.readAllBytes(keyFile)));
    }

    private static ServerSSLOptions ssl(KeyCertOptions keyCert) {
        ServerSSLOptions o = new ServerSSLOptions().setKeyCertOptions(keyCert)
                .setEnabledSecureTransportProtocols(Set.of("TLSv1.2", "TLSv1.3"));
        for (String suite : cipherSuites()) {
            o.addEnabledCipherSuite(suite);
        }
        return o;
    }

    /**
     * The cipher suites the listeners accept, in order of preference: TLS 1.3's AEAD suites, then TLS 1.2 with ECDHE
     * (forward secrecy) and AES-GCM or ChaCha20-Poly1305 only; no static RSA key exchange, no CBC, no SHA-1 MACs.
     * Every official SDK's TLS stack (JDK, .NET/SChannel/OpenSSL, Node.js, Python's OpenSSL) offers several of
     * them. {@code -Dbuslane.tls.cipherSuites=A,B,...} (JDK suite names) replaces the list (docs/tls.md).
     */
    public static List<String> cipherSuites() {
        String configured = System.getProperty(CIPHER_SUITES_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return java.util.Arrays.stream(configured.split(",")).map(String::trim).filter(x -> !x.isEmpty())
                    .toList();
        }
        return DEFAULT_CIPHER_SUITES;
    }

    /**
     * Refuses TLS renegotiation that a client starts (its CPU would land on the listener's event loop, and TLS 1.3
     * has none): the JDK reads {@code jdk.tls.rejectClientInitiatedRenegotiation} once, so this runs before the
     * first TLS handshake of the process (when TLS material is first loaded, and from {@code Main}). An operator's
     * own {@code -D} setting is kept.
     */
    public static void refuseClientRenegotiation() {
        if (System.getProperty(RENEGOTIATION_PROPERTY) == null) {
            System.setProperty(RENEGOTIATION_PROPERTY, "true");
        }
    }

    /** The certificate as it is now. */
    public ServerSSLOptions sslOptions() {
        return current;
    }

    /** Calls {@code listener} with the new options each time the certificate is re-read. */
    public synchronized void onChange(Consumer<ServerSSLOptions> listener) {
        listeners.add(listener);
    }

    /**
     * Re-reads the certificate if its files changed since the last look; a half-written pair (the files being
     * replaced) is tried again on the next look. Called periodically.
     */
    public synchronized void checkForChange() {
        if (cert == null) {
            return;
        }
        try {
            FileTime c = Files.getLastModifiedTime(cert);
            FileTime k = Files.getLastModifiedTime(key);
            if (c.equals(certTime) && k.equals(keyTime)) {
                return;
            }
            PemKeyCertOptions pem = pem(cert, key);
            // parse now: a certificate that does not load is not handed to the listeners
            pem.getKeyManagerFactory(vertx);
            certTime = c;
            keyTime = k;
            current = ssl(pem);
            LOG.info("TLS certificate {} changed: new connections use it", cert);
            for (Consumer<ServerSSLOptions> l : listeners) {
                l.accept(current);
            }
        } catch (Exception e) {
            LOG.warn("TLS certificate {} / key {} could not be re-read (kept the previous one): {}", cert, key,
                    e.toString());
        }
    }

    private static void makeSelfSigned(Path dir, Path store, Path certPem) throws IOException {
        Files.createDirectories(dir);
        Files.deleteIfExists(store);
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(List.of(keytool.toString(), "-genkeypair", "-alias", "buslane", "-keyalg", "RSA", "-keysize", "2048",
                "-validity", "3650", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1,ip:::1",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", STORE_PASSWORD,
                "-keypass", STORE_PASSWORD));
        run(List.of(keytool.toString(), "-exportcert", "-rfc", "-alias", "buslane", "-keystore", store.toString(),
                "-storepass", STORE_PASSWORD, "-file", certPem.toString()));
        LOG.info("Made a self-signed certificate for localhost: {}", certPem);
    }

    private static void run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool failed: " + out.trim());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making a self-signed certificate", e);
        }
    }
}
