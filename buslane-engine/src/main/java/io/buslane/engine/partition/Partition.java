package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One partition of a queue or topic: its sequence counter, its scheduled messages, and the sub-queues that hold
 * its messages (a queue's own, or every subscription's copy for a topic; a topic partition and all its
 * subscriptions belong to one owner so fan-out is one atomic batch of records). The single writer is the owning
 * shard. Confined to its shard thread. Its scheduling ({@link PartitionSchedule}) and its forwarding and transfers
 * ({@link PartitionTransfers}) are sections of their own.
 */
public final class Partition {

    /** The error text of a message without a SessionId sent to an entity that requires sessions. */
    public static final String SESSION_REQUIRED_TEXT = "The SessionId was not set on a message, and it cannot be sent "
            + "to the entity. Entities that have session support enabled can only receive messages that have the "
            + "SessionId set to a valid value.";

    final long entityId;
    final String entityPath;
    final int index;
    final boolean partitioned;
    final boolean topic;
    final SequenceCounter sequence;
    final PartitionContext ctx;
    final SeqIndex<ScheduledEntry> scheduled = new SeqIndex<>();
    /** For a queue: its main sub-queue. Null for a topic. */
    final SubQueueState queue;
    /** For a topic: subscription main sub-queues by lower-case name, in creation order. */
    final Map<String, SubQueueState> subscriptions = new LinkedHashMap<>();
    private long recordId;
    private long timeToLiveMs;
    private long maxSizeBytes;
    private long lockExpiries;
    /** Duplicate detection by MessageId (null: off) and the transfer keys of forwarded messages (lazy). */
    private DedupWindow duplicates;
    private DedupWindow transferKeys;
    /** Auto-forwarding and the messages waiting to be forwarded (section). */
    final PartitionTransfers transfers = new PartitionTransfers(this);
    /** Scheduling of messages (section). */
    final PartitionSchedule scheduling = new PartitionSchedule(this);

    private Partition(long entityId, String entityPath, int index, boolean partitioned, boolean topic,
                      PartitionContext ctx, QueueSettings queueSettings, long timeToLiveMs, long maxSizeBytes) {
        this.entityId = entityId;
        this.entityPath = entityPath;
        this.index = index;
        this.partitioned = partitioned;
        this.topic = topic;
        this.ctx = ctx;
        this.sequence = new SequenceCounter(partitioned, index, 1);
        this.timeToLiveMs = timeToLiveMs;
        this.maxSizeBytes = maxSizeBytes;
        this.queue = topic ? null : new SubQueueState(this, SubQueue.MAIN, entityId, queueSettings);
    }

    /** A partition of a queue. */
    public static Partition forQueue(long entityId, int index, boolean partitioned, QueueSettings settings,
                                     PartitionContext ctx) {
        return new Partition(entityId, settings.entityPath(), index, partitioned, false, ctx, settings,
                settings.timeToLiveMs(), settings.maxSizeBytes());
    }

    /** A partition of a topic (subscriptions are added with {@link #addSubscription}). */
    public static Partition forTopic(long entityId, String topicPath, int index, boolean partitioned,
                                     long timeToLiveMs, long maxSizeBytes, PartitionContext ctx) {
        return new Partition(entityId, topicPath, index, partitioned, true, ctx, null, timeToLiveMs,
                maxSizeBytes);
    }

    // ------------------------------------------------------------------------------------------------ accessors

    public long entityId() {
        return entityId;
    }

    public String entityPath() {
        return entityPath;
    }

    public int index() {
        return index;
    }

    public boolean isTopic() {
        return topic;
    }

    public long recordId() {
        return recordId;
    }

    public void setRecordId(long recordId) {
        this.recordId = recordId;
    }

    public SequenceCounter sequence() {
        return sequence;
    }

    /** The owning shard's cycle time. */
    public long ctxNowMs() {
        return ctx.nowMs();
    }

    public long lockExpiries() {
        return lockExpiries;
    }

    void lockExpired() {
        lockExpiries++;
        ctx.onLockExpired(); // ops (metrics)
    }

    /** The queue's main sub-queue (queues only). */
    public SubQueueState queue() {
        return queue;
    }

    /** A subscription's main sub-queue, or null. */
    public SubQueueState subscription(String name) {
        return subscriptions.get(name.toLowerCase(Locale.ROOT));
    }

