package io.buslane.engine.shard;

import io.buslane.common.time.Clock;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Closing the journals after a shard thread that did not stop in time: the answers that thread holds for a kept
 * batch are its own to fail (when its last cycle ends), never failed from the closing thread while it still runs
 * and may touch them.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ShardStopTest {

    @Test
    void aThreadThatHasNotStoppedFailsItsHeldAnswersItselfWhenItsLastCycleEnds() throws Exception {
        InMemoryJournalFactory journals = new InMemoryJournalFactory();
        Shard shard = new Shard(0, Clock.system(), Storage.of(journals).openShard(0));
        journals.journal("shard-0").unavailable(true); // the cycle's sync fails and the journal keeps the batch
        shard.stopWait(200);
        shard.start();
        CompletableFuture<Integer> held = shard.call(() -> { // an operation that writes a record
            journals.journal("shard-0").append(JournalRecord.add(1, (byte) 1, new byte[] {1}));
            return 7;
        });
        AtomicReference<String> failedOn = new AtomicReference<>();
        CompletableFuture<Integer> observed = held.whenComplete((v, e) -> failedOn.set(Thread.currentThread()
                .getName()));
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch again = new CountDownLatch(1);
        shard.submit(() -> { // a command that does not return for a while, as a journal call that hangs
            stuck.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(stuck.await(5, TimeUnit.SECONDS)).isTrue();
        release.countDown(); // one cycle: its sync fails, the journal keeps the batch, the answer is held
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!journals.journal("shard-0").needsSync() && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // the cycle's sync failing is the shard thread's next step
        }
        assertThat(journals.journal("shard-0").needsSync()).as("the batch kept").isTrue();
        shard.submit(() -> { // stuck again, now with the answer held
            try {
                again.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(held).as("held for the kept batch").isNotDone();

        shard.stop(); // gives up waiting after 200 ms
        assertThat(shard.threadAlive()).isTrue();
        new Shards(new Shard[] {shard}).closeJournals();
        assertThat(held).as("not failed from the closing thread while the shard thread still runs").isNotDone();

        again.countDown();
        assertThatThrownBy(() -> observed.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        assertThat(failedOn.get()).as("failed by the shard's own thread").isEqualTo("buslane-shard-0");
    }
}
