package io.buslane.server.tls;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a PEM certificate chain and key before the broker uses them (docs/tls.md): the key is the one of the first
 * certificate (a signature made with it verifies with the certificate's public key), that certificate is valid now,
 * and each certificate of the chain is signed by the next. A pair that fails is refused with what is wrong, so a
 * renewal that cannot work never replaces one that does.
 */
final class CertificateCheck {

    private static final SecureRandom RANDOM = new SecureRandom();

    private CertificateCheck() {
    }

    /**
     * @return the first (leaf) certificate
     * @throws IllegalArgumentException saying what is wrong
     * @throws IOException              when a file cannot be read
     */
    static X509Certificate validate(Path certFile, Path keyFile, long nowMs) throws IOException {
        List<X509Certificate> chain = chain(certFile);
        PrivateKey key = key(keyFile);
        X509Certificate leaf = chain.get(0);
        if (nowMs < leaf.getNotBefore().getTime()) {
            throw new IllegalArgumentException("the certificate is not valid before " + leaf.getNotBefore()
                    .toInstant());
        }
        if (nowMs > leaf.getNotAfter().getTime()) {
            throw new IllegalArgumentException("the certificate expired at " + leaf.getNotAfter().toInstant());
        }
        if (!matches(key, leaf)) {
            throw new IllegalArgumentException("the key " + keyFile + " is not the key of the certificate");
        }
        for (int i = 0; i + 1 < chain.size(); i++) {
            try {
                chain.get(i).verify(chain.get(i + 1).getPublicKey());
            } catch (GeneralSecurityException e) {
                throw new IllegalArgumentException("certificate " + (i + 1) + " of the chain is not signed by the "
                        + "next one (" + e.getMessage() + ")");
            }
        }
        return leaf;
    }

    private static List<X509Certificate> chain(Path certFile) throws IOException {
        List<X509Certificate> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(certFile)) {
            for (var c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException("the certificate file cannot be read: " + e.getMessage());
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("the certificate file holds no certificate");
        }
        return out;
    }

    private static PrivateKey key(Path keyFile) throws IOException {
        try (Reader r = Files.newBufferedReader(keyFile, StandardCharsets.US_ASCII);
             PEMParser parser = new PEMParser(r)) {
            Object o = parser.readObject();
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            if (o instanceof PEMKeyPair pair) {
                return converter.getPrivateKey(pair.getPrivateKeyInfo());
            }
            if (o instanceof PrivateKeyInfo info) {
                return converter.getPrivateKey(info);
            }
            throw new IllegalArgumentException("the key file holds no unencrypted PEM private key");
        }
    }

    private static boolean matches(PrivateKey key, X509Certificate leaf) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            case "Ed448" -> "Ed448";
            default -> null;
        };
        if (algorithm == null) {
            return true; // a key type the JDK's TLS would refuse anyway: left to the TLS stack
        }
        try {
            byte[] challenge = new byte[32];
            RANDOM.nextBytes(challenge);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(leaf.getPublicKey());
            verifier.update(challenge);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
