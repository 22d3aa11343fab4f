package io.buslane.engine;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
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

    /**
     * While answers are held, no message is handed out (it would reach its receiver only when the batch is stored,
     * its lock perhaps run out and the message taken by another receiver meanwhile): two receivers never hold one
     * message, and the one that gets it gets a lock that is current. Before, the first receiver's delivery waited
     * with the held answers, its lock ran out, the second receiver got the message, and both were handed it.
     */
    @Test
    void noMessageIsHandedOutWhileAnswersAreHeldSoNoTwoReceiversGetIt() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue(QueueProperties.builder("q").lockDuration(Duration.ofSeconds(5)).build());
            h.send("q", EngineHarness.text("a"));
            InMemoryJournal journal = h.journals.journal("shard-0");
            journal.unavailable(true);
            CompletableFuture<Void> held = h.engine.send("q", List.of(EngineHarness.text("b")));
            h.engine.runUntilIdle();
            EngineHarness.Sink first = h.sink();
            EngineHarness.Sink second = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, first, 1);
            h.receiver("q", ReceiveMode.PEEK_LOCK, second, 1);
            h.advance(Duration.ofSeconds(6)); // longer than a lock: one taken now would have run out
            h.advance(Duration.ofSeconds(6));
            assertThat(held).isNotDone();

            journal.unavailable(false);
            h.advance(Duration.ofSeconds(1)); // the batch is stored
            h.advance(Duration.ofMillis(200)); // hand-outs go on at their next try
            List<ReceivedMessage> got = new ArrayList<>(first.take());
            got.addAll(second.take());
            assertThat(got).extracting(EngineHarness::text).containsExactlyInAnyOrder("a", "b");
            for (ReceivedMessage m : got) {
                h.await(h.engine.complete(Q, m.lockToken())); // each lock handed out is current
            }
            assertThat(held).isCompleted();
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
