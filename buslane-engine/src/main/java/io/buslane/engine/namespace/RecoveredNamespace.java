package io.buslane.engine.namespace;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.persist.MetaJournal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The namespace as replayed from the meta journal: its counters and the descriptions of the live entities. */
public final class RecoveredNamespace implements MetaJournal.Handler {

    /** One live entity's record: its description, times, and (subscriptions) topic id and rules. */
    record Stored(Object properties, long createdAtMs, long updatedAtMs, long topicId, List<RuleProperties> rules) {
    }

    long nextEntityId = 1;
    int shardCount;
    long maxId;
    final Map<Long, Stored> entities = new LinkedHashMap<>();

    /** Replays the meta journal. */
    public static RecoveredNamespace read(MetaJournal meta) {
        RecoveredNamespace recovered = new RecoveredNamespace();
        meta.replay(recovered);
        return recovered;
    }

    /** The shard count the data directory was created with, or 0 for a new data directory. */
    public int shardCount() {
        return shardCount;
    }

    /** The id the next entity created gets. */
    long nextId() {
        return Math.max(nextEntityId, maxId + 1);
    }

    @Override
    public void onNamespace(long next, int count) {
        nextEntityId = next;
        shardCount = count;
    }

    @Override
    public void onQueue(long id, long createdAtMs, long updatedAtMs, QueueProperties p) {
        maxId = Math.max(maxId, id);
        entities.put(id, new Stored(p, createdAtMs, updatedAtMs, 0, null));
    }

    @Override
    public void onTopic(long id, long createdAtMs, long updatedAtMs, TopicProperties p) {
        maxId = Math.max(maxId, id);
        entities.put(id, new Stored(p, createdAtMs, updatedAtMs, 0, null));
    }

    @Override
    public void onSubscription(long id, long topicId, long createdAtMs, long updatedAtMs,
                               SubscriptionProperties p, List<RuleProperties> rules) {
        maxId = Math.max(maxId, id);
        entities.put(id, new Stored(p, createdAtMs, updatedAtMs, topicId, rules));
    }

    @Override
    public void onDelete(long id) {
        entities.remove(id);
    }
}
