package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** Operations on a session by id: its lock, its state, and the list of sessions of an entity. */
public final class SessionStates {

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Clock clock;
    private final Storage storage;
    /** Cluster mode: the session holders this node keeps for receivers on other nodes, by id. */
    private final java.util.function.Function<java.util.UUID, io.buslane.engine.partition.ConsumerHandle> holders;

    public SessionStates(Namespace namespace, PartitionDirectory directory, Clock clock, Storage storage,
                         java.util.function.Function<java.util.UUID, io.buslane.engine.partition.ConsumerHandle>
                                 holders) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
        this.storage = storage;
        this.holders = holders;
    }

    private <T> CompletableFuture<T> onSession(EntityAddress address, String sessionId,
                                               Function<SubQueueState, T> action) {
        return onSession(address, sessionId, null, action);
    }

    /** As above; {@code op} (when not null) carries it to the node serving the session's partition. */
    private <T> CompletableFuture<T> onSession(EntityAddress address, String sessionId,
                                               java.util.function.IntFunction<PartitionOp> op,
                                               Function<SubQueueState, T> action) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            if (sessionId == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "A session id is required.");
            }
            if (!source.requiresSession()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, "The entity '" + address
                        + "' does not require sessions: session operations (session state, session lock) are not "
                        + "allowed on it.");
            }
            PartitionRef ref = directory.forSession(source.partitions(), sessionId);
            if (op == null) {
                return ref.shard().call(() -> action.apply(Source.subQueue(ref, address)));
            }
            return directory.call(ref, () -> op.apply(ref.partition().index()),
                    () -> action.apply(Source.subQueue(ref, address)));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Renews a session's lock.
     *
     * @param by the receiver that must hold the lock (the request's associated link), or null for any holder
     */
    public CompletableFuture<Long> renewSessionLock(EntityAddress address, String sessionId, Receiver by) {
        return onSession(address, sessionId, carried(PartitionOp.Kind.RENEW_SESSION_LOCK, address, sessionId, by),
                q -> q.renewSessionLock(sessionId, q.partition().ctxNowMs(), by));
    }

    /**
     * How a session operation is carried to the node serving the session: for any holder, or (cluster mode) for
     * the holder the owner keeps for a receiver attached here; null for a local receiver, whose session is here.
     */
    private static java.util.function.IntFunction<PartitionOp> carried(PartitionOp.Kind kind, EntityAddress address,
                                                                       String sessionId, Receiver by) {
        if (by == null) {
            return i -> sessionOp(kind, address, i, sessionId, null);
        }
        java.util.UUID holder = by.remoteSessionHolder();
        return holder == null ? null : i -> sessionOp(kind, address, i, sessionId, null)
                .withLock(holder, null, null, null);
    }

    /**
     * Completes while the session is locked by a session receiver, else fails with SESSION_LOCK_LOST: Service Bus
     * refuses a session receiver's get/set-session-state once its session lock is lost. Entities without sessions
     * pass, so that the state operation reports its own error (session operations are not allowed on them).
     *
     * @param by the receiver that must hold the lock (the request's associated link), or null for any holder
     */
    public CompletableFuture<Void> checkSessionLocked(EntityAddress address, String sessionId, Receiver by) {
        try {
            if (sessionId == null || !(Source.of(namespace, address, clock.epochMillis()).requiresSession()
                    && address.subQueue() == SubQueue.MAIN)) {
                return CompletableFuture.completedFuture(null);
            }
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
        return onSession(address, sessionId, carried(PartitionOp.Kind.CHECK_SESSION_LOCKED, address, sessionId, by),
                q -> {
            q.sessionLockedUntil(sessionId, q.partition().ctxNowMs(), by);
            return null;
        });
    }

    /** The session's state (null when it has none). */
    public CompletableFuture<byte[]> getSessionState(EntityAddress address, String sessionId) {
        return onSession(address, sessionId, i -> sessionOp(PartitionOp.Kind.GET_SESSION_STATE, address, i,
                sessionId, null), q -> q.getSessionState(sessionId));
    }

    /** Sets the session's state; null clears it. The state may be as large as the entity's largest message. */
    public CompletableFuture<Void> setSessionState(EntityAddress address, String sessionId, byte[] state) {
        if (state != null && address != null) {
            try {
                storage.requireFreeSpace(clock.monotonicNanos());
            } catch (BrokerException e) {
                return CompletableFuture.failedFuture(e);
            }
            long max = maxReceivableMessageBytes(address);
            if (state.length > max) {
                return CompletableFuture.failedFuture(new BrokerException(ErrorKind.MESSAGE_SIZE_EXCEEDED,
                        "The session state (" + state.length + " bytes) exceeds the maximum message size of the "
                                + "entity (" + max + " bytes)."));
            }
        }
        return onSession(address, sessionId, i -> sessionOp(PartitionOp.Kind.SET_SESSION_STATE, address, i,
                sessionId, state), q -> {
            q.setSessionState(sessionId, state, q.partition().ctxNowMs());
            return null;
        });
    }

    private static PartitionOp sessionOp(PartitionOp.Kind kind, EntityAddress address, int partition,
                                         String sessionId, byte[] state) {
        return PartitionOp.of(kind, address.toString(), partition).withSession(sessionId, state, null);
    }

    /**
     * The owner's side of a session operation another node carried here, for any holder of the session lock: the
     * same engine code on the named partition; refused with SERVER_BUSY (never carried on) when this node does not
     * serve it.
     */
    public CompletableFuture<Object> runHere(PartitionOp op) {
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = Source.partition(source, op.partition());
            if (op.kind() == PartitionOp.Kind.LIST_SESSIONS) {
                return ref.shard().call(() -> sessionIdsOf(ref.partition(), address, op.sequences()[0],
                        op.sessionId(), op.max()));
            }
            String id = op.sessionId();
            io.buslane.engine.partition.ConsumerHandle holder = holders.apply(op.lockToken());
            return ref.shard().call(() -> {
                SubQueueState q = Source.subQueue(ref, address);
                long now = q.partition().ctxNowMs();
                switch (op.kind()) {
                    case GET_SESSION_STATE -> {
                        return q.getSessionState(id);
                    }
                    case SET_SESSION_STATE -> q.setSessionState(id, op.state(), now);
                    case RENEW_SESSION_LOCK -> {
                        return q.renewSessionLock(id, now, holder);
                    }
                    case CHECK_SESSION_LOCKED -> q.sessionLockedUntil(id, now, holder);
                    default -> throw new BrokerException(ErrorKind.INTERNAL, "Not a session operation: "
                            + op.kind());
                }
                return null;
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static List<String> sessionIdsOf(io.buslane.engine.partition.Partition p, EntityAddress address,
                                             long since, String after, int limit) {
        SubQueueState main = address.subscription() == null ? p.queue() : p.subscription(address.subscription());
        return main == null ? List.<String>of() : main.sessionIds(since, after, limit);
    }

    private long maxReceivableMessageBytes(EntityAddress address) {
        QueueEntity q = address.subscription() == null ? namespace.queue(address.entityPath()) : null;
        if (q != null) {
            return (long) q.properties().maxMessageSizeInKilobytes() * 1024;
        }
        TopicEntity t = namespace.topic(address.entityPath());
        return t == null ? Long.MAX_VALUE : (long) t.properties().maxMessageSizeInKilobytes() * 1024;
    }

    /**
     * Ids of sessions in id order, as the service lists them: with {@code stateUpdatedSinceMs}
     * {@link io.buslane.engine.Engine#ALL_ACTIVE_SESSIONS} every session with messages or state, otherwise the
     * sessions whose state was written at or after that time. A page starts after {@code lastSessionId} when it is
     * given (the id ending the previous page), else after {@code skip} ids; it holds at most {@code top} ids.
     */
    public CompletableFuture<List<String>> listSessions(EntityAddress address, long stateUpdatedSinceMs, int skip,
                                                        int top, String lastSessionId) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            int pageSize = Math.max(top, 0);
            int from = Math.max(skip, 0);
            String cursorKey = address + "|" + stateUpdatedSinceMs + "|";
            // paging by skip: continue from where the page that ended at this skip stopped, when it was asked for
            String after = lastSessionId != null ? lastSessionId
                    : from > 0 ? cursors.get(cursorKey + from) : null;
            int dropFirst = after != null || lastSessionId != null ? 0 : from;
            long want = (long) dropFirst + pageSize;
            int perPartition = (int) Math.min(Integer.MAX_VALUE, want);
            return directory.onAll(source.partitions(), i -> PartitionOp.of(PartitionOp.Kind.LIST_SESSIONS,
                    address.toString(), i).withSequences(new long[] {stateUpdatedSinceMs}, perPartition)
                    .withSession(after, null, null), p -> sessionIdsOf(p, source.address(), stateUpdatedSinceMs,
                    after, perPartition)).thenApply(lists -> {
                List<String> merged = new ArrayList<>();
                lists.forEach(merged::addAll);
                merged.sort(null); // at most partitions x (skip + top) ids, each partition's already in order
                int start = Math.min(dropFirst, merged.size());
                int stop = (int) Math.min(merged.size(), (long) start + pageSize);
                List<String> page = new ArrayList<>(merged.subList(start, stop));
                if (lastSessionId == null && !page.isEmpty()) {
                    cursors.put(cursorKey + (from + page.size()), page.get(page.size() - 1));
                }
                return page;
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Where pages asked for by skip and top stopped: "entity|since|skip" to the last id of the page that ended
     * there, so that the next page (skip + top) walks on from that id instead of skipping again from the first
     * session. A few thousand entries at most, the oldest dropped first.
     */
    private final java.util.Map<String, String> cursors = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(java.util.Map.Entry<String, String> eldest) {
                    return size() > 4096;
                }
            });
}
