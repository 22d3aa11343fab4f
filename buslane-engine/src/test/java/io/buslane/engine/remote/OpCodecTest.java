package io.buslane.engine.remote;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.PartitionOp.Settle.Disposition;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The operations and results on the cluster channel, protocol version 1: every operation value is written as the
 * bytes the first build's one-record layout wrote for it (pinned here, so nodes of this build and of before the
 * sealed values read each other), reads back equal, and every code has its reader; every result type likewise.
 */
class OpCodecTest {

    private static final UUID U = new UUID(0x0102030405060708L, 0x090a0b0c0d0e0f10L);

    private static byte[] bytes(PartitionOp<?> op) {
        RecordWriter w = new RecordWriter();
        OpCodec.write(w, op);
        return w.toByteArray();
    }

    private static Map<PartitionOp<?>, String> pinned() {
        Message m = Message.builder().messageId("id-1").sessionId("s").body("hi".getBytes(StandardCharsets.UTF_8))
                .build();
        Message sch = Message.builder().messageId("id-2").scheduledEnqueueTimeMs(42L).body(new byte[] {1}).build();
        UUID u = U;
        Map<PartitionOp<?>, String> pinned = new LinkedHashMap<>();
        pinned.put(new PartitionOp.Send("q", 1, List.of(m), "k1"),
                "000271010201230a0569642d310273080042036869036b3100000000000000000000000000000000"
                + "00");
        pinned.put(new PartitionOp.SendScheduled("q", 1, sch, "k2", 77),
                "0002710102018380010a0569642d32540800410201036b320000000002000000000000004d000000"
                + "000000000000000000");
        pinned.put(new PartitionOp.Schedule("q", 0, sch),
                "0102710002018380010a0569642d32540800410201000000000000000000000000000000000000");
        pinned.put(new PartitionOp.ReserveScheduled("q", 0, sch),
                "1802710002018380010a0569642d32540800410201000000000000000000000000000000000000");
        pinned.put(new PartitionOp.CancelScheduled("q", 0, new long[] {5}),
                "02027100000000000000020000000000000005000000000000000000000000");
        pinned.put(new PartitionOp.Settle("q", 0, Disposition.COMPLETE, u, null, null, null),
                "030271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        pinned.put(new PartitionOp.Settle("t/Subscriptions/s", 2, Disposition.DEAD_LETTER, u, Map.of("a", "b"), "why",
                        "text"),
                "0712742f537562736372697074696f6e732f73020000010102030405060708090a0b0c0d0e0f1001"
                + "0102610a026204776879057465787400000000000000000000000000");
        pinned.put(new PartitionOp.RenewLock("q", 0, u),
                "080271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        pinned.put(new PartitionOp.ReceiveDeferred("q", 0, new long[] {3, 4}, ReceiveMode.RECEIVE_AND_DELETE, "s", u),
                "090271000000010102030405060708090a0b0c0d0e0f100000000300000000000000030000000000"
                + "00000400027300020000000000000000");
        pinned.put(new PartitionOp.Peek("q", 0, 9, 10, "s"),
                "0a0271000000000000000200000000000000090a027300000000000000000000");
        pinned.put(new PartitionOp.PeekScheduled("t", 0, 9, 10),
                "0b0274000000000000000200000000000000090a0000000000000000000000");
        pinned.put(new PartitionOp.Counts("q", 0),
                "0c02710000000000000000000000000000000000000000");
        pinned.put(new PartitionOp.GetSessionState("q", 0, "s"),
                "0d0271000000000000000000027300000000000000000000");
        pinned.put(new PartitionOp.SetSessionState("q", 0, "s", new byte[] {7, 8}),
                "0e02710000000000000000000273030708000000000000000000");
        pinned.put(new PartitionOp.RenewSessionLock("q", 0, "s", u),
                "0f0271000000010102030405060708090a0b0c0d0e0f100000000000027300000000000000000000");
        pinned.put(new PartitionOp.CheckSessionLocked("q", 0, "s", null),
                "100271000000000000000000027300000000000000000000");
        pinned.put(new PartitionOp.Receive("q", 0, "poll", u, 5, ReceiveMode.PEEK_LOCK, 1000),
                "110271000005706f6c6c010102030405060708090a0b0c0d0e0f1000000000050000010000000000"
                + "0003e8");
        pinned.put(new PartitionOp.EndReceive("q", 0, "poll"),
                "120271000005706f6c6c0000000000000000000000000000000000");
        pinned.put(new PartitionOp.AcceptSession("q", 0, "s", ReceiveMode.PEEK_LOCK, 500),
                "1302710000000000000000010273000100000000000001f4");
        pinned.put(new PartitionOp.ReleaseSession("q", 0, u),
                "140271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        pinned.put(new PartitionOp.Purge("q/$DeadLetterQueue", 0),
                "1513712f24446561644c657474657251756575650000000000000000000000000000000000000000");
        pinned.put(new PartitionOp.DeleteMessages("q", 0, 1000, 3, "s"),
                "160271000000000000000200000000000003e803027300000000000000000000");
        pinned.put(new PartitionOp.ListSessions("q", 0, -1, 20, "a"),
                "1702710000000000000002ffffffffffffffff14026100000000000000000000");
        pinned.put(new PartitionOp.Commit("q", 0, new byte[] {1, 2, 3}),
                "1902710000000000000000000004010203000000000000000000");
        pinned.put(new PartitionOp.Settle("q", 0, Disposition.ABANDON, u, null, null, null),
                "040271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        pinned.put(new PartitionOp.Settle("q", 0, Disposition.RELEASE, u, null, null, null),
                "050271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        pinned.put(new PartitionOp.Settle("q", 0, Disposition.DEFER, u, null, null, null),
                "060271000000010102030405060708090a0b0c0d0e0f1000000000000000000000000000000000");
        return pinned;
    }

    @Test
    void everyOperationKeepsTheBytesOfProtocolVersionOneAndReadsBackEqual() {
        Set<OpCode> seen = EnumSet.noneOf(OpCode.class);
        pinned().forEach((op, hex) -> {
            assertThat(HexFormat.of().formatHex(bytes(op))).as(op.toString()).isEqualTo(hex);
            PartitionOp<?> back = OpCodec.read(new RecordReader(HexFormat.of().parseHex(hex)));
            assertThat(back).as(op.toString()).usingRecursiveComparison().ignoringFields("messages", "message")
                    .isEqualTo(op);
            assertThat(back.getClass()).isEqualTo(op.getClass());
            seen.add(op.code());
        });
        assertThat(seen).as("every code pinned").containsExactlyInAnyOrder(OpCode.values());
    }

    @Test
    void onlyKeyedSendsReadsAndReleasesAreSentAgainAfterALostAnswer() {
        // what may run twice on the owner when a connection closes before the answer: a send the owner takes once
        // by its transfer key, what only reads, and letting a session go (by its holder's id: once gone, a no-op);
        // never a purge (a second run deletes what arrived since)
        Set<OpCode> resent = EnumSet.noneOf(OpCode.class);
        pinned().keySet().stream().filter(PartitionOp::resendable).forEach(op -> resent.add(op.code()));
        assertThat(resent).containsExactlyInAnyOrder(OpCode.SEND, OpCode.PEEK,
                OpCode.PEEK_SCHEDULED, OpCode.COUNTS, OpCode.GET_SESSION_STATE, OpCode.LIST_SESSIONS,
                OpCode.END_RECEIVE, OpCode.RELEASE_SESSION);
        assertThat(new PartitionOp.Send("q", 0, List.of(), null).resendable()).as("a send without a key").isFalse();
    }

    @Test
    void aSendWithEveryMessageFieldSurvives() {
        Message m = Message.builder().messageId("id-1").sessionId("s").partitionKey("s")
                .scheduledEnqueueTimeMs(42L).applicationProperty("n", 7L)
                .body("hello".getBytes(StandardCharsets.UTF_8)).build();
        PartitionOp.Send back = (PartitionOp.Send) OpCodec.read(new RecordReader(bytes(
                new PartitionOp.Send("t", 3, List.of(m, m), "key"))));
        assertThat(back.transferKey()).isEqualTo("key");
        assertThat(back.messages()).hasSize(2);
        assertThat(back.messages().get(0).messageId()).isEqualTo("id-1");
        assertThat(back.messages().get(0).scheduledEnqueueTimeMs()).isEqualTo(42L);
        assertThat(back.messages().get(0).applicationProperties()).containsEntry("n", 7L);
        assertThat(back.messages().get(0).body()).isEqualTo(m.body());
        PartitionOp.Settle settle = new PartitionOp.Settle("t/Subscriptions/s/$DeadLetterQueue", 3,
                Disposition.DEAD_LETTER, UUID.randomUUID(), Map.of("a", "b", "c", 1.5d), "reason", "description");
        assertThat(OpCodec.read(new RecordReader(bytes(settle)))).usingRecursiveComparison().isEqualTo(settle);
    }

    @Test
    void anUnknownCodeOrAMissingFieldIsRefusedNotGuessed() {
        RecordWriter w = new RecordWriter();
        w.writeVarInt(99);
        assertThatThrownBy(() -> OpCodec.read(new RecordReader(w.toByteArray())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Unknown op code 99");
        assertThat(OpCode.ofCode(99)).isNull();
        assertThat(OpCode.ofCode(-1)).isNull();
        // a PEEK without its sequence number, a SCHEDULE without its message, a COMMIT without its transaction
        for (OpCode code : List.of(OpCode.PEEK, OpCode.SCHEDULE, OpCode.COMMIT, OpCode.CANCEL_SCHEDULED)) {
            byte[] counts = bytes(new PartitionOp.Counts("q", 0)); // every slot empty
            counts[0] = (byte) code.code();
            assertThatThrownBy(() -> OpCodec.read(new RecordReader(counts))).as(code.name())
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void everyResultTypeKeepsItsBytes() {
        UUID u = U;
        ReceivedMessage received = new ReceivedMessage(Message.builder().messageId("x").body(new byte[] {9}).build(),
                (1L << 48) + 5, 1000, 2, u, 2000, MessageState.DEFERRED, 3000, 4000L, "src", 1);
        assertResult(OpResult.LONG, 123L,
                "000000000000007b");
        assertResult(OpResult.COUNTS, new RuntimeCounts(1, 2, 3, 4, 5, 6),
                "00000000000000010000000000000002000000000000000300000000000000040000000000000005"
                + "0000000000000006");
        assertResult(OpResult.BYTES, new byte[] {1},
                "0201");
        assertResult(OpResult.COUNT, 7,
                "07");
        assertResult(OpResult.IDS, List.of("a", "b"),
                "0202610262");
        assertResult(OpResult.GRANT, new PartitionOp.SessionGrant(u, "s", 99L),
                "010102030405060708090a0b0c0d0e0f1002730000000000000063");
        assertResult(OpResult.RECEIVED, List.of(received),
                "0101030a02780800410209000100000000000500000000000003e802010102030405060708090a0b"
                + "0c0d0e0f1000000000000007d0020000000000000bb801c03e0473726301");
        RecordWriter w = new RecordWriter();
        OpResult.BYTES.write(w, null);
        assertThat(OpResult.BYTES.read(new RecordReader(w.toByteArray()))).isNull();
        w.reset();
        OpResult.NONE.write(w, null);
        assertThat(w.size()).isZero();
    }

    private static <R> void assertResult(OpResult<R> codec, R value, String hex) {
        RecordWriter w = new RecordWriter();
        codec.write(w, value);
        assertThat(HexFormat.of().formatHex(w.toByteArray())).isEqualTo(hex);
        R back = codec.read(new RecordReader(HexFormat.of().parseHex(hex)));
        if (value instanceof byte[] b) {
            assertThat((byte[]) back).containsExactly(b);
        } else {
            assertThat(back).usingRecursiveComparison().isEqualTo(value);
        }
    }

    @Test
    void codesAreTheFirstBuildsOrdinals() {
        assertThat(Arrays.stream(OpCode.values()).mapToInt(OpCode::code)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8,
                9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25);
    }
}
