package io.buslane.server.cluster;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * Where the channel between nodes listens: by default the cluster address's host and port (the node channel is for
 * the other nodes, not for clients' networks, so not every interface), or {@code --cluster-bind} (HOST or
 * HOST:PORT, the port defaulting to the cluster address's) when the other nodes reach this one at an address that
 * is not its own: behind NAT or a service address.
 *
 * @param host the host to listen on (a name or an address; IPv6 without brackets)
 * @param port the port to listen on
 */
public record ListenAddress(String host, int port) {

    /** The listening address for cluster address {@code address} (HOST:PORT) and {@code bind} (null: none). */
    public static ListenAddress of(String address, String bind) {
        ListenAddress advertised = parse(address, -1, "--cluster-address");
        return bind == null ? advertised : parse(bind, advertised.port(), "--cluster-bind");
    }

    private static ListenAddress parse(String s, int defaultPort, String option) {
        String text = s.trim();
        String host;
        String port;
        if (text.startsWith("[")) {
            int end = text.indexOf(']');
            if (end < 0) {
                throw new IllegalArgumentException(option + " " + s + ": an IPv6 address needs its closing ]");
            }
            host = text.substring(1, end);
            port = text.length() > end + 1 && text.charAt(end + 1) == ':' ? text.substring(end + 2) : null;
        } else {
            int colon = text.lastIndexOf(':');
            boolean bareIpv6 = colon >= 0 && text.indexOf(':') != colon;
            host = colon < 0 || bareIpv6 ? text : text.substring(0, colon);
            port = colon < 0 || bareIpv6 ? null : text.substring(colon + 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException(option + " " + s + " names no host");
        }
        if (port == null) {
            if (defaultPort < 0) {
                throw new IllegalArgumentException(option + " " + s + " names no port (HOST:PORT)");
            }
            return new ListenAddress(host, defaultPort);
        }
        try {
            int p = Integer.parseInt(port);
            if (p < 0 || p > 65_535) {
                throw new NumberFormatException();
            }
            return new ListenAddress(host, p);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + s + ": the port must be a number from 0 to 65535");
        }
    }

    /**
     * A warning when this listens on a name that resolves to a loopback address: a host name that /etc/hosts maps to
     * 127.0.1.1 (Debian's way with the machine's own name), say, which no other machine reaches. A loopback address
     * or {@code localhost} given as such is taken as meant (a test cluster on one machine, a proxy beside it).
     */
    Optional<String> loopbackWarning() {
        return loopbackWarning(InetAddress::getByName);
    }

    /** How a host name is resolved (the system's resolver, or a test's). */
    interface Resolver {
        InetAddress resolve(String host) throws UnknownHostException;
    }

    Optional<String> loopbackWarning(Resolver resolver) {
        try {
            InetAddress listening = resolver.resolve(host);
            if (listening.isLoopbackAddress() && !isLoopbackName(host)) {
                return Optional.of("The channel between nodes listens on " + host + ", which resolves to the "
                        + "loopback address " + listening.getHostAddress() + ": other machines cannot reach it "
                        + "there. Give the node's routable address in --cluster-address, or --cluster-bind "
                        + "(0.0.0.0 for every interface).");
            }
        } catch (UnknownHostException e) {
            return Optional.empty(); // listening reports the unresolvable name itself
        }
        return Optional.empty();
    }

    private static boolean isLoopbackName(String host) {
        return host.equals("localhost") || host.startsWith("127.") || host.equals("::1");
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
