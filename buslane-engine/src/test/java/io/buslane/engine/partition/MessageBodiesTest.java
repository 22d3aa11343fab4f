package io.buslane.engine.partition;

import io.buslane.engine.message.Message;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The residency rules on their own: newest evicted first and only once durable, pinned after a failed sync, stale
 * slots dropped, modified messages read from their UPDATE, and a bounded read cache.
 */
class MessageBodiesTest {

    /** A "journal": the message of each record id (ADD) and of each entry's latest UPDATE, counting reads. */
    private final Map<Long, Message> adds = new HashMap<>();
    private final Map<Long, Message> updates = new HashMap<>();
    private final List<String> reads = new ArrayList<>();

    private MessageBodies bodies(long budget, long cache) {
        return new MessageBodies(budget, cache, (id, modified) -> {
            reads.add((modified ? "update " : "add ") + id);
            Message m = (modified ? updates : adds).get(id);
            if (m == null) {
                throw new IllegalStateException("no record " + id);
            }
            return m;
        });
    }

    private static Message message(String text, int size) {
        return Message.builder().messageId(text).body(text.getBytes()).encodedSize(size).build();
    }

    private Entry entry(long recordId, int size) {
        Message m = message("m" + recordId, size);
        adds.put(recordId, m);
        return new Entry(recordId, recordId, 0, Long.MAX_VALUE, m, size);
    }

    @Test
    void evictsTheNewestFirstAndOnlyAfterTheSync() {
        MessageBodies bodies = bodies(250, 0);
        List<Entry> entries = new ArrayList<>();
        for (long id = 1; id <= 5; id++) {
            Entry e = entry(id, 100);
            entries.add(e);
            bodies.admit(e);
        }
        assertThat(bodies.residentBytes()).isEqualTo(500);
        assertThat(entries).allSatisfy(e -> assertThat(e.message).isNotNull()); // not durable yet

        bodies.afterSync(true);

        assertThat(bodies.residentBytes()).isEqualTo(200);
        assertThat(entries.subList(0, 2)).allSatisfy(e -> assertThat(e.message).isNotNull());
        assertThat(entries.subList(2, 5)).allSatisfy(e -> assertThat(e.message).isNull());
        assertThat(bodies.evictions()).isEqualTo(3);
        // an evicted message is read back, and the resident ones are not read
        assertThat(bodies.of(entries.get(4)).messageId()).isEqualTo("m5");
        assertThat(bodies.of(entries.get(0)).messageId()).isEqualTo("m1");
        assertThat(reads).containsExactly("add 5");
    }

    @Test
    void scheduledMessagesDueBeyondTheHorizonLeaveTheHeapOnceDurable() {
        MessageBodies bodies = bodies(1_000_000, 0);
        long now = 1_000_000;
        Message soonMessage = message("soon", 100);
        Message laterMessage = message("later", 100);
        adds.put(2L, laterMessage);
        ScheduledEntry soon = new ScheduledEntry(1, 1, now, now + 1_000, soonMessage);
        ScheduledEntry later = new ScheduledEntry(2, 2, now,
                now + MessageBodies.SCHEDULED_RESIDENT_HORIZON_MS + 1, laterMessage);
        bodies.admit(soon, now);
        bodies.admit(later, now);
        assertThat(later.message).isNotNull(); // not durable yet
        assertThat(bodies.residentBytes()).isEqualTo(200);

        bodies.afterSync(true);

        assertThat(soon.message).isNotNull();
        assertThat(later.message).isNull();
        assertThat(bodies.residentBytes()).isEqualTo(100);
        assertThat(bodies.of(later).messageId()).isEqualTo("later");
        assertThat(reads).containsExactly("add 2");

        ScheduledEntry failed = new ScheduledEntry(3, 3, now, now + 60_000, message("failed", 100));
        bodies.admit(failed, now);
        bodies.afterSync(false);
        assertThat(failed.message).isNotNull(); // its record may not be on disk: never evicted
        assertThat(failed.pinned).isTrue();
    }

    @Test
    void holdersAdmittedInACycleWhoseSyncFailedAreNeverEvicted() {
        MessageBodies bodies = bodies(0, 0);
        Entry failed = entry(1, 100);
        bodies.admit(failed);
        bodies.afterSync(false);
        Entry next = entry(2, 100);
        bodies.admit(next);
        bodies.afterSync(true);

        assertThat(failed.message).isNotNull();
        assertThat(failed.pinned).isTrue();
        assertThat(next.message).isNull();
        assertThat(bodies.residentBytes()).isEqualTo(100);
        bodies.release(failed);
        assertThat(bodies.residentBytes()).isZero();
    }

