package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.Message;
import io.buslane.engine.partition.ManualPartitionContext.TestConsumer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The session state machine on its own, driven with explicit times: accepting a named or the next available
 * session, exclusive locks, renewal and expiry, the order of available sessions, and session state.
 */
class SessionTableTest {

    private static final long T0 = 1_000_000;
    private static final long LOCK_MS = 30_000;

    private final ManualPartitionContext ctx = new ManualPartitionContext(T0);
    /** No owning sub-queue: the tests play its part (the lock timers are checked by hand, not fired). */
    private final SessionTable table = new SessionTable(null, ctx);

    private static Entry entry(long seq) {
        return new Entry(seq, seq, T0, Long.MAX_VALUE, Message.builder().messageId("m" + seq).build(), 10);
    }

    /** A message with sequence number {@code seq} arrives in the session. */
    private SessionEntry arrive(String sessionId, long seq) {
        SessionEntry s = table.getOrCreate(sessionId);
        table.added(s, entry(seq), true);
        return s;
    }

    private static ConsumerSlot slot() {
        return new ConsumerSlot(new TestConsumer(ReceiveMode.PEEK_LOCK, 1), null);
    }

    private static final class Waiter implements SessionWaiter {
        private final ConsumerHandle consumer = new TestConsumer(ReceiveMode.PEEK_LOCK, 1);
        private boolean claimed;

        @Override
        public ConsumerHandle consumer() {
            return consumer;
        }

        @Override
        public boolean tryClaim() {
            if (claimed) {
                return false;
            }
            claimed = true;
            return true;
        }

        @Override
        public boolean isClaimed() {
            return claimed;
        }

        @Override
        public void onAccepted(ConsumerSlot slot, String sessionId, long lockedUntilMs) {
        }
    }

    private static ErrorKind kindOf(Throwable t) {
        return ((BrokerException) t).kind();
    }

    @Test
    void aNamedSessionIsAcceptedEvenWithoutMessagesAndLockedExclusively() {
        SessionEntry s = table.forAccept("a", T0);
        ConsumerSlot holder = slot();

        assertThat(table.lock(s, holder, T0, LOCK_MS)).isEqualTo(T0 + LOCK_MS);

        assertThat(s.holder).isSameAs(holder);
        assertThat(holder.session).isSameAs(s);
        assertThat(s.isScheduled()).isTrue();
        assertThat(s.deadlineMs()).isEqualTo(T0 + LOCK_MS);
        assertThat(table.lockedAt("a", T0 + LOCK_MS - 1)).isTrue();
        assertThat(table.lockedUntil("a", T0 + 1, null)).isEqualTo(T0 + LOCK_MS);
        assertThatThrownBy(() -> table.forAccept("a", T0 + 1))
                .satisfies(e -> assertThat(kindOf(e)).isEqualTo(ErrorKind.SESSION_CANNOT_BE_LOCKED))
                .hasMessageContaining("'a'");
        // a locked session is never offered to accept-next-session
        arrive("a", 1);
        assertThat(table.firstAvailable()).isNull();
    }

    @Test
    void aRequestActingForAReceiverSucceedsOnlyWhileThatReceiverHoldsTheSession() {
        ConsumerSlot holder = slot();
        table.lock(table.forAccept("a", T0), holder, T0, LOCK_MS);
        ConsumerHandle other = new TestConsumer(ReceiveMode.PEEK_LOCK, 1);

        assertThat(table.lockedUntil("a", T0 + 1, holder.consumer())).isEqualTo(T0 + LOCK_MS);
        assertThat(table.renew("a", T0 + 1, LOCK_MS, holder.consumer())).isEqualTo(T0 + 1 + LOCK_MS);
        assertThatThrownBy(() -> table.lockedUntil("a", T0 + 2, other))
                .satisfies(e -> assertThat(kindOf(e)).isEqualTo(ErrorKind.SESSION_LOCK_LOST));
        assertThatThrownBy(() -> table.renew("a", T0 + 2, LOCK_MS, other))
                .satisfies(e -> assertThat(kindOf(e)).isEqualTo(ErrorKind.SESSION_LOCK_LOST));
        assertThat(table.lockedUntil("a", T0 + 2, null)).isEqualTo(T0 + 1 + LOCK_MS); // any holder
    }

    @Test
    void aRenewedLockRunsOutAtItsNewTimeAndTheSessionIsAvailableAgain() {
        SessionEntry s = arrive("a", 1);
        table.lock(table.forAccept("a", T0), slot(), T0, LOCK_MS);

        assertThat(table.renew("a", T0 + 20_000, LOCK_MS, null)).isEqualTo(T0 + 20_000 + LOCK_MS);
        assertThat(s.deadlineMs()).isEqualTo(T0 + 20_000 + LOCK_MS);

        // the first timer (armed for the old time) finds the lock renewed and re-arms
        assertThat(table.lockRanOut(s, T0 + LOCK_MS)).isFalse();
        assertThat(table.lockedAt("a", T0 + LOCK_MS)).isTrue();
        assertThat(table.lockRanOut(s, T0 + 20_000 + LOCK_MS)).isTrue();
        assertThat(table.lockedAt("a", T0 + 20_000 + LOCK_MS)).isFalse();
        assertThatThrownBy(() -> table.lockedUntil("a", T0 + 20_000 + LOCK_MS, null))
                .satisfies(e -> assertThat(kindOf(e)).isEqualTo(ErrorKind.SESSION_LOCK_LOST));
        assertThatThrownBy(() -> table.renew("a", T0 + 20_000 + LOCK_MS, LOCK_MS, null))
                .satisfies(e -> assertThat(kindOf(e)).isEqualTo(ErrorKind.SESSION_LOCK_LOST));
        // a run-out lock no longer keeps another receiver out
        assertThat(table.forAccept("a", T0 + 20_000 + LOCK_MS)).isSameAs(s);

        table.unlock(s);
        table.reindex(s);

        assertThat(s.holder).isNull();
        assertThat(s.isScheduled()).isFalse();
        assertThat(table.firstAvailable()).isSameAs(s);
        assertThat(table.lockRanOut(s, T0 + 100_000)).isFalse(); // a timer for a released session does nothing
    }

