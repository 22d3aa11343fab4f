package io.buslane.engine.txn;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.message.Message;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * The transactions of one connection (AMQP 1.0 §4.5 as Service Bus speaks it, wire protocol §8): declared on a
 * coordinator link, identified by a {@link TxnId} (the AMQP binary txn-id, converted by the front end) usable on
 * every link of the connection, discharged by commit or rollback. Every transaction rule lives here: the message
 * limit, the timeout, the one top-level entity, doom.
 *
 * <p>Work under a transaction is staged here, not applied: sends and settlements are kept until the commit hands
 * them to {@link TransactionWork#commit(TransactionalBatch)} (the engine's {@link TransactionCommit}) in one piece
 * (the settled messages stay locked meanwhile).
 * Rollback, the coordinator link detaching, the connection closing and the 2-minute timeout (counted from the first
 * operation, read from the injected clock) discard it. A transaction pins to the first top-level entity it touches;
 * work on another entity is refused unless it goes "via" the pinned entity (a send-via link, or a link on the
 * AMQP session of a coordinator: the cross-entity-transactions mode of the SDKs). At most 100 messages are sent per
 * transaction.
 *
 * <p>Messages scheduled with {@code schedule-message} under a transaction get their sequence numbers at once (the
 * answer carries them) and are stored at commit, like sends: before it they are invisible, and a rollback leaves
 * nothing to take back (the numbers are never used).
 *
 * <p>Confined to the connection's event loop.
 */
public final class Transactions {

    /** Messages a transaction may send (Service Bus quota). */
    public static final int MAX_MESSAGES = 100;
    /** A transaction times out this long after its first operation. */
    public static final long TIMEOUT_MS = 120_000;
    /**
     * Transactions one connection may hold open (declared, not discharged) at once; a {@code declare} beyond it is
     * refused with {@code amqp:resource-limit-exceeded}. The service documents no such number; an SDK holds one
     * per transaction scope, so this bounds only what a client can make the broker keep (docs/limits.md).
     */
    public static final int MAX_OPEN = 1_000;
    /**
     * A declared transaction that no operation has used for this long is forgotten when the connection next declares
     * one (its id is unknown from then on). The service starts a transaction's timeout at its first operation, so a
     * declared transaction must wait a while; it holds nothing, and a client that declares and walks away must not
     * make the broker keep it.
     */
    public static final long IDLE_DECLARED_MS = 10 * 60_000;

    static final String SPAN_TEXT = "Local transactions cannot span multiple top-level entities such as queue or "
            + "topic.";

    private enum State { ACTIVE, TIMED_OUT }

    private static final class Txn {
        final TxnId id;
        final String name;
        final Object owner;
        final long declaredAtMs;
        State state = State.ACTIVE;
        String pinKey;
        String pinName;
        long deadlineMs = Long.MAX_VALUE;
        long timer = -1;
        int messageCount;
        /** Why the transaction can only roll back (the first refused operation), or null. */
        String doomedBy;
        TransactionalBatch batch = new TransactionalBatch();

        Txn(TxnId id, String name, Object owner, long declaredAtMs) {
            this.id = id;
            this.name = name;
            this.owner = owner;
            this.declaredAtMs = declaredAtMs;
        }
    }

    /** What is known of an AMQP session: whether a coordinator is attached on it, and its first entity. */
    private static final class SessionInfo {
        boolean coordinator;
        String firstEntity;
    }

    private final TransactionWork work;
    private final Clock clock;
    private final String idPrefix;
    private final TimerScheduler timers;
    private final Map<String, Txn> txns = new LinkedHashMap<>();
    private final Map<Object, SessionInfo> sessions = new WeakHashMap<>();
    private long nextId;

    public Transactions(TransactionWork work, Clock clock, String idPrefix, TimerScheduler timers) {
        this.work = work;
        this.clock = clock;
        this.idPrefix = idPrefix;
        this.timers = timers;
    }

    // -------------------------------------------------------------------------------------------- declare/discharge

    /**
     * Declares a transaction owned by a coordinator link; returns its txn-id. Declared transactions that no operation
     * has used for {@link #IDLE_DECLARED_MS} are forgotten first.
     *
     * @throws TransactionFailure ({@code amqp:resource-limit-exceeded}) when {@link #MAX_OPEN} are open already
     */
    public TxnId declare(Object owner) {
        long now = clock.epochMillis();
        forgetIdleDeclared(now);
        if (txns.size() >= MAX_OPEN) {
            throw new TransactionFailure(ErrorKind.QUOTA_EXCEEDED.amqpCondition(), "The connection has "
                    + MAX_OPEN + " open transactions, the most it may hold; discharge one before declaring another.");
        }
        String name = idPrefix + (++nextId);
        TxnId id = TxnId.ofName(name);
        txns.put(name, new Txn(id, name, owner, now));
        return id;
    }

    /** Drops the declared, never used transactions older than the idle limit (the map is in declaration order). */
    private void forgetIdleDeclared(long now) {
        Iterator<Txn> it = txns.values().iterator();
        while (it.hasNext()) {
            Txn t = it.next();
            if (now - t.declaredAtMs < IDLE_DECLARED_MS) {
                return;
            }
            if (t.pinKey == null && t.state == State.ACTIVE && t.batch.isEmpty() && t.doomedBy == null) {
                it.remove();
            }
        }
    }

    /**
     * Discharges a transaction: {@code fail=true} rolls it back, {@code false} commits it. The returned future
     * fails with a {@link TransactionFailure}: unknown-id, timeout, or rollback when the commit could not be
     * applied (nothing of it was then applied on the entity it is pinned to). The id is unknown from now on.
     */
    public CompletableFuture<Void> discharge(TxnId id, boolean fail) {
        String name = name(id);
        Txn t = txns.get(name);
        if (t == null) {
            return CompletableFuture.failedFuture(unknown(name));
        }
        if (t.state == State.ACTIVE && clock.epochMillis() >= t.deadlineMs) {
            expire(t);
        }
        txns.remove(name);
        if (t.state == State.TIMED_OUT) {
            return CompletableFuture.failedFuture(timedOut(t));
        }
        cancelTimer(t);
        if (fail) {
            discard(t);
            return CompletableFuture.completedFuture(null);
        }
        if (t.doomedBy != null) {
            discard(t);
            return CompletableFuture.failedFuture(new TransactionFailure(TransactionFailure.ROLLBACK, "The "
                    + "transaction was rolled back because an operation in it failed: " + t.doomedBy));
        }
        if (t.batch.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        TransactionalBatch batch = t.batch;
        return work.commit(batch).handle((v, failure) -> {
            if (failure == null) {
                return null;
            }
            throw new CompletionException(new TransactionFailure(TransactionFailure.ROLLBACK, "The transaction "
                    + "was rolled back because its work could not be applied: " + describe(failure)));
        });
    }

    /** The coordinator link (or the connection) closed: its open transactions roll back. */
    public void ownerClosed(Object owner) {
        Iterator<Txn> it = txns.values().iterator();
        while (it.hasNext()) {
            Txn t = it.next();
            if (t.owner == owner) {
                it.remove();
                cancelTimer(t);
                if (t.state == State.ACTIVE) {
                    discard(t);
                }
            }
        }
    }

    /** Number of declared transactions not yet discharged (timed-out ones included until discharged). */
    public int openCount() {
        return txns.size();
    }

    // ------------------------------------------------------------------------------------------------ sessions

    /** A coordinator link attached on {@code session}: its links work in cross-entity mode. */
    public void coordinatorAttached(Object session) {
        sessions.computeIfAbsent(session, k -> new SessionInfo()).coordinator = true;
    }

    /**
     * A sender or receiver link on {@code entityPath} is attaching on {@code session}. On a session that carries a
     * coordinator (cross-entity mode) the first entity becomes the via entity, and a receiver on any other
     * top-level entity is refused, as Service Bus does.
     */
    public void linkAttaching(Object session, String entityPath, boolean receiver) {
        SessionInfo info = sessions.computeIfAbsent(session, k -> new SessionInfo());
        String key = topLevel(entityPath);
        if (info.firstEntity == null) {
            info.firstEntity = entityPath;
            return;
        }
        if (receiver && info.coordinator && !topLevel(info.firstEntity).equals(key)) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, SPAN_TEXT + " This connection uses cross-entity "
                    + "transactions and is bound to '" + topLevelName(info.firstEntity) + "'; a receiver on '"
                    + entityPath + "' is not allowed.");
        }
    }

    /** The via entity of links on {@code session} in cross-entity mode, or null. */
    public String sessionVia(Object session) {
        SessionInfo info = sessions.get(session);
        return info != null && info.coordinator && info.firstEntity != null ? topLevelName(info.firstEntity) : null;
    }

    // ------------------------------------------------------------------------------------------------ staging

    /**
     * Stages messages sent to {@code destination} under a transaction, through {@code via} when not null (a send-via
     * link or a cross-entity session).
     *
     * @throws TransactionFailure when the transaction is unknown or timed out, spans entities, or would exceed
     *                            {@value #MAX_MESSAGES} messages
     */
    public void stageSend(TxnId id, String via, String destination, List<Message> messages) {
        Txn t = live(id);
        try {
            touch(t, via != null ? via : destination);
            count(t, messages.size());
        } catch (TransactionFailure f) {
            throw doom(t, f);
        }
        boolean through = via != null && !topLevel(via).equals(topLevel(destination));
        t.batch.addSend(destination, messages, through ? topLevelName(via) : null);
    }

    /** Stages a settlement under a transaction; the message stays locked until the commit. */
    public void stageSettlement(TxnId id, String via, TransactionalBatch.Settle settle) {
        Txn t = live(id);
        String entity = settle.address().entityPath();
        try {
            if (via != null && !topLevel(via).equals(topLevel(entity))) {
                throw span(topLevelName(via), entity);
            }
            touch(t, entity);
        } catch (TransactionFailure f) {
            throw doom(t, f);
        }
        t.batch.addSettlement(settle);
    }

    /**
     * Checks and counts messages about to be scheduled under a transaction ({@code schedule-message}); call
     * {@link #scheduled} with them and their sequence numbers once they are numbered.
     */
    public void beforeSchedule(TxnId id, String via, String destination, int count) {
        Txn t = live(id);
        try {
            touch(t, via != null ? via : destination);
            count(t, count);
        } catch (TransactionFailure f) {
            throw doom(t, f);
        }
    }

    /**
     * An operation under the transaction was refused (here or by the link, e.g. an undecodable or oversized
     * transfer): the transaction can now only roll back, and a commit reports {@code amqp:transaction:rollback}
     * with this reason. The Java SDK ignores the outcome of transactional transfers, so this is where such a
     * failure surfaces for it. Unknown or timed-out ids are ignored.
     */
    public void doom(TxnId id, String reason) {
        Txn t = txns.get(name(id));
        if (t != null && t.state == State.ACTIVE && t.doomedBy == null) {
            t.doomedBy = reason;
        }
    }

    private static TransactionFailure doom(Txn t, TransactionFailure f) {
        if (t.doomedBy == null) {
            t.doomedBy = f.description();
        }
        return f;
    }

    /**
     * Messages were numbered for scheduling under a transaction: they are stored when it commits. A transaction
     * discharged (or timed out) meanwhile cannot commit any more: nothing is staged.
     */
    public void scheduled(TxnId id, String destination, List<Message> messages, long[] sequenceNumbers) {
        scheduled(id, null, destination, messages, sequenceNumbers);
    }

    /**
     * As {@link #scheduled(TxnId, String, List, long[])}, through {@code via} when not null: a message scheduled
     * for another entity than the via one is parked in the via entity at commit, as a send-via message is, so the
     * commit stays one durable decision on the via entity's shard.
     */
    public void scheduled(TxnId id, String via, String destination, List<Message> messages,
                          long[] sequenceNumbers) {
        Txn t = txns.get(name(id));
        if (t == null || t.state != State.ACTIVE) {
            return;
        }
        boolean through = via != null && !topLevel(via).equals(topLevel(destination));
        for (int i = 0; i < sequenceNumbers.length; i++) {
            t.batch.addSchedule(new TransactionalBatch.Schedule(destination, messages.get(i), sequenceNumbers[i],
                    through ? topLevelName(via) : null));
        }
    }

    /**
     * Stages the cancellation of scheduled messages of {@code destination} ({@code cancel-scheduled-message}
     * under a transaction): they are cancelled at commit and stay scheduled on rollback, as on the service. Only
     * the transaction's own entity: a cancel through a via entity of another one is refused (not supported here).
     */
    public void stageCancel(TxnId id, String via, String destination, long[] sequenceNumbers) {
        Txn t = live(id);
        try {
            if (via != null && !topLevel(via).equals(topLevel(destination))) {
                throw new TransactionFailure(ErrorKind.INVALID_OPERATION.amqpCondition(), SPAN_TEXT + " Cancelling "
                        + "a scheduled message of '" + destination + "' in a transaction bound to '"
                        + topLevelName(via) + "' is not supported; cancel it outside the transaction.");
            }
            touch(t, destination);
        } catch (TransactionFailure f) {
            throw doom(t, f);
        }
        t.batch.addCancel(new TransactionalBatch.Cancel(destination, sequenceNumbers));
    }

    /**
     * The transaction {@code id} as seen by {@code $management} requests of a link whose via entity is {@code via}
     * (or null); {@code toLoop} runs a task on the connection's loop (for completions arriving from the engine).
     */
    public TransactionScope scope(TxnId id, String via, Consumer<Runnable> toLoop) {
        return new TransactionScope() {
            @Override
            public void stageSettlement(TransactionalBatch.Settle settle) {
                Transactions.this.stageSettlement(id, via, settle);
            }

            @Override
            public void beforeSchedule(String entityPath, int count) {
                Transactions.this.beforeSchedule(id, via, entityPath, count);
            }

            @Override
            public void scheduled(String entityPath, List<Message> messages, long[] sequenceNumbers) {
                toLoop.accept(() -> Transactions.this.scheduled(id, via, entityPath, messages, sequenceNumbers));
            }

            @Override
            public void stageCancel(String entityPath, long[] sequenceNumbers) {
                Transactions.this.stageCancel(id, via, entityPath, sequenceNumbers);
            }
        };
    }

    // ------------------------------------------------------------------------------------------------ internals

    private Txn live(TxnId id) {
        String name = name(id);
        Txn t = txns.get(name);
        if (t == null) {
            throw unknown(name);
        }
        if (t.state == State.ACTIVE && clock.epochMillis() >= t.deadlineMs) {
            expire(t);
        }
        if (t.state == State.TIMED_OUT) {
            throw timedOut(t);
        }
        return t;
    }

    private void touch(Txn t, String entityPath) {
        String key = topLevel(entityPath);
        if (t.pinKey == null) {
            t.pinKey = key;
            t.pinName = topLevelName(entityPath);
            t.deadlineMs = clock.epochMillis() + TIMEOUT_MS;
            armTimer(t, TIMEOUT_MS);
        } else if (!t.pinKey.equals(key)) {
            throw span(t.pinName, entityPath);
        }
    }

    private static void count(Txn t, int n) {
        if (t.messageCount + n > MAX_MESSAGES) {
            throw new TransactionFailure(ErrorKind.QUOTA_EXCEEDED.amqpCondition(), "Cannot send more than "
                    + MAX_MESSAGES + " messages in a single transaction.");
        }
        t.messageCount += n;
    }

    private void armTimer(Txn t, long delayMs) {
        t.timer = timers.schedule(Math.max(1, delayMs), () -> onTimer(t));
    }

    private void onTimer(Txn t) {
        t.timer = -1;
        if (txns.get(t.name) != t || t.state != State.ACTIVE) {
            return;
        }
        long left = t.deadlineMs - clock.epochMillis();
        if (left > 0) {
            armTimer(t, left);
        } else {
            expire(t);
        }
    }

    private void cancelTimer(Txn t) {
        if (t.timer >= 0) {
            timers.cancel(t.timer);
            t.timer = -1;
        }
    }

    /** Times a transaction out: its work is discarded now; its id answers timeout until discharged. */
    private void expire(Txn t) {
        t.state = State.TIMED_OUT;
        cancelTimer(t);
        discard(t);
    }

    private void discard(Txn t) {
        t.batch = new TransactionalBatch();
    }

    private static String name(TxnId id) {
        return id == null ? "" : id.name();
    }

    private static TransactionFailure unknown(String name) {
        return new TransactionFailure(TransactionFailure.UNKNOWN_ID, "The transaction '" + name + "' is unknown: "
                + "it was not declared on this connection, or it has already been discharged or rolled back.");
    }

    private static TransactionFailure timedOut(Txn t) {
        return new TransactionFailure(TransactionFailure.TIMEOUT, "The transaction '" + t.name + "' has timed out: "
                + "a transaction must be discharged within " + (TIMEOUT_MS / 1000) + " seconds of its first "
                + "operation. Its work has been discarded.");
    }

    private static TransactionFailure span(String pinned, String other) {
        return new TransactionFailure(ErrorKind.INVALID_OPERATION.amqpCondition(), SPAN_TEXT + " The transaction "
                + "is bound to '" + pinned + "'; '" + other + "' is a different entity.");
    }

    /** The case-insensitive key of the top-level entity (queue or topic) of a path. */
    static String topLevel(String path) {
        return topLevelName(path).toLowerCase(Locale.ROOT);
    }

    private static String topLevelName(String path) {
        EntityAddress a = EntityAddress.parse(path);
        return a == null ? path : a.entityPath();
    }

    private static String describe(Throwable failure) {
        Throwable c = failure;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        return c instanceof BrokerException be ? be.description() : String.valueOf(c);
    }
}