    @Test
    void aModifiedMessageIsResidentUntilItsUpdateIsDurableThenReadFromIt() {
        MessageBodies bodies = bodies(0, 1 << 20);
        Entry e = entry(1, 100);
        bodies.admit(e);
        bodies.afterSync(true);
        assertThat(e.message).isNull();

        Message modified = bodies.of(e).withApplicationProperties(Map.of("k", "v"));
        bodies.modified(e, modified);
        updates.put(1L, modified);
        assertThat(e.message).isSameAs(modified);
        assertThat(bodies.residentBytes()).isEqualTo(100);

        bodies.afterSync(true);
        assertThat(e.message).isNull();
        assertThat(bodies.of(e).applicationProperties()).containsEntry("k", "v");
        assertThat(reads).containsExactly("add 1", "update 1");

        // modified again: the cached copy of the previous modification must not be served
        Message again = modified.withApplicationProperties(Map.of("k", "w"));
        bodies.modified(e, again);
        updates.put(1L, again);
        bodies.afterSync(true);
        assertThat(bodies.of(e).applicationProperties()).containsEntry("k", "w");
    }

    @Test
    void aResidentEntryModifiedInAFailedCycleIsPinned() {
        MessageBodies bodies = bodies(1000, 0);
        Entry e = entry(1, 100);
        bodies.admit(e);
        bodies.afterSync(true);
        bodies.modified(e, e.message.withApplicationProperties(Map.of("k", "v")));
        bodies.afterSync(false);
        assertThat(e.pinned).isTrue();
    }

    @Test
    void subscriptionCopiesReadTheirBodyAndAreNeverResidentThemselves() {
        MessageBodies bodies = bodies(0, 0);
        Message m = message("topic", 100);
        adds.put(10L, m);
        TopicBody body = new TopicBody(10, 1, 0, m);
        bodies.admit(body);
        Entry copy = new Entry(1, 11, 0, Long.MAX_VALUE, null, body.sizeBytes);
        copy.body = body;
        bodies.admit(copy);
        assertThat(bodies.residentBytes()).isEqualTo(100);
        bodies.afterSync(true);
        assertThat(body.message).isNull();
        assertThat(bodies.of(copy).messageId()).isEqualTo("topic");
        assertThat(reads).containsExactly("add 10");
    }

    @Test
    void holdersThatLeaveWhileResidentDoNotAccumulate() {
        MessageBodies bodies = bodies(Long.MAX_VALUE, 0);
        Entry old = entry(1, 10);
        bodies.admit(old);
        bodies.afterSync(true);
        for (long id = 2; id < 50_000; id++) {
            Entry e = entry(id, 10);
            bodies.admit(e);
            bodies.afterSync(true);
            bodies.release(e);
            adds.remove(id);
        }
        assertThat(bodies.residentBytes()).isEqualTo(10);
        assertThat(old.message).isNotNull();
        // the deque is swept: it holds the one resident entry and at most a sweep's worth of stale slots
        assertThat(bodies.evictableSlots()).isBetween(1, 1025);
        assertThat(bodies.evictions()).isZero();
    }

    @Test
    void theReadCacheIsBoundedInBytes() {
        MessageBodies bodies = bodies(0, 4000);
        List<Entry> entries = new ArrayList<>();
        for (long id = 1; id <= 100; id++) {
            Entry e = entry(id, 100);
            entries.add(e);
            bodies.admit(e);
        }
        bodies.afterSync(true);
        for (Entry e : entries) {
            bodies.of(e);
        }
        assertThat(bodies.cacheBytes()).isLessThanOrEqualTo(4000);
        assertThat(bodies.reads()).isEqualTo(100);
        bodies.of(entries.get(99)); // recent: cached
        assertThat(bodies.reads()).isEqualTo(100);
        assertThat(bodies.cacheHits()).isEqualTo(1);
        bodies.of(entries.get(0)); // long gone from the cache
        assertThat(bodies.reads()).isEqualTo(101);
        // messages larger than a quarter of the cache are not cached
        Entry big = entry(1000, 2000);
        bodies.admit(big);
        bodies.afterSync(true);
        bodies.of(big);
        bodies.of(big);
        assertThat(bodies.reads()).isEqualTo(103);
    }
}
