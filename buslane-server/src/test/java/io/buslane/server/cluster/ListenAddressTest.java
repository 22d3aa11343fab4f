package io.buslane.server.cluster;

import io.buslane.journal.postgres.PostgresOptions;
import io.buslane.server.BrokerOptions;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where the channel between nodes listens: on the cluster address by default, on {@code --cluster-bind} when the
 * other nodes reach this one at an address that is not its own (NAT, a service address), with the port of the
 * cluster address unless the bind names one; and a warning when a host name resolves to a loopback address.
 */
class ListenAddressTest {

    private static BrokerOptions onPostgres() {
        return BrokerOptions.defaults().withPostgres(PostgresOptions.parse("postgresql://db/buslane", "node-a",
                Duration.ofSeconds(5), null));
    }

    @Test
    void theClusterAddressByDefaultTheBindWhenGivenWithTheClusterPortUnlessItNamesOne() {
        assertThat(ListenAddress.of("10.0.0.1:5400", null)).isEqualTo(new ListenAddress("10.0.0.1", 5400));
        assertThat(ListenAddress.of("lb.example.com:5400", "0.0.0.0")).isEqualTo(new ListenAddress("0.0.0.0", 5400));
        assertThat(ListenAddress.of("lb.example.com:5400", "10.0.0.1:6400"))
                .isEqualTo(new ListenAddress("10.0.0.1", 6400));
        assertThat(ListenAddress.of("[fd00::1]:5400", "::")).isEqualTo(new ListenAddress("::", 5400));
        assertThat(ListenAddress.of("[fd00::1]:5400", "[::]:6400")).isEqualTo(new ListenAddress("::", 6400));
        assertThat(ListenAddress.of("[fd00::1]:5400", null)).hasToString("[fd00::1]:5400");
    }

    @Test
    void aMalformedAddressOrBindIsRefusedNamingItsOption() {
        assertThatThrownBy(() -> ListenAddress.of("10.0.0.1", null)).hasMessageContaining("--cluster-address")
                .hasMessageContaining("names no port");
        assertThatThrownBy(() -> ListenAddress.of("10.0.0.1:5400", ":6400")).hasMessageContaining("--cluster-bind")
                .hasMessageContaining("names no host");
        assertThatThrownBy(() -> ListenAddress.of("10.0.0.1:5400", "0.0.0.0:x")).hasMessageContaining(
                "--cluster-bind").hasMessageContaining("port must be a number");
        assertThatThrownBy(() -> onPostgres().withCluster("127.0.0.1:5400", "x".repeat(32), null)
                .withClusterBind("[::1")).hasMessageContaining("closing ]");
        assertThatThrownBy(() -> BrokerOptions.defaults().withClusterBind("0.0.0.0"))
                .hasMessageContaining("--cluster-bind needs --cluster-address");
        assertThat(onPostgres().withCluster("127.0.0.1:5400", "x".repeat(32), null).withClusterBind("0.0.0.0")
                .clusterBind()).isEqualTo("0.0.0.0");
    }

    @Test
    void aHostNameThatResolvesToLoopbackIsWarnedAboutALoopbackAddressGivenAsSuchIsNot() throws Exception {
        InetAddress debianHostsLine = InetAddress.getByAddress("node-a", new byte[] {127, 0, 1, 1});
        ListenAddress.Resolver resolver = host -> {
            if (host.equals("node-a")) {
                return debianHostsLine;
            }
            if (host.equals("10.0.0.1") || host.startsWith("127.") || host.equals("localhost")) {
                return InetAddress.getByName(host);
            }
            throw new UnknownHostException(host);
        };
        assertThat(ListenAddress.of("node-a:5400", null).loopbackWarning(resolver)).hasValueSatisfying(w ->
                assertThat(w).contains("127.0.1.1").contains("--cluster-bind"));
        assertThat(ListenAddress.of("10.0.0.1:5400", null).loopbackWarning(resolver)).isEmpty();
        assertThat(ListenAddress.of("node-a:5400", "127.0.0.1").loopbackWarning(resolver)).isEmpty();
        assertThat(ListenAddress.of("localhost:5400", null).loopbackWarning(resolver)).isEmpty();
        assertThat(ListenAddress.of("nowhere.invalid:5400", null).loopbackWarning(resolver)).isEmpty();
    }
}
