package io.buslane.cluster;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.PartitionOp;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Every field of an operation and every kind of result survives the channel's encoding. */
class ClusterCodecTest {

    private static PartitionOp roundTrip(PartitionOp op) {
        RecordWriter w = new RecordWriter();
        ClusterCodec.writeOp(w, op);
        PartitionOp back = ClusterCodec.readOp(op.kind(), new RecordReader(w.toByteArray()));
        assertThat(ClusterCodec.kindOf(ClusterCodec.opCode(op.kind()))).isEqualTo(op.kind());
        return back;
    }

    private static Object roundTrip(PartitionOp.Kind kind, Object result) {
        RecordWriter w = new RecordWriter();
        ClusterCodec.writeResult(w, kind, result);
        return ClusterCodec.readResult(new RecordReader(w.toByteArray()), kind);
    }

    @Test
    void anOperationWithEveryFieldSet() {
        Message m = Message.builder().messageId("id-1").sessionId("s").partitionKey("s")
                .scheduledEnqueueTimeMs(42L).applicationProperty("n", 7L)
                .body("hello".getBytes(StandardCharsets.UTF_8)).build();
        UUID token = UUID.randomUUID();
        PartitionOp op = new PartitionOp(PartitionOp.Kind.DEAD_LETTER, "t/Subscriptions/s/$DeadLetterQueue", 3,
                List.of(m, m), "key", token, Map.of("a", "b", "c", 1.5d), "reason", "description",
                new long[] {1, Long.MAX_VALUE}, 9, "session", new byte[] {4, 5}, ReceiveMode.RECEIVE_AND_DELETE, 2500L);
        PartitionOp back = roundTrip(op);
        assertThat(back).usingRecursiveComparison().ignoringFields("messages").isEqualTo(op);
        assertThat(back.messages()).hasSize(2);
        assertThat(back.messages().get(0).messageId()).isEqualTo("id-1");
        assertThat(back.messages().get(0).scheduledEnqueueTimeMs()).isEqualTo(42L);
        assertThat(back.messages().get(0).applicationProperties()).containsEntry("n", 7L);
        assertThat(back.messages().get(0).body()).isEqualTo(m.body());
    }

    @Test
    void anOperationWithNothingButItsTarget() {
        PartitionOp op = PartitionOp.of(PartitionOp.Kind.COUNTS, "q", 0);
        assertThat(roundTrip(op)).usingRecursiveComparison().isEqualTo(op);
    }

    @Test
    void everyKindOfResult() {
        assertThat(roundTrip(PartitionOp.Kind.RENEW_LOCK, 123L)).isEqualTo(123L);
        assertThat(roundTrip(PartitionOp.Kind.COMPLETE, null)).isNull();
        RuntimeCounts counts = new RuntimeCounts(1, 2, 3, 4, 5, 6);
        assertThat(roundTrip(PartitionOp.Kind.COUNTS, counts)).isEqualTo(counts);
        assertThat((byte[]) roundTrip(PartitionOp.Kind.GET_SESSION_STATE, new byte[] {1})).containsExactly(1);
        assertThat(roundTrip(PartitionOp.Kind.GET_SESSION_STATE, null)).isNull();
        ReceivedMessage rm = new ReceivedMessage(Message.builder().messageId("x").body(new byte[] {9}).build(),
                (1L << 48) + 5, 1000, 2, UUID.randomUUID(), 2000, MessageState.DEFERRED, 3000, 4000L, "src", 1);
        @SuppressWarnings("unchecked")
        List<ReceivedMessage> back = (List<ReceivedMessage>) roundTrip(PartitionOp.Kind.PEEK, List.of(rm));
        assertThat(back).singleElement().usingRecursiveComparison().ignoringFields("message").isEqualTo(rm);
        assertThat(back.get(0).message().messageId()).isEqualTo("x");
    }
}
