package io.buslane.engine.persist;

/**
 * The engine's journal record types. Stateless constants.
 *
 * <p>Shard journals ({@code shard-N}): one class per record type in {@code engine.persist.record} holds its type
 * code, its layout (in its Javadoc), its writer and its reader: {@code ShardMetaRecord} (1), {@code PartitionRecord}
 * (2), {@code QueueMessageRecord} (3), {@code TopicBodyRecord} (4), {@code SubscriptionRefRecord} (5),
 * {@code EntryStateRecord} (6), {@code ScheduledRecord} (7), {@code SessionStateRecord} (8), {@code TransferRecord}
 * (9) and {@code KeyBlockRecord} (10, 11); a DELETE of any of them has no payload.
 *
 * <p>The {@code meta} journal holds the namespace:
 * <pre>
 *  1     ADD/UPDATE  entity id          QUEUE: createdAtMs, updatedAtMs, QueueProperties
 *  2     ADD/UPDATE  entity id          TOPIC: createdAtMs, updatedAtMs, TopicProperties
 *  3     ADD/UPDATE  entity id          SUBSCRIPTION: topicEntityId, createdAtMs, updatedAtMs,
 *                                       SubscriptionProperties, rule count varint, rules
 *  4     ADD/UPDATE  1 (fixed)          NAMESPACE: nextEntityId varlong, shardCount varint
 *  -     DELETE      entity id          the entity was deleted
 * </pre>
 * Integers written as varlong/varint where marked, all others fixed-width big-endian; the message and entity
 * encodings are those of {@link MessageCodec} and {@link EntityCodec}.
 */
public final class RecordTypes {

    public static final byte META_QUEUE = 1;
    public static final byte META_TOPIC = 2;
    public static final byte META_SUBSCRIPTION = 3;
    public static final byte META_NAMESPACE = 4;

    /** The fixed record id of the shard and namespace meta records. */
    public static final long META_RECORD_ID = 1;
    /** The first id handed out for other records. */
    public static final long FIRST_RECORD_ID = 16;

    private RecordTypes() {
    }
}
