package io.buslane.engine;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * "A send answered as failed is not stored", attacked where a journal keeps a failed batch (PostgreSQL while its
 * database does not answer; the in-memory journal's {@code unavailable} stands in): the shard holds the answers of
 * the batch's operations until a later sync stores it, so that no operation is answered "failed" and stored
 * afterwards (a client's retry would store a second copy), and nothing a stored batch did is left undone (a
 * receive-and-delete whose removal is stored is delivered). Answers still held when the shard stops fail, and then
 * nothing of theirs is stored.
 */
class HeldAnswersTest {

    private static final EntityAddress Q = EntityAddress.parse("q");

    private static List<String> peekAll(EngineHarness h) {
        return h.await(h.engine.peek(Q, 0, 1000, null)).stream().map(EngineHarness::text).toList();
    }

    @Test
    void aSendWhoseBatchTheJournalKeepsIsAnsweredOnceStoredAndStoredOnce() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("q");
            InMemoryJournal journal = h.journals.journal("shard-0");
            journal.unavailable(true);
            CompletableFuture<Void> send = h.engine.send("q", List.of(EngineHarness.text("a")));
            h.engine.runUntilIdle();
            h.advance(Duration.ofSeconds(1)); // more cycles, each of which tries the sync again
            assertThat(send).as("no answer while the batch's fate is open").isNotDone();

            journal.unavailable(false);
            h.engine.runUntilIdle();
            assertThat(send).isCompleted();
            send.join();
            h.crashAndRestart(); // a crash: only what was stored comes back
            assertThat(peekAll(h)).containsExactly("a");
        }
    }

    @Test
    void aReceiveAndDeleteWhoseRemovalWaitsInAKeptBatchIsDeliveredOnceItIsStored() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("q");
            h.send("q", EngineHarness.text("a"));
            InMemoryJournal journal = h.journals.journal("shard-0");
            journal.unavailable(true);
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 1);
            h.advance(Duration.ofSeconds(1));
            assertThat(sink.take()).as("not handed out before its removal is stored").isEmpty();

            journal.unavailable(false);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("a");
            h.crashAndRestart();
            assertThat(peekAll(h)).isEmpty();
        }
    }

    @Test
    void answersStillHeldWhenTheEngineStopsFailRetriablyAndNothingOfThemIsStored() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("q");
            h.send("q", EngineHarness.text("stored"));
            InMemoryJournal journal = h.journals.journal("shard-0");
            journal.unavailable(true);
            CompletableFuture<Void> send = h.engine.send("q", List.of(EngineHarness.text("held")));
            h.engine.runUntilIdle();
            assertThat(send).isNotDone();

            h.engine.close();
            assertThat(send).isCompletedExceptionally();
            assertThatThrownBy(send::join).isInstanceOf(CompletionException.class)
                    .cause().isInstanceOfSatisfying(BrokerException.class,
                            e -> assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY));
            journal.unavailable(false);
            h.crashAndRestart();
            List<ReceivedMessage> left = h.await(h.engine.peek(Q, 0, 1000, null));
            assertThat(left).extracting(EngineHarness::text).containsExactly("stored");
        }
    }
}
