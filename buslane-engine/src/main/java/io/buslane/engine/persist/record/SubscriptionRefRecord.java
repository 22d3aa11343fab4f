package io.buslane.engine.persist.record;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 5, ADD: a subscription's reference to a topic body. Layout: {@code partitionRecordId} varlong,
 * {@code subscriptionEntityId} varlong, {@code bodyRecordId} varlong, {@code subQueue} byte ({@link SubQueue#code()}),
 * {@code expiresAtMs} long.
 */
public record SubscriptionRefRecord(long partitionRecordId, long subscriptionEntityId, long bodyRecordId,
                                    SubQueue subQueue, long expiresAtMs) {

    public static final byte TYPE = 5;

    public static void write(RecordWriter w, long partitionRecordId, long subscriptionEntityId, long bodyRecordId,
                             SubQueue subQueue, long expiresAtMs) {
        w.writeVarLong(partitionRecordId);
        w.writeVarLong(subscriptionEntityId);
        w.writeVarLong(bodyRecordId);
        w.writeByte(subQueue.code());
        w.writeLong(expiresAtMs);
    }

    public static SubscriptionRefRecord read(RecordReader in) {
        return new SubscriptionRefRecord(in.readVarLong(), in.readVarLong(), in.readVarLong(),
                SubQueue.ofCode(in.readByte()), in.readLong());
    }
}
