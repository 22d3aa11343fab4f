package io.buslane.engine.entity;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;

import java.util.Locale;

/**
 * A forwarding target's address as the client that set it wrote it ({@code ForwardTo},
 * {@code ForwardDeadLetteredMessagesTo}): the administration API gives it back in that form, as the service does (the
 * JavaScript SDK sends {@code sb://host:port/queue} and compares what it reads with that, the Java SDK sends and
 * compares {@code https://host/queue}). The entity the forwarding goes to is the description's entity name; the
 * address is only what is shown.
 */
public final class ForwardAddress {

    private ForwardAddress() {
    }

    /**
     * The address a client sent, normalised as the service's URI type does (scheme and host in lower case, port and
     * path kept), or null when it is no absolute URL (a bare entity name: shown in the service's default form).
     */
    public static String asSent(String value) {
        if (value == null) {
            return null;
        }
        String v = value.trim();
        int scheme = v.indexOf("://");
        if (scheme <= 0) {
            return null;
        }
        int pathStart = v.indexOf('/', scheme + 3);
        String authority = pathStart < 0 ? v.substring(scheme + 3) : v.substring(scheme + 3, pathStart);
        String path = pathStart < 0 ? "/" : v.substring(pathStart);
        return v.substring(0, scheme).toLowerCase(Locale.ROOT) + "://" + authority.toLowerCase(Locale.ROOT) + path;
    }

    /**
     * The address kept with a description naming {@code entityName} as its target: null when there is no target,
     * or when the address names another entity (the target was changed by a path that gave no address, such as
     * {@code $management} or Config.json), so that a stale address is never shown.
     */
    static String keptFor(String address, String entityName) {
        if (address == null || entityName == null) {
            return null;
        }
        try {
            CanonicalAddress a = CanonicalAddress.parse(address);
            return !a.isNamespace() && a.entityPath().equalsIgnoreCase(entityName) ? address : null;
        } catch (BrokerException | IllegalArgumentException e) {
            return null;
        }
    }
}
