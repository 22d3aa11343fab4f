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
import io.buslane.engine.persist.Storage;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/** Operations on a session by id: its lock, its state, and the list of sessions of an entity. */
public final class SessionStates {

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Clock clock;
    private final Storage storage;

    public SessionStates(Namespace namespace, PartitionDirectory directory, Clock clock, Storage storage) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
        this.storage = storage;
    }

    /**
     * Runs the session operation {@code op} makes on the session's partition here (for {@code by}, the receiver
     * attached here, or null), or carries it to the node serving the partition when {@code carried}.
     */
    private <T> CompletableFuture<T> onSession(EntityAddress address, String sessionId, boolean carried,
                                               IntFunction<PartitionOp.OnSubQueue<T>> op, Receiver by) {
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
            PartitionOp.OnSubQueue<T> value = op.apply(ref.partition().index());
            Supplier<T> local = () -> value.apply(Source.subQueue(ref, address),
                    ref.shard().nowMs(), by);
            return carried ? directory.call(ref, () -> value, local) : ref.shard().call(local);
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
        return onSession(address, sessionId, carried(by), i -> new PartitionOp.RenewSessionLock(address.toString(), i,
                sessionId, holderOf(by)), by);
    }

    /**
     * Whether a session operation for {@code by} may be carried to the node serving the session: for any holder
     * (null), or (cluster mode) for the holder the owner keeps for a receiver attached here; not for a local
     * receiver, whose session is here.
     */
    private static boolean carried(Receiver by) {
        return by == null || by.remoteSessionHolder() != null;
    }

    /** The owner's holder a carried operation is for: the remote session holder of {@code by}, or null for any. */
    private static UUID holderOf(Receiver by) {
        return by == null ? null : by.remoteSessionHolder();
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
        return onSession(address, sessionId, carried(by), i -> new PartitionOp.CheckSessionLocked(
                address.toString(), i, sessionId, holderOf(by)), by);
    }

    /** The session's state (null when it has none). */
    public CompletableFuture<byte[]> getSessionState(EntityAddress address, String sessionId) {
        return onSession(address, sessionId, true, i -> new PartitionOp.GetSessionState(address.toString(), i,
                sessionId), null);
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
        return onSession(address, sessionId, true, i -> new PartitionOp.SetSessionState(address.toString(), i,
                sessionId, state), null);
    }

    private static PartitionOp.ListSessions listOp(EntityAddress address, int partition, long since, int max,
                                                   String after) {
        return new PartitionOp.ListSessions(address.toString(), partition, since, max, after);
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
            PartitionRef[] refs = source.partitions();
            return directory.onAll(refs, i -> listOp(address, i, stateUpdatedSinceMs, perPartition, after),
                    p -> listOp(address, p.index(), stateUpdatedSinceMs, perPartition, after).apply(p))
                    .thenApply(lists -> {
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
    private final Map<String, String> cursors = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > 4096;
                }
            });
}
