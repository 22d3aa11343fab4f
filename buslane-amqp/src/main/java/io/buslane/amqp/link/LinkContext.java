package io.buslane.amqp.link;

import io.buslane.amqp.mgmt.ManagementProcessor;
import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.Grants;
import io.buslane.common.auth.Right;
import io.buslane.engine.Engine;
import io.buslane.engine.txn.Transactions;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Session;

import java.util.concurrent.CompletableFuture;

/**
 * What a link handler may ask of its connection: the engine and the connection's transactions, its grants and
 * clock, and running work on the connection's event loop. The connection ({@code AmqpConnection}) implements it;
 * links know nothing else of the transport, so the wire pump and the link handlers can be tested and changed apart.
 * Every method is called on the connection's event loop, but {@link #runOnLoop}, which any thread may call.
 */
public interface LinkContext {

    /** The engine every link talks to. */
    Engine engine();

    /** The {@code $management} operations. */
    ManagementProcessor management();

    /**
     * The engine receiver behind this connection's open receive link (a client receiver) named {@code linkName}, or
     * null when no such link is open: resolves the {@code associated-link-name} of a {@code $management} request.
     * A link whose attach is still being answered (a session being accepted) completes once it is decided.
     */
    // CHECKSTYLE:FQN proton's Receiver is imported
    CompletableFuture<io.buslane.engine.receive.Receiver> receiverOfLink(String linkName);

    /** Validates the tokens put on {@code $cbs}. */
    CbsAuthorizer authorizer();

    /** What this connection has been granted. */
    Grants grants();

    /** The transactions declared on this connection (AMQP txn-ids convert through {@link CoordinatorLink}). */
    Transactions transactions();

    /** Now, from the connection's clock (epoch ms). */
    long nowMs();

    /** The connection's id (for logs). */
    long id();

    /** Runs {@code action} on the connection's event loop, then flushes. Thread-safe. */
    void runOnLoop(Runnable action);

    /** Writes pending output soon (coalesced). */
    void requestFlush();

    /** True when the connection holds a token (or auth is off) allowing {@code right} on {@code address}. */
    boolean allowed(String address, Right right);

    /** True once the connection holds a token (or SASL credential), or when authentication is off. */
    boolean authenticated();

    /** A token was put: re-arms the check of the earliest token expiry. */
    void grantsChanged();

    /**
     * True while wrong credentials for {@code keyName} from this connection's address are refused for too many
     * failures (a valid credential is checked first and never refused).
     */
    boolean authThrottled(String keyName);

    /** Counts a failed authentication for {@code keyName} against this connection's address. */
    void authFailed(String keyName);

    /** The reply link for a request: by target address, else by link name, else by node within the session. */
    ReplyLink findReplyLink(String replyTo, Session session, String nodeAddress);

    /**
     * Detaches a sender's link whose unfinished delivery has grown past {@code max} bytes, with
     * {@code amqp:link:message-size-exceeded}, and drops what it holds.
     */
    void closeLinkForOversizedMessage(Receiver receiver, Delivery delivery, long max);
}
