package io.buslane.engine.shard;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An Error that ends a shard's thread is recorded and reported, not lost with a silent thread. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ShardFatalErrorTest {

    @Test
    void anErrorOnTheShardThreadIsReportedOnce() throws Exception {
        Shard shard = new Shard(0, Clock.system(), Storage.of(new InMemoryJournalFactory()).openShard(0));
        CompletableFuture<Throwable> reported = new CompletableFuture<>();
        shard.onFatal(reported::complete);
        shard.start();
        CompletableFuture<Integer> before = shard.call(() -> 42);
        assertThat(before.get(5, TimeUnit.SECONDS)).isEqualTo(42);

        OutOfMemoryError error = new OutOfMemoryError("Java heap space (simulated)");
        shard.submit(() -> {
            throw error;
        });
        assertThat(reported.get(5, TimeUnit.SECONDS)).isSameAs(error);
        assertThat(shard.fatal()).isSameAs(error);
        shard.stop(); // returns: the thread has ended
    }

    @Test
    void whenTheThreadDiesNoCallerWaitsForGood() throws Exception {
        Shard shard = new Shard(0, Clock.system(), Storage.of(new InMemoryJournalFactory()).openShard(0));
        // one cycle: a call that ran and waits for the cycle's sync, then an Error, with a call queued behind it
        CompletableFuture<Integer> parked = shard.call(() -> 7);
        AtomicReference<CompletableFuture<Integer>> behind = new AtomicReference<>();
        shard.submit(() -> {
            behind.set(shard.call(() -> 1));
            throw new OutOfMemoryError("Java heap space (simulated)");
        });
        shard.start();
        for (CompletableFuture<Integer> f : List.of(parked, shard.call(() -> 42))) {
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOfSatisfying(BrokerException.class,
                            e -> assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        }
        assertThatThrownBy(() -> behind.get().get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        shard.stop();
    }
}
