package io.buslane.engine.persist;

/**
 * The engine's journal record types. Stateless constants.
 *
 * <p>Shard journals ({@code shard-N}), each record's payload starting with the fields listed:
 * <pre>
 *  type  kind        id                 payload
 *  1     ADD/UPDATE  1 (fixed)          SHARD_META: nextRecordId varlong
 *  2     ADD/UPDATE  partition record   PARTITION: entityId varlong, index varint, nextCounter long
 *  3     ADD         entry record       QUEUE_MSG: partitionRecordId, subQueue byte, seq long, enqueuedTimeMs long,
 *                                       expiresAtMs long, message
 *  4     ADD         body record        TOPIC_BODY: partitionRecordId, seq long, enqueuedTimeMs long, message
 *  5     ADD         entry record       SUB_REF: partitionRecordId, subscriptionEntityId, bodyRecordId,
 *                                       subQueue byte, expiresAtMs long
 *  6     UPDATE      entry record       ENTRY_STATE: subQueue byte, deliveryCount varint, deferred bool,
 *                                       message (nullable: present when properties were modified),
 *                                       deadLetterSource string (nullable)
 *  7     ADD         scheduled record   SCHEDULED: partitionRecordId, seq long, enqueuedTimeMs long,
 *                                       scheduledTimeMs long, message
 *  8     ADD/UPDATE  session record     SESSION_STATE: partitionRecordId, ownerEntityId, sessionId string,
 *                                       lastUpdatedMs long, state bytes
 *  9     ADD         transfer record    TRANSFER: partitionRecordId, ownerEntityId, fromDeadLetter bool, seq long,
 *                                       enqueuedTimeMs long, message (a message waiting to be auto-forwarded)
 *  10    ADD         block record       KEY_BLOCK (first format, read only): partitionRecordId, kind byte
 *                                       (0 duplicate detection, 1 transfer keys), count varint, count x
 *                                       (hashHigh long, hashLow long, timeMs long), by the first, home-made hash
 *                                       (DedupWindow.legacyHash); tagged as legacy when read
 *  11    ADD         block record       KEY_BLOCK_V2: the same layout, hashes as the window holds them (XXH3-128
 *                                       with the lowest bit as the legacy tag, DedupWindow.hash); written once per
 *                                       cycle per partition, deleted once expired
 *  -     DELETE      any of the above   (no payload)
 * </pre>
 * The {@code meta} journal holds the namespace:
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

    public static final byte SHARD_META = 1;
    public static final byte PARTITION = 2;
    public static final byte QUEUE_MSG = 3;
    public static final byte TOPIC_BODY = 4;
    public static final byte SUB_REF = 5;
    public static final byte ENTRY_STATE = 6;
    public static final byte SCHEDULED = 7;
    public static final byte SESSION_STATE = 8;
    public static final byte TRANSFER = 9;
    /** Key blocks of the first format (read only: their hashes are the legacy hash). */
    public static final byte KEY_BLOCK = 10;
    /** Key blocks since the change to XXH3-128. */
    public static final byte KEY_BLOCK_V2 = 11;

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
