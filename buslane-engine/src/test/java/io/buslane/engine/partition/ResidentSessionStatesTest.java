package io.buslane.engine.partition;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The shard's budget of session states in the heap: LRU eviction after a good sync, pinning after a failed one. */
class ResidentSessionStatesTest {

    private final Map<Long, byte[]> journal = new HashMap<>();

    private SessionEntry entry(long recordId, int length) {
        SessionEntry s = new SessionEntry("s" + recordId, null);
        s.state = new byte[length];
        s.state[0] = (byte) recordId;
        s.stateLength = length;
        s.stateRecordId = recordId;
        journal.put(recordId, s.state.clone());
        return s;
    }

    @Test
    void theLeastRecentlyUsedStatesAreEvictedAfterAGoodSyncAndReadBackWhenNeeded() {
        ResidentSessionStates states = new ResidentSessionStates(250, journal::get);
        SessionEntry a = entry(1, 100);
        SessionEntry b = entry(2, 100);
        SessionEntry c = entry(3, 100);
        states.admit(a);
        states.admit(b);
        states.admit(c);
        assertThat(states.residentBytes()).as("nothing is evicted before the sync").isEqualTo(300);
        states.get(a); // a is used again: b is now the least recently used
        states.afterSync(true);
        assertThat(b.state).isNull();
        assertThat(a.state).isNotNull();
        assertThat(states.residentBytes()).isEqualTo(200);
        assertThat(states.get(b)[0]).isEqualTo((byte) 2);
        assertThat(states.reads()).isEqualTo(1);
    }

    @Test
    void statesWrittenInACycleWhoseSyncFailedAreNeverEvicted() {
        ResidentSessionStates states = new ResidentSessionStates(50, journal::get);
        SessionEntry a = entry(1, 100);
        states.admit(a);
        states.afterSync(false); // its record may be missing: reading it back would fail
        states.afterSync(true);
        assertThat(a.state).isNotNull();
        states.forget(a);
        assertThat(states.residentBytes()).isZero();
    }

    @Test
    void aReplayedStateIsReadBackFromItsRecordWhenFirstNeededNotHeldFromTheStart() {
        ResidentSessionStates states = new ResidentSessionStates(1_000, journal::get);
        SessionEntry a = entry(1, 100);
        states.admitDurable(a);
        assertThat(a.state).isNull();
        assertThat(states.residentBytes()).isZero();
        assertThat(states.get(a)[0]).isEqualTo((byte) 1);
        assertThat(states.reads()).isEqualTo(1);
        assertThat(states.residentBytes()).isEqualTo(100);

        ResidentSessionStates unlimited = ResidentSessionStates.unlimited(); // cannot read back: keeps it
        SessionEntry b = entry(2, 100);
        unlimited.admitDurable(b);
        assertThat(b.state).isNotNull();
    }
}