    public Collection<SubQueueState> subscriptions() {
        return subscriptions.values();
    }

    /** Adds a subscription's sub-queues to this topic partition. */
    public SubQueueState addSubscription(String name, long subscriptionEntityId, QueueSettings settings,
                                         List<RuleProperties> rules) {
        SubQueueState s = new SubQueueState(this, SubQueue.MAIN, subscriptionEntityId, settings);
        s.setRules(rules);
        subscriptions.put(name.toLowerCase(Locale.ROOT), s);
        return s;
    }

    /** Removes a subscription and logs the removal of every message it held. */
    public void removeSubscription(String name) {
        SubQueueState s = subscriptions.remove(name.toLowerCase(Locale.ROOT));
        if (s != null) {
            dropAll(s);
            SubQueueState heir = viaOwner(null);
            for (Transfer t : new ArrayList<>(transfers.transfers.values())) {
                if (t.owner != s) {
                    continue;
                }
                if (t.viaDestination != null && heir != null) {
                    // a transaction's parked message belongs to the topic: another subscription holds it now
                    s.transferCount--;
                    s.transferBytes -= t.sizeBytes;
                    t.owner = heir;
                    heir.transferCount++;
                    heir.transferBytes += t.sizeBytes;
                    continue;
                }
                transfers.removeTransfer(t);
                ctx.log().transferRemoved(t);
            }
        }
    }

    public void updateSubscription(String name, QueueSettings settings, List<RuleProperties> rules) {
        SubQueueState s = subscription(name);
        if (s != null) {
            s.updateSettings(settings);
            s.setRules(rules);
        }
    }

    public void updateQueue(QueueSettings settings) {
        queue.updateSettings(settings);
        this.timeToLiveMs = settings.timeToLiveMs();
        this.maxSizeBytes = settings.maxSizeBytes();
    }

    public void updateTopic(long newTimeToLiveMs, long newMaxSizeBytes) {
        this.timeToLiveMs = newTimeToLiveMs;
        this.maxSizeBytes = newMaxSizeBytes;
    }

    /** Logs the removal of everything this partition holds (the entity is being deleted). */
    public void dropEverything() {
        if (queue != null) {
            dropAll(queue);
        }
        for (SubQueueState s : subscriptions.values()) {
            dropAll(s);
        }
        subscriptions.clear();
        for (ScheduledEntry se : scheduled.snapshot()) {
            scheduled.remove(se.seq);
            ctx.cancel(se);
            ctx.log().scheduledRemoved(se);
            ctx.bodies().release(se);
        }
        for (Transfer t : new ArrayList<>(transfers.transfers.values())) {
            transfers.removeTransfer(t);
            ctx.log().transferRemoved(t);
        }
        for (DedupWindow w : new DedupWindow[] {duplicates, transferKeys}) {
            if (w != null) {
                w.allBlocks(id -> ctx.log().recordDropped(id));
            }
        }
        ctx.log().partitionDropped(this);
    }

    /**
     * This node stops serving the partition (cluster mode): its receivers are closed and its waiting session
     * accepts fail with {@code error}; nothing is logged (the next owner replays the journal).
     */
    public void stopServing(BrokerException error) {
        List<SubQueueState> mains = new ArrayList<>(subscriptions.values());
        if (queue != null) {
            mains.add(queue);
        }
        for (SubQueueState main : mains) {
            for (SubQueue q : SubQueue.values()) {
                main.subQueue(q).deliveries.stopServing(error);
            }
        }
    }

    private void dropAll(SubQueueState main) {
        for (SubQueue q : SubQueue.values()) {
            SubQueueState s = main.subQueue(q);
            s.deliveries.closeConsumers(BrokerException.entityNotFound(s.settings.entityPath()));
            s.purge();
            s.sessions().forEach(session -> {
                if (session.hasState()) {
                    s.sessions().setState(session.id, null, ctx.nowMs());
                }
            });
        }
    }

    // ------------------------------------------------------------------------------------------------ sending

    /**
     * Accepts messages sent to this partition: each either becomes active now (with a new sequence number and
     * the cycle's time as its enqueued time) or, with a future scheduled enqueue time, is scheduled. Checked
     * whole first ({@link #admit}), then applied ({@link #apply}): a refused send changes nothing.
     */
    public void send(List<Message> messages, long nowMs) {
        apply(admit(messages, nowMs), nowMs);
    }

