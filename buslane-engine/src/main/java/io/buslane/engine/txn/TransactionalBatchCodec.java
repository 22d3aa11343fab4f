package io.buslane.engine.txn;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.persist.ValueCodec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A committed transaction's work as bytes (cluster mode: carried to the node that serves its shard), in the
 * engine's record encoding: messages in the journal's {@link MessageCodec}, property maps in its
 * {@link ValueCodec}.
 */
public final class TransactionalBatchCodec {

    private TransactionalBatchCodec() {
    }

    public static byte[] encode(TransactionalBatch batch) {
        RecordWriter w = new RecordWriter(256);
        w.writeVarInt(batch.sends().size());
        for (TransactionalBatch.Send s : batch.sends()) {
            w.writeString(s.entityPath());
            w.writeString(s.via());
            w.writeVarInt(s.messages().size());
            for (Message m : s.messages()) {
                MessageCodec.write(w, m);
            }
        }
        w.writeVarInt(batch.schedules().size());
        for (TransactionalBatch.Schedule s : batch.schedules()) {
            w.writeString(s.entityPath());
            MessageCodec.write(w, s.message());
            w.writeLong(s.sequenceNumber());
        }
        w.writeVarInt(batch.settlements().size());
        for (TransactionalBatch.Settle s : batch.settlements()) {
            w.writeString(s.address().toString());
            w.writeLong(s.lockToken().getMostSignificantBits());
            w.writeLong(s.lockToken().getLeastSignificantBits());
            w.writeVarInt(s.kind().code());
            w.writeBoolean(s.properties() != null);
            if (s.properties() != null) {
                ValueCodec.writeStringMap(w, s.properties());
            }
            w.writeString(s.deadLetterReason());
            w.writeString(s.deadLetterDescription());
        }
        // appended: the via of each schedule, then the cancels
        for (TransactionalBatch.Schedule s : batch.schedules()) {
            w.writeString(s.via());
        }
        w.writeVarInt(batch.cancels().size());
        for (TransactionalBatch.Cancel c : batch.cancels()) {
            w.writeString(c.entityPath());
            long[] seqs = c.sequenceNumbers();
            w.writeVarInt(seqs.length);
            for (long seq : seqs) {
                w.writeLong(seq);
            }
        }
        return w.toByteArray();
    }

    public static TransactionalBatch decode(byte[] bytes) {
        RecordReader r = new RecordReader(bytes);
        TransactionalBatch batch = new TransactionalBatch();
        int sends = r.readVarInt();
        for (int i = 0; i < sends; i++) {
            String path = r.readString();
            String via = r.readString();
            int n = r.readVarInt();
            List<Message> messages = new ArrayList<>(Math.min(n, 1024));
            for (int k = 0; k < n; k++) {
                messages.add(MessageCodec.read(r));
            }
            batch.addSend(path, messages, via);
        }
        int schedules = r.readVarInt();
        List<TransactionalBatch.Schedule> scheduled = new ArrayList<>(Math.min(schedules, 1024));
        for (int i = 0; i < schedules; i++) {
            scheduled.add(new TransactionalBatch.Schedule(r.readString(), MessageCodec.read(r), r.readLong()));
        }
        int settles = r.readVarInt();
        for (int i = 0; i < settles; i++) {
            EntityAddress address = EntityAddress.parse(r.readString());
            UUID token = new UUID(r.readLong(), r.readLong());
            TransactionalBatch.SettleKind kind = TransactionalBatch.SettleKind.ofCode(r.readVarInt());
            Map<String, Object> props = r.readBoolean() ? ValueCodec.readStringMap(r) : null;
            batch.addSettlement(new TransactionalBatch.Settle(address, token, kind, props, r.readString(),
                    r.readString()));
        }
        boolean appended = r.hasRemaining();
        for (TransactionalBatch.Schedule s : scheduled) {
            batch.addSchedule(appended ? new TransactionalBatch.Schedule(s.entityPath(), s.message(),
                    s.sequenceNumber(), r.readString()) : s);
        }
        int cancels = appended ? r.readVarInt() : 0;
        for (int i = 0; i < cancels; i++) {
            String path = r.readString();
            int n = r.readVarInt();
            if (n < 0 || n > r.remaining() / Long.BYTES) {
                throw new IllegalArgumentException("A malformed cancel of " + n + " sequence numbers");
            }
            long[] seqs = new long[n];
            for (int k = 0; k < seqs.length; k++) {
                seqs[k] = r.readLong();
            }
            batch.addCancel(new TransactionalBatch.Cancel(path, seqs));
        }
        return batch;
    }
}
