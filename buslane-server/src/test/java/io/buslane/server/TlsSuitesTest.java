package io.buslane.server;

import io.buslane.server.tls.TlsMaterial;
import io.buslane.server.tls.TlsOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The TLS listeners accept forward-secret AEAD suites only and refuse a renegotiation the client starts
 * (docs/tls.md, docs/security.md). With the JDK's defaults, a client offering only static-RSA or CBC-SHA1 suites was
 * served, and a client could renegotiate at will, its CPU landing on the listener's event loop.
 */
class TlsSuitesTest {

    @TempDir
    static Path dir;
    private static Broker broker;
    private static SSLContext trust;

    @BeforeAll
    static void start() throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", -1, 0, dir.resolve("data"), null, 1, true, true, null,
                false, 100);
        broker = Broker.start(options, new TlsOptions(0, 0, null, null, dir.resolve("data/tls")));
        trust = TestTls.trusting(dir.resolve("data/tls/buslane-selfsigned.crt"));
    }

    @AfterAll
    static void stop() throws Exception {
        broker.close();
    }

    private static SSLSocket socket(int port, String protocol, String... suites) throws Exception {
        SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("localhost", port);
        s.setSoTimeout(5_000);
        s.setEnabledProtocols(new String[] {protocol});
        if (suites.length > 0) {
            s.setEnabledCipherSuites(suites);
        }
        return s;
    }

    @Test
    void staticRsaAndCbcSuitesAreRefusedOnAmqpsAndHttps() throws Exception {
        for (int port : new int[] {broker.amqpsPort(), broker.httpsPort()}) {
            for (String weak : new String[] {"TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_128_CBC_SHA",
                "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}) {
                try (SSLSocket s = socket(port, "TLSv1.2", weak)) {
                    assertThatThrownBy(s::startHandshake).as(port + " " + weak).isInstanceOf(SSLException.class);
                }
            }
            try (SSLSocket s = socket(port, "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")) {
                s.startHandshake();
                assertThat(s.getSession().getCipherSuite()).isEqualTo("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
            }
            try (SSLSocket s = socket(port, "TLSv1.3")) {
                s.startHandshake();
                assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.3");
            }
        }
        assertThat(TlsMaterial.cipherSuites()).allMatch(suite -> suite.startsWith("TLS_AES_")
                || suite.startsWith("TLS_CHACHA20_") || suite.startsWith("TLS_ECDHE_"))
                .noneMatch(suite -> suite.contains("CBC") || suite.endsWith("_SHA"));
    }

    @Test
    void aRenegotiationTheClientStartsIsRefused() throws Exception {
        try (SSLSocket s = socket(broker.httpsPort(), "TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")) {
            s.startHandshake();
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            assertThatThrownBy(() -> {
                s.startHandshake(); // TLS 1.2: asks the server to renegotiate
                out.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                if (in.read() < 0) {
                    throw new SSLException("closed");
                }
            }).isInstanceOf(java.io.IOException.class);
        }
    }
}