    /**
     * What a send would store, checked and changing nothing: the messages duplicate detection does not drop (a
     * MessageId remembered, or repeated within the send), with the keys to remember for them; refused when a
     * message needs a SessionId it lacks or the stored messages would exceed the entity's size. Duplicate
     * detection's one filter for the send, forward and transaction paths.
     */
    public Admission admit(List<Message> messages, long nowMs) {
        if (!topic && queue.settings.requiresSession()) {
            for (Message m : messages) {
                if (m.sessionId() == null) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, SESSION_REQUIRED_TEXT);
                }
            }
        }
        int[] admitted = new int[messages.size()];
        String[] keys = new String[messages.size()];
        int n = 0;
        long incoming = 0;
        Set<String> inThisSend = duplicates == null ? null : new HashSet<>();
        if (duplicates != null) {
            duplicates.expire(nowMs);
        }
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            String key = duplicates == null ? null : duplicateKey(m, partitioned);
            if (key != null && (duplicates.containsKey(key) || !inThisSend.add(key))) {
                continue; // a duplicate: acknowledged, not stored
            }
            admitted[n] = i;
            keys[n++] = key;
            incoming += m.encodedSize();
        }
        if (incoming > 0 && sizeBytes() + incoming > maxSizeBytes) {
            throw new BrokerException(ErrorKind.QUOTA_EXCEEDED, "The maximum entity size has been reached or "
                    + "exceeded for '" + entityPath + "'. Size of entity in bytes: " + sizeBytes()
                    + ", max entity size in bytes: " + maxSizeBytes + ".");
        }
        return new Admission(this, messages, Arrays.copyOf(admitted, n), Arrays.copyOf(keys, n));
    }

    /**
     * A send this partition checked ({@link #admit}) and will store with {@link #apply}, in the same shard
     * command (nothing of the partition may change in between): of {@code messages}, those at {@code admitted},
     * each with its duplicate-detection key (null when detection is off).
     */
    public record Admission(Partition partition, List<Message> messages, int[] admitted, String[] keys) {
        /** Whether duplicate detection drops every message. */
        public boolean nothingToStore() {
            return admitted.length == 0;
        }
    }

    /**
     * Stores a send {@link #admit} checked: its MessageIds remembered, each message active or scheduled. Only
     * after every check of the command passed, so that a refused send (for quota, say) does not remember its ids
     * and its retry within the window is stored instead of dropped as a duplicate (#38).
     */
    public void apply(Admission admission, long nowMs) {
        apply(admission, null, nowMs);
    }

    /**
     * As {@link #apply(Admission, long)}; a message whose entry in {@code reservedSeqs} is not negative is
     * scheduled under that sequence number (taken for it before: the schedule operation, or a transaction's
     * reservation), at its scheduled enqueue time.
     */
    public void apply(Admission admission, long[] reservedSeqs, long nowMs) {
        if (admission.partition() != this) {
            throw new IllegalArgumentException("An admission of another partition");
        }
        remember(admission, nowMs);
        for (int j = 0; j < admission.admitted().length; j++) {
            int i = admission.admitted()[j];
            Message m = admission.messages().get(i);
            Long at = m.scheduledEnqueueTimeMs();
            long reserved = reservedSeqs == null ? -1 : reservedSeqs[i];
            if (reserved >= 0) {
                scheduling.scheduleAs(m, at != null ? at : nowMs, reserved, nowMs);
            } else if (at != null && at > nowMs) {
                schedule(m, at, nowMs);
            } else {
                enqueueActive(m, nowMs);
            }
        }
    }

    /** Remembers the MessageIds of an admitted send (duplicate detection), once every check has passed. */
    void remember(Admission admission, long nowMs) {
        for (String key : admission.keys()) {
            if (key != null) {
                duplicates.addKey(key, nowMs);
                ctx.markDirty(this);
            }
        }
    }

    /**
     * The schedule operation: schedules a message unless duplicate detection remembers its MessageId. Scheduled
     * messages take part in duplicate detection both ways, as on the service: a message scheduled by the operation
     * is remembered like a sent one, and a duplicate is dropped. The service still answers a dropped duplicate with a
     * sequence number; so does this, a number of its own (taken, never reused) that names no message, so that
     * cancelling it reports message-not-found. Checked as a send is ({@link #admit}: SessionId, duplicate, the
     * entity's size) before anything changes.
     *
     * @return the sequence number valid while the message is scheduled
     */
    public long scheduleRequested(Message message, long scheduledTimeMs, long nowMs) {
        return scheduling.scheduleRequested(message, scheduledTimeMs, nowMs);
    }

    /**
     * Takes the sequence number a message scheduled under a transaction will have if the transaction commits (the
     * service answers {@code schedule-message} at once, applies it at commit): checked and numbered now, stored by
     * {@link #scheduleReserved} at commit. A number whose transaction does not commit is never used.
     */
    public long reserveScheduled(Message message) {
        return scheduling.reserveScheduled(message);
    }

    /**
     * Schedules, once its transaction committed, a message whose sequence number {@link #reserveScheduled} took
     * (forwarded from the via entity it was parked in); checked now as the schedule operation checks it.
     */
    public void scheduleReserved(Message message, long scheduledTimeMs, long seq, long nowMs) {
        scheduling.scheduleReserved(message, scheduledTimeMs, seq, nowMs);
    }

    /** Schedules a message (already checked for duplicates); returns the sequence number valid while scheduled. */
    public long schedule(Message message, long scheduledTimeMs, long nowMs) {
        return scheduling.schedule(message, scheduledTimeMs, nowMs);
    }

    /** Puts a scheduled entry in place (new or replayed, holding its message) and arms its timer. */
    public void restoreScheduled(ScheduledEntry se) {
        scheduling.restoreScheduled(se);
    }

    /**
     * Cancels a scheduled message. Activation and cancellation run on the same single writer, so exactly one of
     * them wins: a cancelled message is never delivered, and cancelling an activated one reports it.
     */
    public void cancelScheduled(long seq) {
        scheduling.cancelScheduled(seq);
    }

    /**
     * Cancels a scheduled message under a committed transaction: the cancel was staged, the message may have been
     * enqueued since (then it stays enqueued, as an activation cannot be taken back). Returns whether it was
     * scheduled.
     */
    public boolean cancelScheduledIfPresent(long seq) {
        return scheduling.cancelScheduledIfPresent(seq);
    }

    void activate(ScheduledEntry se, long nowMs) {
        scheduling.activate(se, nowMs);
    }

    void enqueueActive(Message m, long nowMs) {
        long seq = sequence.take();
        ctx.markDirty(this);
        if (!topic && queue.forwardTo != null) {
            transferOut(queue, m, seq, nowMs, false);
            return;
        }
        if (!topic) {
            Entry e = queue.newEntry(seq, ctx.log().nextRecordId(), nowMs,
                    expiresAt(nowMs, m, queue.settings.timeToLiveMs()), m, m.encodedSize());
            e.owner = queue;
            ctx.log().entryAdded(e);
            ctx.bodies().admit(e);
            queue.add(e, nowMs);
            return;
        }
        // fan-in per subscription: one copy for the matching rules without action, sharing the topic's body with
        // the other subscriptions' copies; one copy per matching rule with an action, each with a body of its own
        // holding the modified message (and, beyond a subscription's first copy, a sequence number of its own)
        List<SubQueueState> targets = new ArrayList<>(subscriptions.size());
        List<RuleSet.Routing> routings = new ArrayList<>(subscriptions.size());
        int shared = 0;
        for (SubQueueState s : subscriptions.values()) {
            if (s.settings.status().canReceive() || s.settings.status().canSend()) {
                RuleSet.Routing r = s.rules().route(m, seq, nowMs);
                if (r.none() || (r.failed() && !s.settings.deadLetterOnFilterError())) {
                    continue;
                }
                targets.add(s);
                routings.add(r);
                if (r.failed() || (r.plainCopy() && s.forwardTo == null)) {
                    shared++;
                }
            }
        }
        TopicBody body = null;
        if (shared > 0) {
            body = new TopicBody(ctx.log().nextRecordId(), seq, nowMs, m);
            body.references = shared;
            ctx.log().topicBodyAdded(this, body);
            ctx.bodies().admit(body);
        }
        for (int i = 0; i < targets.size(); i++) {
            SubQueueState s = targets.get(i);
            RuleSet.Routing r = routings.get(i);
            if (r.failed()) {
                deadLetterCopy(s, seq, nowMs, body, m, r.errorName(), r.errorDescription());
                continue;
            }
            if (r.plainCopy()) {
                if (!transfers.forwardsAway(s, m, seq, nowMs)) {
                    addCopy(s, nowMs, body, m);
                }
            }
            boolean first = !r.plainCopy();
            for (Message modified : r.actionCopies()) {
                long copySeq = first ? seq : sequence.take();
                first = false;
                if (transfers.forwardsAway(s, modified, copySeq, nowMs)) {
                    continue;
                }
                TopicBody own = new TopicBody(ctx.log().nextRecordId(), copySeq, nowMs, modified);
                own.references = 1;
                ctx.log().topicBodyAdded(this, own);
                ctx.bodies().admit(own);
                addCopy(s, nowMs, own, modified);
            }
        }
    }

    /** Adds a subscription's copy of a topic message; the copy holds no message of its own: it reads the body's. */
    private void addCopy(SubQueueState s, long nowMs, TopicBody body, Message m) {
        if (s.settings.requiresSession() && m.sessionId() == null) {
            deadLetterCopy(s, body.seq, nowMs, body, m, DeadLetterReasons.SESSION_ID_NULL,
                    DeadLetterReasons.SESSION_ID_NULL_DESCRIPTION);
            return;
        }
        Entry e = s.newEntry(body.seq, ctx.log().nextRecordId(), nowMs,
                expiresAt(nowMs, m, s.settings.timeToLiveMs()), null, body.sizeBytes);
        e.body = body;
        e.owner = s;
        ctx.log().entryAdded(e);
        s.add(e, nowMs);
    }

    /** Dead-letters a subscription's copy on arrival with the given reason (the message as {@code m} shows it). */
    private void deadLetterCopy(SubQueueState s, long seq, long nowMs, TopicBody body, Message m, String reason,
                                String description) {
        Entry e = s.newEntry(seq, ctx.log().nextRecordId(), nowMs, Long.MAX_VALUE, null, body.sizeBytes);
        e.body = body;
        e.owner = s.deadLetter;
        ctx.log().entryAdded(e);
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(DeadLetterReasons.DEAD_LETTER_REASON, reason);
        props.put(DeadLetterReasons.DEAD_LETTER_DESCRIPTION, description);
        ctx.bodies().modified(e, m.withApplicationProperties(props));
        ctx.log().entryUpdated(e);
        s.deadLetter.add(e, nowMs);
    }

    static long expiresAt(long nowMs, Message m, long ceilingMs) {
        long ttl = ceilingMs;
        Long own = m.timeToLiveMs();
        if (own != null && own > 0 && own < ttl) {
            ttl = own;
        }
        if (ttl == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        long r = nowMs + ttl;
        return r < nowMs ? Long.MAX_VALUE : r;
    }

    // ------------------------------------------------------------------------------------------------ browsing

    /**
     * Browses a receivable sub-queue from a sequence number; for a queue's main queue the scheduled messages are
     * merged in sequence order.
     */
    public List<ReceivedMessage> peek(SubQueueState target, long fromSeq, int max, String sessionId) {
        if (target != queue || scheduled.isEmpty()) {
            return target.peek(fromSeq, max, sessionId);
        }
        List<ReceivedMessage> out = new ArrayList<>(Math.min(max, 64));
        Iterator<Entry> entries = target.entriesFrom(fromSeq).iterator();
        Iterator<ScheduledEntry> sched = scheduled.from(fromSeq).iterator();
        Entry e = nextEntry(entries, sessionId);
        ScheduledEntry s = nextScheduled(sched, sessionId);
        while (out.size() < max && (e != null || s != null)) {
            if (s == null || (e != null && e.seq < s.seq)) {
                out.add(target.browse(e));
                e = nextEntry(entries, sessionId);
            } else {
                out.add(s.view(ctx.bodies().of(s), index));
                s = nextScheduled(sched, sessionId);
            }
        }
        return out;
    }

    /** Browses a topic's scheduled messages. */
    public List<ReceivedMessage> peekScheduled(long fromSeq, int max) {
        List<ReceivedMessage> out = new ArrayList<>();
        for (ScheduledEntry s : scheduled.from(fromSeq)) {
            if (out.size() >= max) {
                break;
            }
            out.add(s.view(ctx.bodies().of(s), index));
        }
        return out;
    }

    private static Entry nextEntry(Iterator<Entry> it, String sessionId) {
        while (it.hasNext()) {
            Entry e = it.next();
            if (sessionId == null || (e.session != null && sessionId.equals(e.session.id))) {
                return e;
            }
        }
        return null;
    }

    private ScheduledEntry nextScheduled(Iterator<ScheduledEntry> it, String sessionId) {
        while (it.hasNext()) {
            ScheduledEntry s = it.next();
            if (sessionId == null || sessionId.equals(ctx.bodies().of(s).sessionId())) {
                return s;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------ counts

    public int scheduledCount() {
        return scheduled.size();
    }

    /** Counts of a queue partition (with its scheduled messages), or of a topic partition (scheduled only). */
    public RuntimeCounts counts() {
        long scheduledBytes = 0;
        for (ScheduledEntry s : scheduled) {
            scheduledBytes += s.sizeBytes;
        }
        RuntimeCounts own = new RuntimeCounts(0, 0, scheduled.size(), 0, 0, scheduledBytes);
        return topic ? own : own.plus(queue.counts());
    }

    /** Counts of one subscription in this partition. */
    public RuntimeCounts subscriptionCounts(String name) {
        SubQueueState s = subscription(name);
        return s == null ? RuntimeCounts.ZERO : s.counts();
    }

    private long sizeBytes() {
        long size = 0;
        if (queue != null) {
            size += queue.sizeBytes() + queue.deadLetter.sizeBytes() + queue.transferDeadLetter.sizeBytes();
        }
        for (SubQueueState s : subscriptions.values()) {
            size = Math.max(size, s.sizeBytes() + s.deadLetter.sizeBytes());
        }
        return size;
    }

    // ------------------------------------------------------------------------------------------------ duplicates

    /** Turns duplicate detection on with the given window, or off with 0. Shard thread (or before publication). */
    public void setDuplicateDetection(long windowMs) {
        if (windowMs <= 0) {
            if (duplicates != null && ctx != null) {
                DedupWindow old = duplicates;
                duplicates = null;
                old.allBlocks(id -> ctx.log().recordDropped(id));
            }
            duplicates = null;
        } else if (duplicates == null) {
            duplicates = new DedupWindow(DedupWindow.DUPLICATES, windowMs, ctx.dedupHeapBudgetBytes());
        } else {
            duplicates.setWindowMs(windowMs);
        }
    }

    /** The duplicate-detection window, or null when off. */
    public DedupWindow duplicates() {
        return duplicates;
    }

    /** The transfer keys of messages forwarded to this partition (created on first use). */
    public DedupWindow transferKeys() {
        if (transferKeys == null) {
            transferKeys = new DedupWindow(DedupWindow.TRANSFERS, TRANSFER_KEY_WINDOW_MS,
                    ctx.dedupHeapBudgetBytes());
        }
        return transferKeys;
    }

    public boolean hasTransferKeys() {
        return transferKeys != null;
    }

    /** How long a forwarded message's transfer key is remembered (counted from the restart after a crash). */
    public static final long TRANSFER_KEY_WINDOW_MS = 5 * 60_000L;

    /** The duplicate-detection identity: MessageId, plus the partition key on partitioned entities. */
    static String duplicateKey(Message m, boolean partitioned) {
        Object id = m.messageId();
        String key;
        if (id instanceof byte[] b) {
            key = "b:" + HexFormat.of().formatHex(b);
        } else if (id instanceof String str) {
            key = "s:" + str;
        } else {
            key = (id == null ? "n" : id.getClass().getSimpleName()) + ":" + id;
        }
        if (partitioned) {
            String pk = m.sessionId() != null ? m.sessionId() : m.partitionKey();
            key = key + '\u0000' + (pk == null ? "" : pk);
        }
        return key;
    }

    /** Restores a block of remembered keys from the journal. */
    public boolean restoreKeyBlock(byte kind, long recordId, long[] keys) {
        DedupWindow w = kind == DedupWindow.DUPLICATES ? duplicates : transferKeys();
        if (w == null) {
            return false;
        }
        long newest = Long.MIN_VALUE;
        for (int i = 0; i + 2 < keys.length; i += 3) {
            w.restore(keys[i], keys[i + 1], keys[i + 2]);
            newest = Math.max(newest, keys[i + 2]);
        }
        w.blockWritten(recordId, newest);
        return true;
    }

    // ------------------------------------------------------------------------------------------------ forwarding

    public void setForwarder(Forwarder forwarder) {
        transfers.setForwarder(forwarder);
    }

    /**
     * Starts moving a message of {@code owner} (a queue or subscription) to its forwarding destination: journals
     * a transfer and forwards it once that record is durable. A message forwarded {@link Transfer#MAX_HOPS} times
     * already goes to the owner's transfer dead-letter queue instead.
     */
    void transferOut(SubQueueState owner, Message m, long seq, long enqueuedTimeMs, boolean fromDeadLetter) {
        transfers.transferOut(owner, m, seq, enqueuedTimeMs, fromDeadLetter);
    }

    /**
     * The sub-queue that holds what a transaction parks in this partition (send-via): a queue's own; for a topic,
     * the subscription named (the one the transaction settles messages of), else its first subscription, else
     * null (a topic without subscriptions has nowhere to park a message). Its transfer dead-letter queue takes
     * a parked message the destination refuses for good. A topic's parked messages belong to the topic (their
     * records and transfer keys name it): when their subscription is deleted, or after a restart, another one
     * holds them.
     */
    public SubQueueState viaOwner(String preferredSubscription) {
        return transfers.viaOwner(preferredSubscription);
    }

    /**
     * Parks messages sent through this entity to {@code destination} under a transaction (send-via), as the service
     * keeps them in the via entity's transfer queue: each is journalled as a transfer owned by {@code owner} (see
     * {@link #viaOwner}; counted as its transfer message), forwarded once durable with an idempotent transfer key,
     * and moved to the owner's transfer dead-letter queue if the destination refuses it for good. Parked in the
     * same shard command as the transaction's settlements, they are its commit record for the destination.
     */
    public void sendVia(SubQueueState owner, String destination, List<Message> messages, long nowMs) {
        transfers.sendVia(owner, destination, messages, nowMs);
    }

    /**
     * Parks a message scheduled under a transaction for another entity, through this one, as {@link #sendVia}
     * parks a sent one: forwarded once durable, and stored by the destination as scheduled under the sequence
     * number {@code reservedSeq} that the destination's partition reserved for it.
     */
    public void scheduleVia(SubQueueState owner, String destination, Message m, long reservedSeq, long nowMs) {
        transfers.scheduleVia(owner, destination, m, reservedSeq, nowMs);
    }

    /** Hands a pending transfer to the forwarder; without a destination (forwarding switched off) it stays here. */
    void forwardNow(Transfer t) {
        transfers.forwardNow(t);
    }

    /** The destination holds the forwarded message durably: the transfer is over. */
    public void transferDone(Transfer t) {
        transfers.transferDone(t);
    }

    /** The destination refused the message for good (missing, disabled, full): it goes to the transfer DLQ. */
    public void transferFailed(Transfer t, String reason, String description) {
        transfers.transferFailed(t, reason, description);
    }

    /** The destination could not take the message right now: try again in a second. */
    public void retryTransferLater(Transfer t) {
        transfers.retryTransferLater(t);
    }

    /**
     * Accepts a message forwarded from another entity, once: a transfer key seen before (the source re-forwards
     * after a crash) is acknowledged without a second copy.
     */
    public void acceptForwarded(Message m, String transferKey, long nowMs) {
        transfers.acceptForwarded(m, transferKey, nowMs);
    }

    /**
     * Accepts a batch forwarded under one transfer key, once (cluster mode: a send carried from another node, which
     * may carry it again when the answer was lost): a key seen before is acknowledged without a second copy.
     */
    public void acceptForwarded(List<Message> batch, String transferKey, long nowMs) {
        transfers.acceptForwarded(batch, transferKey, nowMs);
    }

    /**
     * Accepts a message scheduled under a transaction through another entity, forwarded from there once it
     * committed: scheduled under the sequence number this partition reserved for it ({@link #reserveScheduled}),
     * once (a transfer key seen before is acknowledged without a second copy).
     */
    public void acceptForwardedScheduled(Message m, long reservedSeq, String transferKey, long nowMs) {
        transfers.acceptForwardedScheduled(m, reservedSeq, transferKey, nowMs);
    }

    /** Restores a pending transfer from the journal; false when its owner no longer exists. */
    public boolean restoreTransfer(long ownerEntityId, long recordId, long seq, long enqueuedTimeMs,
                                   boolean fromDeadLetter, Message m, String viaDestination, long reservedSeq) {
        return transfers.restoreTransfer(ownerEntityId, recordId, seq, enqueuedTimeMs, fromDeadLetter, m,
                viaDestination, reservedSeq);
    }

    /** Forgets a restored transfer whose DELETE record was replayed. */
    public void forgetTransferForReplay(long recordId) {
        transfers.forgetTransferForReplay(recordId);
    }

    /** Messages waiting to be forwarded from this partition. */
    public int transferCount() {
        return transfers.transferCount();
    }

    // ------------------------------------------------------------------------------------------------ replay

    /**
     * Restores a queue entry or a subscription's copy from the journal into the given sub-queue.
     *
     * @param message the queue message; null for a subscription's copy, which reads {@code body}'s
     */
    public Entry restoreEntry(SubQueueState target, long seq, long recordId, long enqueuedTimeMs,
                              long expiresAtMs, Message message, TopicBody body) {
        Entry e = target.newEntry(seq, recordId, enqueuedTimeMs, expiresAtMs, body != null ? null : message,
                body != null ? body.sizeBytes : message.encodedSize());
        e.body = body;
        if (body != null) {
            body.references++;
        }
        target.restore(e);
        ctx.bodies().admit(e);
        return e;
    }

    /** Applies a replayed state update to a restored entry, moving it between sub-queues if needed. */
    public void restoreEntryState(Entry e, int deliveryCount, boolean deferred, SubQueueState target,
                                  Message modified, String deadLetterSource) {
        SubQueueState from = e.owner;
        if (from != target || deferred != e.deferred() || modified != null) {
            // re-insert with the new state
            if (from != null) {
                detachForReplay(from, e);
            }
            e.deliveryCount = deliveryCount;
            e.status = deferred ? Entry.DEFERRED : Entry.AVAILABLE;
            if (modified != null) {
                ctx.bodies().modified(e, modified);
            }
            if (target.kind != SubQueue.MAIN) {
                e.expiresAtMs = Long.MAX_VALUE;
            }
            e.deadLetterSource = deadLetterSource;
            target.restore(e);
        } else {
            e.deliveryCount = deliveryCount;
            e.deadLetterSource = deadLetterSource;
        }
    }

    private static void detachForReplay(SubQueueState from, Entry e) {
        TopicBody body = e.body;
        e.body = null;
        from.removeForReplay(e);
        e.body = body;
    }

    /** Drops a restored entry whose DELETE record was replayed. */
    public void forgetEntryForReplay(Entry e) {
        if (e.owner != null) {
            e.owner.removeForReplay(e);
        }
        if (e.body != null) {
            e.body.references--;
        }
        ctx.bodies().release(e);
    }

    /** Drops a restored topic body whose DELETE record was replayed, or that no copy refers to. */
    public void forgetTopicBodyForReplay(TopicBody body) {
        ctx.bodies().release(body);
    }

    /** Removes a scheduled message whose DELETE record was replayed. */
    public void removeScheduledForReplay(long seq) {
        ScheduledEntry se = scheduled.remove(seq);
        if (se != null) {
            se.partition = null;
            ctx.cancel(se);
            ctx.bodies().release(se);
        }
    }

    /** The subscription main sub-queue with the given entity id, or null. */
    public SubQueueState subscriptionByEntityId(long subscriptionEntityId) {
        for (SubQueueState s : subscriptions.values()) {
            if (s.entityId == subscriptionEntityId) {
                return s;
            }
        }
        return null;
    }

    /** A body restored from the journal, to which subscription copies then refer. */
    public TopicBody restoreTopicBody(long recordId, long seq, long enqueuedTimeMs, Message message) {
        TopicBody body = new TopicBody(recordId, seq, enqueuedTimeMs, message);
        ctx.bodies().admit(body);
        return body;
    }

    /** Starts delivery after a replay (e.g. to consumers that attach later, or timers already due). */
    public void afterReplay() {
        if (queue != null) {
            queue.deliveries().pump();
        }
        for (DedupWindow w : new DedupWindow[] {duplicates, transferKeys}) {
            if (w != null) {
                w.sortAfterReplay();
                ctx.markDirty(this); // the next checkpoint deletes blocks that expired while the broker was down
            }
        }
        for (Transfer t : transfers.transfers.values()) {
            ctx.afterSync(() -> forwardNow(t));
        }
    }

    public void setTimeToLiveMs(long ttlMs) {
        this.timeToLiveMs = ttlMs;
    }

    public long timeToLiveMs() {
        return timeToLiveMs;
    }
}
