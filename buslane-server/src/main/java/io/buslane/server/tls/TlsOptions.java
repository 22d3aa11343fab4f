package io.buslane.server.tls;

import java.nio.file.Path;

/**
 * The TLS listeners and their certificate. Immutable.
 *
 * @param amqpsPort    AMQPS port (0: a free one, -1: off)
 * @param httpsPort    HTTPS port, which also carries AMQP over WebSockets (0: a free one, -1: off)
 * @param certFile     PEM certificate chain (server first), or null for a self-signed certificate
 * @param keyFile      PEM private key (PKCS#8 or PKCS#1), or null for a self-signed certificate
 * @param selfSignedDir where a self-signed certificate for {@code localhost} is made and kept
 */
public record TlsOptions(int amqpsPort, int httpsPort, Path certFile, Path keyFile, Path selfSignedDir) {

    public TlsOptions {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
    }

    /** No TLS listener. */
    public static TlsOptions off() {
        return new TlsOptions(-1, -1, null, null, null);
    }

    /** True if a TLS listener is asked for. */
    public boolean enabled() {
        return amqpsPort >= 0 || httpsPort >= 0;
    }
}
