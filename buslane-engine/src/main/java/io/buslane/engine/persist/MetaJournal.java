package io.buslane.engine.persist;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.SharedJournal;

import java.util.ArrayList;
import java.util.List;

/**
 * The namespace's entity definitions in the {@code meta} journal (format in {@link RecordTypes}). Each change is
 * appended and synced before it is acknowledged. Not thread-safe: the caller serialises entity changes.
 */
public final class MetaJournal {

    /** Receives the namespace as it is replayed. */
    public interface Handler {
        void onNamespace(long nextEntityId, int shardCount);

        void onQueue(long id, long createdAtMs, long updatedAtMs, QueueProperties properties);

        void onTopic(long id, long createdAtMs, long updatedAtMs, TopicProperties properties);

        void onSubscription(long id, long topicId, long createdAtMs, long updatedAtMs,
                            SubscriptionProperties properties, List<RuleProperties> rules);

        void onDelete(long id);
    }

    private final Journal journal;
    private final RecordWriter w = new RecordWriter(512);
    private boolean namespaceWritten;

    public MetaJournal(Journal journal) {
        this.journal = journal;
    }

    /**
     * Another node changed the namespace first (cluster mode): nothing of this change was stored; read the
     * namespace again and retry.
     */
    public static final class ConflictException extends RuntimeException {
        ConflictException(String message) {
            super(message, null, false, false);
        }
    }

    /** Whether several nodes write this namespace journal (cluster mode). */
    public boolean shared() {
        return journal instanceof SharedJournal;
    }

    /** Cluster mode: whether another node changed the namespace since this node last read or wrote it. */
    public boolean changedElsewhere() {
        return journal instanceof SharedJournal j && j.changedElsewhere();
    }

    /** Delivers the stored namespace to {@code handler}; a shared journal may be read any number of times. */
    public void replay(Handler handler) {
        namespaceWritten = false;
        journal.replay(r -> {
            if (r.kind() == RecordKind.DELETE) {
                handler.onDelete(r.id());
                return;
            }
            RecordReader in = new RecordReader(r.payload());
            switch (r.type()) {
                case RecordTypes.META_NAMESPACE -> {
                    namespaceWritten = true;
                    handler.onNamespace(in.readVarLong(), in.readVarInt());
                }
                case RecordTypes.META_QUEUE -> handler.onQueue(r.id(), in.readLong(), in.readLong(),
                        EntityCodec.readQueue(in));
                case RecordTypes.META_TOPIC -> handler.onTopic(r.id(), in.readLong(), in.readLong(),
                        EntityCodec.readTopic(in));
                case RecordTypes.META_SUBSCRIPTION -> {
                    long topicId = in.readVarLong();
                    long created = in.readLong();
                    long updated = in.readLong();
                    SubscriptionProperties props = EntityCodec.readSubscription(in);
                    int n = in.readVarInt();
                    List<RuleProperties> rules = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        rules.add(EntityCodec.readRule(in));
                    }
                    props = EntityCodec.readSubscriptionAddresses(in, props);
                    handler.onSubscription(r.id(), topicId, created, updated, props, rules);
                }
                default -> throw new IllegalStateException("meta journal: unknown record type " + r.type());
            }
        });
    }

    public void putNamespace(long nextEntityId, int shardCount) {
        w.reset();
        w.writeVarLong(nextEntityId);
        w.writeVarInt(shardCount);
        append(RecordTypes.META_RECORD_ID, !namespaceWritten, RecordTypes.META_NAMESPACE);
        namespaceWritten = true;
    }

    public void putQueue(long id, boolean add, long createdAtMs, long updatedAtMs, QueueProperties p) {
        w.reset();
        w.writeLong(createdAtMs);
        w.writeLong(updatedAtMs);
        EntityCodec.writeQueue(w, p);
        append(id, add, RecordTypes.META_QUEUE);
    }

    public void putTopic(long id, boolean add, long createdAtMs, long updatedAtMs, TopicProperties p) {
        w.reset();
        w.writeLong(createdAtMs);
        w.writeLong(updatedAtMs);
        EntityCodec.writeTopic(w, p);
        append(id, add, RecordTypes.META_TOPIC);
    }

    public void putSubscription(long id, boolean add, long topicId, long createdAtMs, long updatedAtMs,
                                SubscriptionProperties p, List<RuleProperties> rules) {
        w.reset();
        w.writeVarLong(topicId);
        w.writeLong(createdAtMs);
        w.writeLong(updatedAtMs);
        EntityCodec.writeSubscription(w, p);
        w.writeVarInt(rules.size());
        for (RuleProperties r : rules) {
            EntityCodec.writeRule(w, r);
        }
        EntityCodec.writeSubscriptionAddresses(w, p); // appended, after the rules
        append(id, add, RecordTypes.META_SUBSCRIPTION);
    }

    /** Appends the record just written to {@link #w}; the journal reads the bytes during the call (no copy). */
    private void append(long id, boolean add, byte type) {
        journal.append(add ? RecordKind.ADD : RecordKind.UPDATE, id, type, w.buffer(), 0, w.size());
    }

    public void delete(long id) {
        journal.append(JournalRecord.delete(id));
    }

    public void close() {
        journal.close();
    }

    /**
     * Makes the appended changes durable.
     *
     * @throws ConflictException when another node changed the shared namespace first (nothing was stored)
     */
    public void sync() {
        try {
            journal.sync();
        } catch (JournalException e) {
            if (e.reason() == JournalException.Reason.CONFLICT) {
                throw new ConflictException(e.getMessage());
            }
            throw e;
        }
    }
}
