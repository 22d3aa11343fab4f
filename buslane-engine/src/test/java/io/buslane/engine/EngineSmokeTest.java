package io.buslane.engine;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class EngineSmokeTest {

    @Test
    void sendReceiveCompleteAndRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", EngineHarness.text("a"), EngineHarness.text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L);
            assertThat(got.get(0).enqueuedTimeMs()).isEqualTo(h.clock.epochMillis());
            h.await(r.complete(got.get(0).lockToken()));
            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink2, 10);
            assertThat(sink2.take()).extracting(EngineHarness::text).containsExactly("b");
            h.send("q", EngineHarness.text("c"));
            assertThat(sink2.take()).extracting(ReceivedMessage::sequenceNumber).containsExactly(3L);
        }
    }
}
