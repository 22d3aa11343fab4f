package io.buslane.amqp.transport;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Settings of the AMQP listener. Immutable.
 *
 * @param host             address to bind
 * @param port             port (0 picks a free one)
 * @param maxFrameSize     largest frame accepted and advertised
 * @param idleTimeoutMs    a connection silent for this long is closed; half of it is advertised to the client
 * @param maxConnections   connections beyond this are refused (the emulator allows 10; we default far higher)
 * @param requireAuth      when false, every link is allowed without a CBS token (SAS tokens are still accepted)
 * @param limits           what one connection may hold or take (sessions, links, buffered bytes, time to
 *                         authenticate)
 * @param eventLoops       event loops the connections are spread over (each connection lives on one)
 */
public record AmqpOptions(String host, int port, int maxFrameSize, int idleTimeoutMs, int maxConnections,
                          boolean requireAuth, AmqpLimits limits, int eventLoops,
                          Set<String> proxyProtocolFrom) {

    public AmqpOptions {
        if (eventLoops < 1) {
            throw new IllegalArgumentException("eventLoops must be at least 1, was " + eventLoops);
        }
        proxyProtocolFrom = proxyProtocolFrom == null ? Set.of() : proxyProtocolFrom.stream()
                .map(AmqpOptions::normalisedAddress).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * An IP address in one spelling ({@code ::1} and {@code 0:0:0:0:0:0:0:1} alike), for comparing a balancer's
     * configured address with a connection's peer; a literal address is not looked up.
     *
     * @throws IllegalArgumentException for something that is not an IP address
     */
    public static String normalisedAddress(String address) {
        String a = address == null ? "" : address.strip();
        if (a.startsWith("[") && a.endsWith("]")) {
            a = a.substring(1, a.length() - 1);
        }
        if (a.isEmpty() || !(a.indexOf(':') >= 0 || a.chars().allMatch(c -> c == '.' || Character.isDigit(c)))) {
            throw new IllegalArgumentException("--proxy-protocol-from takes IP addresses, not '" + address + "'");
        }
        try {
            return InetAddress.getByName(a).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--proxy-protocol-from: '" + address + "' is not an IP address");
        }
    }

    /** Options without the PROXY protocol. */
    public AmqpOptions(String host, int port, int maxFrameSize, int idleTimeoutMs, int maxConnections,
                       boolean requireAuth, AmqpLimits limits, int eventLoops) {
        this(host, port, maxFrameSize, idleTimeoutMs, maxConnections, requireAuth, limits, eventLoops, null);
    }

    /**
     * These options with the PROXY protocol (v1 or v2) from the balancers at {@code addresses} (IP addresses): every
     * AMQP and AMQPS connection must then come from one of them and start with the header, and the client's address
     * it carries is the one the throttle and the logs use. Empty: off.
     */
    public AmqpOptions withProxyProtocolFrom(Set<String> addresses) {
        return new AmqpOptions(host, port, maxFrameSize, idleTimeoutMs, maxConnections, requireAuth, limits,
                eventLoops, addresses);
    }

    public static AmqpOptions defaults(String host, int port) {
        return new AmqpOptions(host, port, 262_144, 240_000, 10_000, true, AmqpLimits.defaults(),
                defaultEventLoops());
    }

    /** One event loop per core, at least two: one stuck connection never holds up every other. */
    public static int defaultEventLoops() {
        return Math.max(2, Runtime.getRuntime().availableProcessors());
    }

    /** These options with other connection limits. */
    public AmqpOptions withLimits(AmqpLimits newLimits) {
        return new AmqpOptions(host, port, maxFrameSize, idleTimeoutMs, maxConnections, requireAuth, newLimits,
                eventLoops);
    }

    /** These options with another connection cap. */
    public AmqpOptions withMaxConnections(int newMaxConnections) {
        return new AmqpOptions(host, port, maxFrameSize, idleTimeoutMs, newMaxConnections, requireAuth, limits,
                eventLoops);
    }
}
