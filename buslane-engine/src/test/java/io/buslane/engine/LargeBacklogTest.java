package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A backlog several times the size of the heap: sent, browsed, received across a restart. Off by default (it writes
 * about 650 MB); run it in a small heap with
 * {@code mvn -pl buslane-engine test -Dtest=LargeBacklogTest -DargLine="-Xmx96m -Dbuslane.largeBacklog=true"}.
 */
@EnabledIfSystemProperty(named = "buslane.largeBacklog", matches = "true")
class LargeBacklogTest {

    private static final int COUNT = 40_000;
    private static final int BODY_BYTES = 16 * 1024;
    private static final long BUDGET = 4L * 1024 * 1024;

    @TempDir
    Path dir;

    private static Message message(int i) {
        byte[] body = new byte[BODY_BYTES];
        ByteBuffer.wrap(body).putInt(i).putInt(BODY_BYTES - 4, ~i);
        return Message.builder().body(body).build();
    }

    private static int check(ReceivedMessage m) {
        ByteBuffer b = ByteBuffer.wrap(m.message().body());
        int i = b.getInt(0);
        assertThat(b.getInt(BODY_BYTES - 4)).isEqualTo(~i);
        return i;
    }

    @Test
    void aBacklogSeveralTimesTheHeapIsAcceptedBrowsedAndDelivered() {
        long maxHeap = Runtime.getRuntime().maxMemory();
        assertThat((long) COUNT * BODY_BYTES).as("backlog vs heap").isGreaterThan(4 * maxHeap);
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, BUDGET, 64L * 1024 * 1024)) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").maxSizeInMegabytes(5 * 1024).build()));
            for (int i = 0; i < COUNT; i += 100) {
                List<Message> batch = new ArrayList<>();
                for (int j = i; j < i + 100; j++) {
                    batch.add(message(j));
                }
                h.send("q", batch);
                assertThat(h.engine.shards().residentMessageBytes()).isLessThanOrEqualTo(BUDGET);
            }
            long next = 0;
            int seen = 0;
            while (true) {
                List<ReceivedMessage> page = h.await(h.engine.peek(EntityAddress.parse("q"), next, 500, null));
                if (page.isEmpty()) {
                    break;
                }
                for (ReceivedMessage m : page) {
                    assertThat(check(m)).isEqualTo(seen++);
                }
                next = page.get(page.size() - 1).sequenceNumber() + 1;
            }
            assertThat(seen).isEqualTo(COUNT);

            h.restart();
            EngineHarness.Sink sink = new EngineHarness.Sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 0);
            int received = 0;
            while (received < COUNT) {
                r.addCredit(200);
                h.engine.runUntilIdle();
                for (ReceivedMessage m : sink.take()) {
                    assertThat(check(m)).isEqualTo(received++);
                    h.await(r.complete(m.lockToken()));
                }
                assertThat(h.engine.shards().residentMessageBytes()).isLessThanOrEqualTo(BUDGET);
            }
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isZero();
            System.out.printf("delivered %d messages of %d bytes (%d MB) with a %d MB heap%n", COUNT, BODY_BYTES,
                    (long) COUNT * BODY_BYTES >> 20, maxHeap >> 20);
        }
    }
}
