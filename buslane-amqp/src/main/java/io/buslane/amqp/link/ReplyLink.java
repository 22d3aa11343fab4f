package io.buslane.amqp.link;

import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Sender;
import org.apache.qpid.proton.engine.Session;
import org.apache.qpid.proton.message.Message;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;

/**
 * The broker-to-client link of a request/response pair ({@code $cbs} or {@code <entity>/$management}).
 * Responses are sent pre-settled; proton-j holds them until the client grants credit. Confined to the connection's
 * event loop.
 */
public final class ReplyLink implements LinkHandler {

    private final LinkContext connection;
    private final Sender sender;
    private long tag;

    public ReplyLink(LinkContext connection, Sender sender) {
        this.connection = connection;
        this.sender = sender;
    }

    public void open() {
        sender.setSource(sender.getRemoteSource());
        sender.setTarget(sender.getRemoteTarget());
        sender.setSenderSettleMode(sender.getRemoteSenderSettleMode());
        sender.setReceiverSettleMode(sender.getRemoteReceiverSettleMode());
        sender.setContext(this);
        sender.open();
    }

    public String targetAddress() {
        return sender.getRemoteTarget() instanceof Target t ? t.getAddress() : null;
    }

    public String sourceAddress() {
        return sender.getRemoteSource() instanceof Source s ? s.getAddress() : null;
    }

    public String name() {
        return sender.getName();
    }

    public Session session() {
        return sender.getSession();
    }

    /** Sends one response message. */
    public void send(Message response) {
        byte[] buffer = new byte[1024];
        int size;
        while (true) {
            try {
                size = response.encode(buffer, 0, buffer.length);
                break;
            } catch (BufferOverflowException e) {
                buffer = new byte[buffer.length * 4];
            }
        }
        byte[] tagBytes = ByteBuffer.allocate(8).putLong(tag++).array();
        Delivery d = sender.delivery(tagBytes);
        sender.send(buffer, 0, size);
        d.settle();
        sender.advance();
        connection.requestFlush();
    }
}
