package io.buslane.management.console;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.management.Await;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;

/**
 * Locks one message picked by sequence number, as a person browsing a queue picks it, then settles it. Deferred
 * messages are locked with receive-by-sequence-number; an active message is found the way Service Bus Explorer
 * finds it: a peek-lock receiver takes messages in batches until the wanted one arrives, and the others are
 * released (without counting a delivery) once the wanted one has been settled. Messages of a session are looked
 * for through a receiver on that session, which must not be held by anyone else. Called on worker threads.
 */
final class MessageLocker {

    /** The most messages taken (and held) while looking for the wanted one. */
    static final int MAX_SCANNED = 5000;
    private static final int BATCH = 100;

    private final Engine engine;

    MessageLocker(Engine engine) {
        this.engine = engine;
    }

    /** A message locked for {@link #withLocked}. */
    record Locked(EntityAddress address, ReceivedMessage message) {
    }

    /**
     * Locks the message with {@code sequenceNumber} in the addressed (sub-)queue, runs {@code action} on it (which
     * must settle it), and releases whatever else was locked on the way.
     *
     * @throws BrokerException MESSAGE_NOT_FOUND when no such message is there, or it is scheduled, or it is locked
     */
    <T> T withLocked(EntityAddress address, long sequenceNumber, Function<Locked, T> action) {
        List<ReceivedMessage> peeked = Await.result(engine.peek(address, sequenceNumber, 1, null));
        if (peeked.isEmpty() || peeked.get(0).sequenceNumber() != sequenceNumber) {
            throw notFound(sequenceNumber);
        }
        ReceivedMessage found = peeked.get(0);
        if (found.state() == MessageState.SCHEDULED) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "Message " + sequenceNumber
                    + " is scheduled; cancel it instead.");
        }
        String sessionId = engine.requiresSession(address) ? found.sessionId() : null;
        Sink sink = new Sink();
        Receiver receiver = null;
        List<ReceivedMessage> held = new ArrayList<>();
        try {
            if (sessionId != null) {
                receiver = Await.result(engine.acceptSession(address, sessionId, ReceiveMode.PEEK_LOCK, 0, sink));
            }
            ReceivedMessage target;
            if (found.state() == MessageState.DEFERRED) {
                List<ReceivedMessage> got = Await.result(engine.receiveDeferred(address, new long[] {sequenceNumber},
                        ReceiveMode.PEEK_LOCK, sessionId, null));
                if (got.isEmpty()) {
                    throw notFound(sequenceNumber);
                }
                target = got.get(0);
            } else {
                if (receiver == null) {
                    receiver = engine.createReceiver(address, ReceiveMode.PEEK_LOCK, sink);
                }
                target = scan(receiver, sink, sequenceNumber, held);
            }
            return action.apply(new Locked(address, target));
        } finally {
            ReceivedMessage late;
            while ((late = sink.messages.poll()) != null) {
                held.add(late);
            }
            List<CompletableFuture<Void>> releases = new ArrayList<>();
            for (ReceivedMessage other : held) {
                releases.add(engine.release(address, other.lockToken()).exceptionally(e -> null));
            }
            Await.result(CompletableFuture.allOf(
                    releases.toArray(new CompletableFuture[0])));
            if (receiver != null) {
                receiver.close();
            }
        }
    }

    private ReceivedMessage scan(Receiver receiver, Sink sink, long sequenceNumber, List<ReceivedMessage> held) {
        while (held.size() < MAX_SCANNED) {
            if (sink.closed != null) {
                throw sink.closed;
            }
            receiver.addCredit(BATCH);
            Await.result(receiver.drain());
            ReceivedMessage m;
            int got = 0;
            ReceivedMessage target = null;
            while ((m = sink.messages.poll()) != null) {
                got++;
                if (m.sequenceNumber() == sequenceNumber && target == null) {
                    target = m;
                } else {
                    held.add(m);
                }
            }
            if (target != null) {
                return target;
            }
            if (got == 0) {
                break;
            }
        }
        throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "Message " + sequenceNumber
                + " could not be locked: it is locked by a receiver, or gone.");
    }

    private static BrokerException notFound(long sequenceNumber) {
        return new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "No message with sequence number " + sequenceNumber
                + " exists.");
    }

    private static final class Sink implements DeliverySink {
        final ConcurrentLinkedQueue<ReceivedMessage> messages = new ConcurrentLinkedQueue<>();
        volatile BrokerException closed;

        @Override
        public void onMessage(Receiver receiver, ReceivedMessage message) {
            messages.add(message);
        }

        @Override
        public void onClosed(Receiver receiver, BrokerException error) {
            closed = error;
        }
    }
}