    @Test
    void availableSessionsAreOfferedInTheOrderOfTheirOldestMessage() {
        SessionEntry b = arrive("b", 5);
        SessionEntry a = arrive("a", 7);
        SessionEntry c = arrive("c", 3);
        arrive("c", 8);

        assertThat(table.firstAvailable()).isSameAs(c);
        table.lock(c, slot(), T0, LOCK_MS);
        assertThat(table.firstAvailable()).isSameAs(b);
        table.lock(b, slot(), T0, LOCK_MS);
        assertThat(table.firstAvailable()).isSameAs(a);
        table.lock(a, slot(), T0, LOCK_MS);
        assertThat(table.firstAvailable()).isNull();

        table.unlock(b);
        table.reindex(b);
        assertThat(table.firstAvailable()).isSameAs(b);
    }

    @Test
    void waitersTakeTheAvailableSessionsInTurnAndClaimedWaitersAreSkipped() {
        Waiter gone = new Waiter();
        gone.tryClaim(); // e.g. timed out, or served by another partition
        Waiter first = new Waiter();
        Waiter second = new Waiter();
        table.addWaiter(gone);
        table.addWaiter(first);
        table.addWaiter(second);

        assertThat(table.nextAcceptance()).isNull(); // no session with messages yet

        SessionEntry a = arrive("a", 2);
        SessionTable.Acceptance got = table.nextAcceptance();
        assertThat(got.waiter()).isSameAs(first);
        assertThat(got.session()).isSameAs(a);
        assertThat(first.isClaimed()).isTrue();
        table.lock(a, slot(), T0, LOCK_MS);
        assertThat(table.nextAcceptance()).isNull(); // the only session is locked

        arrive("b", 3);
        assertThat(table.nextAcceptance().waiter()).isSameAs(second);
        assertThat(table.nextAcceptance()).isNull();
    }

    @Test
    void aSessionWithOnlyDeferredMessagesIsNotAvailableAndAnEmptySessionIsForgotten() {
        SessionEntry s = table.getOrCreate("a");
        Entry deferred = entry(4);
        deferred.status = Entry.DEFERRED;
        table.added(s, deferred, true);
        assertThat(table.firstAvailable()).isNull();
        assertThat(table.ids(Long.MIN_VALUE, null, Integer.MAX_VALUE)).containsExactly("a");

        Entry ready = entry(6);
        table.added(s, ready, true);
        assertThat(table.firstAvailable()).isSameAs(s);

        table.removed(s, ready);
        assertThat(table.firstAvailable()).isNull();
        table.removed(s, deferred);
        assertThat(table.size()).isZero();
        assertThat(table.get("a")).isNull();
    }

    @Test
    void sessionStateIsSetReadAndClearedWithItsRecords() {
        table.setState("a", new byte[] {1, 2, 3}, T0 + 5);

        assertThat(table.state("a")).containsExactly(1, 2, 3);
        assertThat(table.stateBytes()).isEqualTo(3);
        assertThat(table.get("a").lastUpdatedMs()).isEqualTo(T0 + 5);
        assertThat(table.ids(T0 + 5, null, Integer.MAX_VALUE)).containsExactly("a");
        assertThat(table.ids(T0 + 6, null, Integer.MAX_VALUE)).isEmpty();

        table.setState("a", new byte[] {9}, T0 + 7);
        assertThat(table.state("a")).containsExactly(9);
        assertThat(table.stateBytes()).isEqualTo(1);

        table.setState("a", null, T0 + 8);
        assertThat(table.state("a")).isNull();
        assertThat(table.stateBytes()).isZero();
        assertThat(table.size()).isZero(); // no messages, no state, no lock: forgotten
        assertThat(ctx.log.records).containsExactly("sessionStateWritten a", "sessionStateWritten a",
                "sessionStateCleared a");
        assertThat(table.state("unknown")).isNull();
    }

    @Test
    void replayRestoresAndForgetsStateWithoutRecords() {
        table.restoreState("a", new byte[] {1, 2}, 42, T0 - 10);
        arrive("b", 1);
        table.touch(table.get("b"), T0);

        assertThat(table.state("a")).containsExactly(1, 2);
        assertThat(table.get("a").stateRecordId()).isEqualTo(42);
        assertThat(table.stateBytes()).isEqualTo(2);
        assertThat(table.ids(Long.MIN_VALUE, null, Integer.MAX_VALUE)).containsExactly("a", "b");
        // for a real time only state changes count: a's state was written before T0, b has no state
        assertThat(table.ids(T0 - 10, null, Integer.MAX_VALUE)).containsExactly("a");
        assertThat(table.ids(T0, null, Integer.MAX_VALUE)).isEmpty();

        table.clearStateForReplay("a");
        assertThat(table.get("a")).isNull();
        assertThat(table.stateBytes()).isZero();
        assertThat(ctx.log.records).isEmpty();

        List<String> seen = new ArrayList<>();
        table.forEach(s -> seen.add(s.id()));
        assertThat(seen).containsExactly("b");
    }
}
