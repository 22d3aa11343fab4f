package io.buslane.amqp.link;

import io.buslane.common.address.CanonicalAddress;

import io.buslane.common.auth.Right;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Receiver;

/** Stateless. What every link handler does the same way: refusing or detaching a link, reading an address. */
public final class Links {

    private Links() {
    }

    /** Answers an attach with a null terminus followed by a detach carrying the error. */
    public static void refuse(Link link, String condition, String description) {
        if (link instanceof Receiver) {
            link.setSource(link.getRemoteSource());
            link.setTarget(null);
        } else {
            link.setSource(null);
            link.setTarget(link.getRemoteTarget());
        }
        link.open();
        link.setCondition(new ErrorCondition(Symbol.valueOf(condition), description));
        link.close();
    }

    /** Refuses an attach with the condition and description of a broker error. */
    public static void refuse(Link link, BrokerException error) {
        refuse(link, error.kind().amqpCondition(), error.descriptionFor(hostOf(link)));
    }

    /** Detaches an open link with an error. */
    public static void detach(Link link, BrokerException error) {
        if (link.getLocalState() == EndpointState.ACTIVE) {
            link.setCondition(new ErrorCondition(Symbol.valueOf(error.kind().amqpCondition()),
                    error.descriptionFor(hostOf(link))));
            link.close();
        }
    }

    /**
     * The host the client addressed the namespace by (its open frame's hostname, without a port), as the service
     * names entities in errors ({@code sb://host/queue}); null when the client sent none.
     */
    public static String hostOf(Link link) {
        Connection c = link.getSession() == null ? null
                : link.getSession().getConnection();
        String h = c == null ? null : c.getRemoteHostname();
        if (h == null || h.isEmpty()) {
            return null;
        }
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close > 0 ? h.substring(0, close + 1) : h;
        }
        int colon = h.indexOf(':');
        return colon >= 0 && h.indexOf(':', colon + 1) < 0 ? h.substring(0, colon) : h;
    }

    /**
     * The node part of an address ({@link CanonicalAddress#nodeOf}: {@code scheme://host[:port]} at the very start,
     * a query and one leading and trailing slash removed), for recognising {@code $cbs}; entity addresses are read
     * with {@link #canonical}.
     */
    public static String stripHost(String address) {
        return CanonicalAddress.nodeOf(address);
    }

    /**
     * The canonical path of an entity address, the one parse that both the grant check and the lookup read.
     *
     * @throws BrokerException (ARGUMENT) when the address does not canonicalise
     */
    public static String canonical(String address) {
        return CanonicalAddress.parse(address).path();
    }

    /** The error to report when a client is not authorised. */
    public static BrokerException unauthorized(String address, Right right) {
        String claim = right == Right.SEND ? "Send" : right == Right.LISTEN ? "Listen" : "Manage";
        return new BrokerException(ErrorKind.UNAUTHORIZED, "Unauthorized access. '" + claim
                + "' claim(s) are required to perform this operation. Resource: '" + address + "'.");
    }
}
