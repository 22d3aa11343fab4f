package io.buslane.server.tls;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The broker's certificate: a PEM chain and key given by the operator, re-read when either file changes (the next
 * connection gets the new certificate, open ones keep theirs), or a self-signed certificate for {@code localhost}
 * made once in-process and kept in the data directory, private to the broker's user. TLS 1.2 and 1.3 only, with an
 * explicit list of forward-secret AEAD cipher suites ({@link #cipherSuites}) and no client-initiated
 * renegotiation.
 */
public final class TlsMaterial {

    private static final Logger LOG = LoggerFactory.getLogger(TlsMaterial.class);
    static final String SELF_SIGNED_STORE = "buslane-selfsigned.p12";
    static final String SELF_SIGNED_CERT = "buslane-selfsigned.crt";
    static final String SELF_SIGNED_PASSWORD = "buslane-selfsigned.password";
    /** The store password of the self-signed material made by versions before the random one. */
    private static final String LEGACY_STORE_PASSWORD = "buslane";
    private static final SecureRandom RANDOM = new SecureRandom();
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
    private volatile long notAfterMs = Long.MAX_VALUE;
    private long lastExpiryWarningMs = Long.MIN_VALUE;
    /** How long before its expiry the certificate in use is warned about. */
    static final long EXPIRY_WARNING_MS = 14L * 86_400_000L;

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
            X509Certificate leaf = CertificateCheck.validate(options.certFile(),
                    options.keyFile(), System.currentTimeMillis());
            m.current = ssl(pem(options.certFile(), options.keyFile()));
            m.notAfterMs = leaf.getNotAfter().getTime();
            m.warnIfExpiringSoon(System.currentTimeMillis());
            warnIfReadableByOthers(options.keyFile());
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
        String password = selfSignedPassword(dir, store);
        PfxOptions pfx = new PfxOptions().setValue(Buffer.buffer(Files.readAllBytes(store)))
                .setPassword(password);
        TlsMaterial m = new TlsMaterial(vertx, null, null, ssl(pfx));
        try (var in = Files.newInputStream(certPem)) {
            m.notAfterMs = ((X509Certificate) CertificateFactory
                    .getInstance("X.509").generateCertificate(in)).getNotAfter().getTime();
        } catch (CertificateException e) {
            throw new IOException("cannot read " + certPem + ": " + e.getMessage(), e);
        }
        return m;
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
            return Arrays.stream(configured.split(",")).map(String::trim).filter(x -> !x.isEmpty())
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

    /** When the certificate in use expires (epoch ms). */
    public long notAfterMs() {
        return notAfterMs;
    }

    /** Once a day while the certificate in use expires within {@link #EXPIRY_WARNING_MS}, a WARN line. */
    synchronized void warnIfExpiringSoon(long nowMs) {
        long left = notAfterMs - nowMs;
        if (left > EXPIRY_WARNING_MS || nowMs - lastExpiryWarningMs < 86_400_000L) {
            return;
        }
        lastExpiryWarningMs = nowMs;
        LOG.warn("TLS certificate {} expires in {} days ({}); replace it (the broker re-reads it when the files "
                + "change)", cert, Math.max(0, left / 86_400_000L), Instant.ofEpochMilli(notAfterMs));
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
        warnIfExpiringSoon(System.currentTimeMillis());
        try {
            FileTime c = Files.getLastModifiedTime(cert);
            FileTime k = Files.getLastModifiedTime(key);
            if (c.equals(certTime) && k.equals(keyTime)) {
                return;
            }
            // checked before it is swapped in: one that cannot work (another key, expired, not yet valid, a broken
            // chain) is not handed to the listeners, which keep the previous one
            X509Certificate leaf;
            try {
                leaf = CertificateCheck.validate(cert, key, System.currentTimeMillis());
            } catch (IllegalArgumentException refused) {
                certTime = c;
                keyTime = k;
                LOG.warn("TLS certificate {} changed but is not used (kept the previous one): {}", cert,
                        refused.getMessage());
                return;
            }
            PemKeyCertOptions pem = pem(cert, key);
            pem.getKeyManagerFactory(vertx);
            certTime = c;
            keyTime = k;
            current = ssl(pem);
            notAfterMs = leaf.getNotAfter().getTime();
            lastExpiryWarningMs = Long.MIN_VALUE;
            warnIfExpiringSoon(System.currentTimeMillis());
            LOG.info("TLS certificate {} changed: new connections use it", cert);
            for (Consumer<ServerSSLOptions> l : listeners) {
                l.accept(current);
            }
        } catch (Exception e) {
            LOG.warn("TLS certificate {} / key {} could not be re-read (kept the previous one): {}", cert, key,
                    e.toString());
        }
    }

    /**
     * Makes the self-signed certificate in-process (Bouncy Castle): an RSA 2048 key, {@code CN=localhost} with the
     * names {@code localhost}, {@code 127.0.0.1} and {@code ::1}, ten years, in a PKCS#12 store under a random
     * password kept beside it. The directory is {@code 0700}, the store and the password {@code 0600}; the
     * certificate (public, for clients to trust) {@code 0644}.
     */
    static void makeSelfSigned(Path dir, Path store, Path certPem) throws IOException {
        Files.createDirectories(dir);
        restrict(dir, "rwx------");
        Files.deleteIfExists(store);
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048, RANDOM);
            KeyPair pair = generator.generateKeyPair();
            X500Name name = new X500Name("CN=localhost");
            long now = System.currentTimeMillis();
            var builder = new JcaX509v3CertificateBuilder(name,
                    new BigInteger(64, RANDOM).abs().add(BigInteger.ONE),
                    new Date(now - 60_000), new Date(now + 3650L * 24 * 3600 * 1000), name,
                    pair.getPublic());
            builder.addExtension(Extension.subjectAlternativeName, false,
                    new GeneralNames(new GeneralName[] {
                        new GeneralName(GeneralName.dNSName,
                                "localhost"),
                        new GeneralName(GeneralName.iPAddress,
                                "127.0.0.1"),
                        new GeneralName(GeneralName.iPAddress,
                                "::1")}));
            var signer = new JcaContentSignerBuilder("SHA256withRSA")
                    .build(pair.getPrivate());
            X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(builder.build(signer));
            String password = newPassword();
            writeStore(store, pair.getPrivate(), certificate, password);
            writePrivate(dir.resolve(SELF_SIGNED_PASSWORD), password.getBytes(StandardCharsets.UTF_8));
            String pem = "-----BEGIN CERTIFICATE-----\n"
                    + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(certificate.getEncoded())
                    + "\n-----END CERTIFICATE-----\n";
            Files.writeString(certPem, pem);
            restrict(certPem, "rw-r--r--");
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IOException("could not make a self-signed certificate: " + e, e);
        }
        LOG.info("Made a self-signed certificate for localhost: {}", certPem);
    }

    /**
     * The password of the self-signed store. A store made by an earlier version (the constant password
     * {@code buslane}, no password file, world-readable) is re-encrypted under a new random password and its files
     * made private, keeping the certificate clients already trust.
     */
    static String selfSignedPassword(Path dir, Path store) throws IOException {
        Path passwordFile = dir.resolve(SELF_SIGNED_PASSWORD);
        restrict(dir, "rwx------");
        if (Files.isRegularFile(passwordFile)) {
            restrict(passwordFile, "rw-------");
            restrict(store, "rw-------");
            return Files.readString(passwordFile).strip();
        }
        try {
            KeyStore legacy = KeyStore.getInstance("PKCS12");
            try (var in = Files.newInputStream(store)) {
                legacy.load(in, LEGACY_STORE_PASSWORD.toCharArray());
            }
            String alias = legacy.aliases().nextElement();
            PrivateKey key = (PrivateKey) legacy.getKey(alias,
                    LEGACY_STORE_PASSWORD.toCharArray());
            String password = newPassword();
            writeStore(store, key, (X509Certificate) legacy.getCertificate(alias), password);
            writePrivate(passwordFile, password.getBytes(StandardCharsets.UTF_8));
            LOG.warn("The self-signed store {} had the constant password of earlier versions: re-encrypted under a "
                    + "random password in {} (files made private, the certificate kept)", store, passwordFile);
            return password;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot read the self-signed store " + store + ": " + e, e);
        }
    }

    private static void writeStore(Path store, PrivateKey key, X509Certificate cert,
                                   String password) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("buslane", key, password.toCharArray(), new Certificate[] {cert});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ks.store(out, password.toCharArray());
        writePrivate(store, out.toByteArray());
    }

    /** Writes {@code bytes} to a file only its owner can read (created so, where the file system knows modes). */
    private static void writePrivate(Path file, byte[] bytes) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        if (posix(file.getParent())) {
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rw-------")));
        }
        Files.write(tmp, bytes);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        restrict(file, "rw-------");
    }

    private static void restrict(Path path, String mode) throws IOException {
        if (Files.exists(path) && posix(path)) {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
        }
    }

    private static boolean posix(Path path) {
        try {
            return path != null && Files.getFileStore(path).supportsFileAttributeView("posix");
        } catch (IOException e) {
            return false;
        }
    }

    private static String newPassword() {
        byte[] bytes = new byte[24];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Warns when the operator's key file can be read by users other than its owner and group. */
    static void warnIfReadableByOthers(Path keyFile) {
        try {
            if (posix(keyFile.toAbsolutePath().getParent()) && Files.getPosixFilePermissions(keyFile)
                    .contains(PosixFilePermission.OTHERS_READ)) {
                LOG.warn("The TLS key {} is readable by every user of this machine; make it private "
                        + "(chmod 600 {}).", keyFile, keyFile);
            }
        } catch (IOException | UnsupportedOperationException e) {
            LOG.debug("could not read the permissions of {}: {}", keyFile, e.toString());
        }
    }
}
