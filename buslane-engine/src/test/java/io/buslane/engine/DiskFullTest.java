package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalFactory;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A nearly full disk refuses new messages up front, changes nothing, and recovers when space returns. */
class DiskFullTest {

    /** In-memory journals on a pretend disk whose free space the test sets. */
    static final class PretendDisk implements JournalFactory {
        final InMemoryJournalFactory journals = new InMemoryJournalFactory();
        volatile long free = Long.MAX_VALUE;

        @Override
        public Journal open(String name) {
            return journals.open(name);
        }

        @Override
        public long usableSpaceBytes() {
            return free;
        }

        @Override
        public void close() {
            journals.close();
        }
    }

    @Test
    void sendsAreRefusedWithResourceLimitExceededWhileTheDiskIsFullAndAcceptedAgainAfterwards() {
        ManualClock clock = new ManualClock();
        PretendDisk disk = new PretendDisk();
        Engine engine = Engine.start(new EngineConfig(clock, Storage.of(disk, 1024 * 1024), 1,
                ThreadingMode.MANUAL));
        engine.createQueue(QueueProperties.builder("q").build());
        engine.runUntilIdle();
        var before = engine.send("q", List.of(EngineHarness.text("before")));
        engine.runUntilIdle();
        before.join();

        disk.free = 512 * 1024;
        clock.advance(Duration.ofSeconds(1));
        var refused = engine.send("q", List.of(EngineHarness.text("refused")));
        engine.runUntilIdle();
        assertThatThrownBy(refused::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(BrokerException.class)
                .satisfies(e -> {
                    BrokerException be = (BrokerException) e.getCause();
                    assertThat(be.kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED);
                    assertThat(be.kind().amqpCondition()).isEqualTo("amqp:resource-limit-exceeded");
                    assertThat(be.description()).contains("disk is full");
                });
        var scheduled = engine.schedule("q", List.of(io.buslane.engine.message.Message.builder()
                .scheduledEnqueueTimeMs(clock.epochMillis() + 60_000).build()));
        engine.runUntilIdle();
        assertThatThrownBy(scheduled::join).hasCauseInstanceOf(BrokerException.class);
        var countsFuture = engine.counts("q");
        engine.runUntilIdle();
        RuntimeCounts counts = countsFuture.join();
        assertThat(counts.activeMessageCount()).isEqualTo(1);
        assertThat(counts.scheduledMessageCount()).isZero();

        disk.free = Long.MAX_VALUE;
        clock.advance(Duration.ofSeconds(1));
        var accepted = engine.send("q", List.of(EngineHarness.text("after")));
        engine.runUntilIdle();
        accepted.join();
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.RECEIVE_AND_DELETE, sink);
        r.addCredit(10);
        engine.runUntilIdle();
        assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("before", "after");
        engine.close();
    }
}
