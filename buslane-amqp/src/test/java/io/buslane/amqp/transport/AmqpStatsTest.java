package io.buslane.amqp.transport;

import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Session;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Link counting: each link once, whether it ends by close, detach or the connection dropping. */
class AmqpStatsTest {

    @Test
    void linksAreCountedOnceAndReleasedWhenTheConnectionDrops() {
        AmqpStats stats = new AmqpStats();
        Connection connection = Proton.connection();
        Session session = connection.session();
        Link a = session.sender("a");
        Link b = session.receiver("b");
        Link c = session.sender("c");

        AmqpStats.Links first = stats.newLinks();
        AmqpStats.Links second = stats.newLinks();
        first.opened(a);
        first.opened(a); // a repeated event does not count twice
        first.opened(b);
        second.opened(c);
        assertThat(stats.linksOpen()).isEqualTo(3);
        assertThat(stats.linksOpened()).isEqualTo(3);

        first.closed(a);
        first.closed(a); // close after detach
        assertThat(stats.linksOpen()).isEqualTo(2);

        first.connectionClosed();
        assertThat(stats.linksOpen()).isEqualTo(1);
        first.closed(b); // late close event after the socket dropped
        assertThat(stats.linksOpen()).isEqualTo(1);
        second.closed(c);
        assertThat(stats.linksOpen()).isZero();
        assertThat(stats.linksOpened()).isEqualTo(3);
    }

    @Test
    void connectionCounters() {
        AmqpStats stats = new AmqpStats();
        stats.connectionOpened();
        stats.connectionOpened();
        stats.connectionRefused();
        assertThat(stats.connectionsOpened()).isEqualTo(2);
        assertThat(stats.connectionsRefused()).isEqualTo(1);
    }
}
