package io.buslane.engine.persist.record;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.OpCode;
import io.buslane.engine.txn.TransactionalBatch;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins every shard journal record's layout and every code that reaches the disk or the wire, as existing data
 * directories and databases (and nodes of another build) hold them: the expected bytes are spelled out field by
 * field from the layouts in each record class's Javadoc, with a builder of its own, so that a change to a writer
 * (a field moved, a width changed, an enum reordered) fails here instead of in a replay. The message inside the
 * records is pinned once, as hex ({@link #MESSAGE_HEX}).
 */
class RecordLayoutGoldenTest {

    /** A message with a few fields set, as {@link MessageCodec} writes it today. */
    private static final Message MESSAGE = Message.builder().messageId("m-1").sessionId("s-1").subject("label")
            .applicationProperty("n", 7).body(new byte[] {1, 2, 3}).build();
    private static final String MESSAGE_HEX = "01a7010a046d2d31066c6162656c04732d3101026e050e08006404010203";

    /** An independent writer of the record encoding: unsigned LEB128 var-ints, big-endian fixed widths. */
    private static final class Bytes {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Bytes varLong(long v) {
            while ((v & ~0x7FL) != 0) {
                out.write((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            out.write((int) v);
            return this;
        }

        Bytes b(int v) {
            out.write(v);
            return this;
        }

        Bytes bool(boolean v) {
            return b(v ? 1 : 0);
        }

        Bytes l(long v) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                out.write((int) (v >>> shift));
            }
            return this;
        }

        Bytes str(String s) {
            if (s == null) {
                return varLong(0);
            }
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            varLong(utf8.length + 1);
            out.write(utf8, 0, utf8.length);
            return this;
        }

        Bytes bytes(byte[] v) {
            varLong(v.length + 1);
            out.write(v, 0, v.length);
            return this;
        }

        Bytes message() {
            byte[] m = HexFormat.of().parseHex(MESSAGE_HEX);
            out.write(m, 0, m.length);
            return this;
        }

        byte[] toArray() {
            return out.toByteArray();
        }
    }

    private static byte[] written(Consumer<RecordWriter> write) {
        RecordWriter w = new RecordWriter();
        write.accept(w);
        return Arrays.copyOf(w.buffer(), w.size());
    }

    @Test
    void theMessageInsideTheRecordsIsWrittenAsToday() {
        assertThat(HexFormat.of().formatHex(written(w -> MessageCodec.write(w, MESSAGE)))).isEqualTo(MESSAGE_HEX);
    }

    @Test
    void recordTypeCodes() {
        assertThat(new byte[] {ShardMetaRecord.TYPE, PartitionRecord.TYPE, QueueMessageRecord.TYPE,
            TopicBodyRecord.TYPE, SubscriptionRefRecord.TYPE, EntryStateRecord.TYPE, ScheduledRecord.TYPE,
            SessionStateRecord.TYPE, TransferRecord.TYPE, KeyBlockRecord.TYPE_LEGACY, KeyBlockRecord.TYPE})
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    }

    @Test
    void shardMetaAndPartition() {
        assertThat(written(w -> ShardMetaRecord.write(w, 300, 1_700_000_000_000L)))
                .isEqualTo(new Bytes().varLong(300).l(1_700_000_000_000L).toArray());
        // a record of the first format has no clock floor
        assertThat(ShardMetaRecord.read(new RecordReader(new Bytes().varLong(300).toArray())))
                .isEqualTo(new ShardMetaRecord(300, -1));
        assertThat(ShardMetaRecord.read(new RecordReader(new Bytes().varLong(300).l(1_700_000_000_000L).toArray())))
                .isEqualTo(new ShardMetaRecord(300, 1_700_000_000_000L));
        assertThat(written(w -> PartitionRecord.write(w, 17, 3, 9_999)))
                .isEqualTo(new Bytes().varLong(17).varLong(3).l(9_999).toArray());
    }

    @Test
    void messagesOfQueuesTopicsAndTheirSubscriptions() {
        byte[] queueMessage = new Bytes().varLong(21).b(1).l(5).l(1_000).l(Long.MAX_VALUE).message().toArray();
        assertThat(written(w -> QueueMessageRecord.write(w, 21, SubQueue.DEAD_LETTER, 5, 1_000, Long.MAX_VALUE,
                MESSAGE))).isEqualTo(queueMessage);
        QueueMessageRecord q = QueueMessageRecord.read(new RecordReader(queueMessage));
        assertThat(q.subQueue()).isEqualTo(SubQueue.DEAD_LETTER);
        assertThat(q.message().messageId()).isEqualTo("m-1");

        assertThat(written(w -> TopicBodyRecord.write(w, 21, 6, 2_000, MESSAGE)))
                .isEqualTo(new Bytes().varLong(21).l(6).l(2_000).message().toArray());
        byte[] ref = new Bytes().varLong(21).varLong(40).varLong(130).b(2).l(3_000).toArray();
        assertThat(written(w -> SubscriptionRefRecord.write(w, 21, 40, 130, SubQueue.TRANSFER_DEAD_LETTER, 3_000)))
                .isEqualTo(ref);
        assertThat(SubscriptionRefRecord.read(new RecordReader(ref)))
                .isEqualTo(new SubscriptionRefRecord(21, 40, 130, SubQueue.TRANSFER_DEAD_LETTER, 3_000));
    }

    @Test
    void entryStateWithAndWithoutAModifiedMessage() {
        assertThat(written(w -> EntryStateRecord.write(w, SubQueue.MAIN, 3, true, null, null)))
                .isEqualTo(new Bytes().b(0).varLong(3).bool(true).bool(false).str(null).toArray());
        byte[] modified = new Bytes().b(1).varLong(10).bool(false).bool(true).message().str("orders").toArray();
        assertThat(written(w -> EntryStateRecord.write(w, SubQueue.DEAD_LETTER, 10, false, MESSAGE, "orders")))
                .isEqualTo(modified);
        EntryStateRecord back = EntryStateRecord.read(new RecordReader(modified));
        assertThat(back.deadLetterSource()).isEqualTo("orders");
        assertThat(back.modifiedMessage().subject()).isEqualTo("label");
    }

    @Test
    void scheduledSessionStateAndTransfer() {
        assertThat(written(w -> ScheduledRecord.write(w, 21, 7, 1_000, 5_000, MESSAGE)))
                .isEqualTo(new Bytes().varLong(21).l(7).l(1_000).l(5_000).message().toArray());
        assertThat(written(w -> SessionStateRecord.write(w, 21, 40, "s-1", 4_000, new byte[] {9, 8})))
                .isEqualTo(new Bytes().varLong(21).varLong(40).str("s-1").l(4_000).bytes(new byte[] {9, 8})
                        .toArray());
        // a forward of the first format, then a message parked in a via entity, then one scheduled through it
        assertThat(written(w -> TransferRecord.write(w, 21, 40, true, 8, 1_000, MESSAGE, null, -1)))
                .isEqualTo(new Bytes().varLong(21).varLong(40).bool(true).l(8).l(1_000).message().toArray());
        assertThat(written(w -> TransferRecord.write(w, 21, 40, false, -1, 1_000, MESSAGE, "dest", -1)))
                .isEqualTo(new Bytes().varLong(21).varLong(40).bool(false).l(-1).l(1_000).message().str("dest")
                        .toArray());
        byte[] reserved = new Bytes().varLong(21).varLong(40).bool(false).l(-1).l(1_000).message().str("dest")
                .l(77).toArray();
        assertThat(written(w -> TransferRecord.write(w, 21, 40, false, -1, 1_000, MESSAGE, "dest", 77)))
                .isEqualTo(reserved);
        assertThat(TransferRecord.read(new RecordReader(reserved)).reservedSeq()).isEqualTo(77);
    }

    @Test
    void keyBlocks() {
        byte[] block = new Bytes().varLong(21).b(1).varLong(2).l(1).l(2).l(3).l(4).l(5).l(6).toArray();
        assertThat(written(w -> {
            KeyBlockRecord.writeHead(w, 21, (byte) 1, 2);
            KeyBlockRecord.writeKey(w, 1, 2, 3);
            KeyBlockRecord.writeKey(w, 4, 5, 6);
        })).isEqualTo(block);
        assertThat(KeyBlockRecord.readHead(new RecordReader(block))).isEqualTo(new KeyBlockRecord(21, (byte) 1));
        assertThat(KeyBlockRecord.readKeys(new RecordReader(block), KeyBlockRecord.TYPE))
                .containsExactly(1, 2, 3, 4, 5, 6);
        // a block of the first format: the same layout, its low hashes tagged as legacy when read
        assertThat(KeyBlockRecord.readKeys(new RecordReader(block), KeyBlockRecord.TYPE_LEGACY))
                .containsExactly(1, DedupWindow.legacyTagged(2), 3, 4,
                        DedupWindow.legacyTagged(5), 6);
    }

    /** Codes of the enums the journal and the cluster channel carry: never change or reuse one. */
    @Test
    void enumCodesOnDiskAndOnTheWire() {
        assertThat(Arrays.stream(SubQueue.values()).mapToInt(SubQueue::code)).containsExactly(0, 1, 2);
        assertThat(Arrays.stream(ReceiveMode.values()).mapToInt(ReceiveMode::code)).containsExactly(0, 1);
        assertThat(Arrays.stream(MessageState.values()).mapToInt(MessageState::code)).containsExactly(0, 1, 2);
        assertThat(Arrays.stream(TransactionalBatch.SettleKind.values()).mapToInt(TransactionalBatch.SettleKind::code))
                .containsExactly(0, 1, 2, 3);
        Map<String, Integer> codes = new TreeMap<>();
        for (OpCode k : OpCode.values()) {
            codes.put(k.name(), k.code());
        }
        assertThat(codes).as("the first build's ordinals, by name").isEqualTo(new TreeMap<>(Map
                .ofEntries(entry("SEND", 0), entry("SCHEDULE", 1),
                        entry("CANCEL_SCHEDULED", 2), entry("COMPLETE", 3),
                        entry("ABANDON", 4), entry("RELEASE", 5),
                        entry("DEFER", 6), entry("DEAD_LETTER", 7),
                        entry("RENEW_LOCK", 8), entry("RECEIVE_DEFERRED", 9),
                        entry("PEEK", 10), entry("PEEK_SCHEDULED", 11),
                        entry("COUNTS", 12), entry("GET_SESSION_STATE", 13),
                        entry("SET_SESSION_STATE", 14), entry("RENEW_SESSION_LOCK", 15),
                        entry("CHECK_SESSION_LOCKED", 16), entry("RECEIVE", 17),
                        entry("END_RECEIVE", 18), entry("ACCEPT_SESSION", 19),
                        entry("RELEASE_SESSION", 20), entry("PURGE", 21),
                        entry("DELETE_MESSAGES", 22), entry("LIST_SESSIONS", 23),
                        entry("RESERVE_SCHEDULED", 24), entry("COMMIT", 25))));
        for (OpCode k : OpCode.values()) {
            assertThat(OpCode.ofCode(k.code())).isEqualTo(k);
        }
        assertThat(OpCode.ofCode(99)).isNull();
    }
}
