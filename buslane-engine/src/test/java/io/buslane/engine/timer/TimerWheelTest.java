package io.buslane.engine.timer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimerWheelTest {

    private static final long EPOCH_2026_MS = 1_767_225_600_000L;

    static final class Timer extends TimerNode {
        final int id;

        Timer(int id) {
            this.id = id;
        }

        @Override
        public String toString() {
            return "Timer" + id + "@" + deadlineMs();
        }
    }

    /** Records what fired, checking that nothing fires early. */
    static final class Recorder implements Consumer<TimerNode> {
        final List<Timer> fired = new ArrayList<>();
        long nowMs;

        int advance(TimerWheel wheel, long nowMs) {
            this.nowMs = nowMs;
            return wheel.advance(nowMs, this);
        }

        @Override
        public void accept(TimerNode node) {
            assertThat(node.isScheduled()).isFalse();
            assertThat(node.deadlineMs()).isLessThanOrEqualTo(nowMs);
            fired.add((Timer) node);
        }

        List<Timer> drain() {
            List<Timer> result = new ArrayList<>(fired);
            fired.clear();
            return result;
        }
    }

    private static Timer scheduled(TimerWheel wheel, int id, long deadlineMs) {
        Timer timer = new Timer(id);
        wheel.schedule(timer, deadlineMs);
        return timer;
    }

    @Test
    void firesAtItsDeadlineAndNothingEarly() {
        TimerWheel wheel = new TimerWheel(1, 8, 1_000);
        Recorder recorder = new Recorder();
        Timer timer = scheduled(wheel, 1, 1_005);

        assertThat(timer.isScheduled()).isTrue();
        assertThat(timer.deadlineMs()).isEqualTo(1_005);
        assertThat(wheel.size()).isEqualTo(1);
        assertThat(wheel.nextExpirationMs()).isBetween(1_001L, 1_005L);
        for (long nowMs = 1_000; nowMs < 1_005; nowMs++) {
            assertThat(recorder.advance(wheel, nowMs)).isZero();
        }
        assertThat(recorder.advance(wheel, 1_005)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(timer);
        assertThat(timer.isScheduled()).isFalse();
        assertThat(wheel.size()).isZero();
        assertThat(wheel.isEmpty()).isTrue();
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(recorder.advance(wheel, 2_000)).isZero();
    }

    @Test
    void firesAtTheExactDeadlineWithinACoarseTick() {
        TimerWheel wheel = new TimerWheel(10, 8, 100);
        Recorder recorder = new Recorder();
        Timer a = scheduled(wheel, 1, 105);
        Timer b = scheduled(wheel, 2, 108);
        Timer c = scheduled(wheel, 3, 112);

        assertThat(wheel.nextExpirationMs()).isLessThanOrEqualTo(105);
        assertThat(recorder.advance(wheel, 104)).isZero();
        assertThat(recorder.advance(wheel, 105)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(a);
        assertThat(wheel.nextExpirationMs()).isEqualTo(108);
        assertThat(recorder.advance(wheel, 107)).isZero();
        assertThat(recorder.advance(wheel, 108)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(b);
        assertThat(wheel.nextExpirationMs()).isBetween(109L, 112L);
        assertThat(recorder.advance(wheel, 111)).isZero();
        assertThat(wheel.nextExpirationMs()).isEqualTo(112);
        assertThat(recorder.advance(wheel, 112)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(c);
    }

    @Test
    void nodesInDifferentTicksFireTickByTick() {
        TimerWheel wheel = new TimerWheel(10, 4, 0);
        Recorder recorder = new Recorder();
        long[] deadlines = {35, 12, 27, 19, 95, 61, 170, 1_000, 64, 20};
        for (int i = 0; i < deadlines.length; i++) {
            scheduled(wheel, i, deadlines[i]);
        }

        assertThat(recorder.advance(wheel, 1_000)).isEqualTo(deadlines.length);
        List<Long> firedTicks = recorder.drain().stream().map(t -> t.deadlineMs() / 10).toList();
        assertThat(firedTicks).isSorted().hasSize(deadlines.length);
    }

    @Test
    void cancelledNodesDoNotFire() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Recorder recorder = new Recorder();
        Timer a = scheduled(wheel, 1, 10);
        Timer b = scheduled(wheel, 2, 10);
        Timer c = scheduled(wheel, 3, 10_000);
        Timer never = scheduled(wheel, 4, Long.MAX_VALUE);

        assertThat(wheel.cancel(b)).isTrue();
        assertThat(b.isScheduled()).isFalse();
        assertThat(wheel.cancel(b)).isFalse();
        assertThat(wheel.cancel(c)).isTrue();
        assertThat(wheel.cancel(never)).isTrue();
        assertThat(wheel.size()).isEqualTo(1);

        assertThat(recorder.advance(wheel, 20_000)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(a);
        assertThat(wheel.cancel(a)).isFalse();
        assertThat(wheel.size()).isZero();
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void cancellingEverythingEmptiesTheQueue() {
        TimerWheel wheel = new TimerWheel(1, 16, 0);
        List<Timer> timers = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            timers.add(scheduled(wheel, i, 1 + i * 37L));
        }
        timers.forEach(wheel::cancel);

        assertThat(wheel.size()).isZero();
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(wheel.queuedBuckets()).isZero();
    }

    @Test
    void rescheduleMovesTheDeadline() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Recorder recorder = new Recorder();
        Timer earlier = scheduled(wheel, 1, 50);
        Timer later = scheduled(wheel, 2, 20);
        Timer toThePast = scheduled(wheel, 3, 1_000);
        wheel.schedule(earlier, 20);
        wheel.schedule(later, 80);
        wheel.schedule(later, 80); // same deadline: no-op
        assertThat(wheel.size()).isEqualTo(3);

        assertThat(recorder.advance(wheel, 19)).isZero();
        assertThat(recorder.advance(wheel, 20)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(earlier);
        assertThat(recorder.advance(wheel, 79)).isZero();

        wheel.schedule(toThePast, 5); // before the current time: fires on the next advance
        assertThat(wheel.nextExpirationMs()).isLessThanOrEqualTo(79);
        assertThat(recorder.advance(wheel, 79)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(toThePast);

        assertThat(recorder.advance(wheel, 80)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(later);

        // A fired node can be scheduled again.
        wheel.schedule(earlier, 90);
        assertThat(recorder.advance(wheel, 90)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(earlier);
        assertThat(wheel.size()).isZero();
    }

    @Test
    void cascadesFromOverflowWheels() {
        TimerWheel wheel = new TimerWheel(1, 4, 0);
        Recorder recorder = new Recorder();
        Map<Long, Timer> byDeadline = new HashMap<>();
        for (long deadlineMs = 1; deadlineMs <= 5_000; deadlineMs += 7) {
            byDeadline.put(deadlineMs, scheduled(wheel, (int) deadlineMs, deadlineMs));
        }
        assertThat(wheel.levelsCreated()).isGreaterThanOrEqualTo(6); // 4^6 = 4096

        for (long nowMs = 1; nowMs <= 5_100; nowMs++) {
            recorder.advance(wheel, nowMs);
            Timer expected = byDeadline.get(nowMs);
            if (expected == null) {
                assertThat(recorder.drain()).isEmpty();
            } else {
                assertThat(recorder.drain()).containsExactly(expected);
            }
            assertThat(wheel.nextExpirationMs()).isGreaterThan(nowMs);
        }
        assertThat(wheel.size()).isZero();
    }

    @Test
    void cascadesWithACoarseTickToTheExactDeadline() {
        TimerWheel wheel = new TimerWheel(10, 2, 3);
        Recorder recorder = new Recorder();
        SplittableRandom random = new SplittableRandom(7);
        Map<Long, List<Timer>> byDeadline = new HashMap<>();
        for (int i = 0; i < 2_000; i++) {
            long deadlineMs = random.nextLong(4, 20_000);
            byDeadline.computeIfAbsent(deadlineMs, d -> new ArrayList<>()).add(scheduled(wheel, i, deadlineMs));
        }
        for (long nowMs = 4; nowMs <= 20_000; nowMs++) {
            recorder.advance(wheel, nowMs);
            assertThat(recorder.drain()).containsExactlyInAnyOrderElementsOf(byDeadline.getOrDefault(nowMs, List.of()));
        }
        assertThat(wheel.size()).isZero();
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void aHugeTimeJumpCostsBucketsNotTicks() {
        TimerWheel wheel = new TimerWheel(1, 64, EPOCH_2026_MS);
        Recorder recorder = new Recorder();
        SplittableRandom random = new SplittableRandom(11);
        long yearMs = 365L * 24 * 3_600_000;
        int count = 10_000;
        for (int i = 0; i < count; i++) {
            scheduled(wheel, i, EPOCH_2026_MS + random.nextLong(1, yearMs));
        }

        // Idle for ten years (3e11 ticks) in one call.
        long nowMs = EPOCH_2026_MS + 10 * yearMs;
        assertThat(recorder.advance(wheel, nowMs)).isEqualTo(count);
        List<Long> deadlines = recorder.drain().stream().map(TimerNode::deadlineMs).toList();
        assertThat(deadlines).isSorted();
        // Each node is cascaded at most once per level.
        assertThat(wheel.bucketsPopped()).isLessThanOrEqualTo((long) count * wheel.levelsCreated());
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);

        // The wheel keeps working from the new time.
        Timer next = scheduled(wheel, -1, nowMs + 5);
        assertThat(recorder.advance(wheel, nowMs + 4)).isZero();
        assertThat(recorder.advance(wheel, nowMs + 5)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(next);

        // An idle jump over an empty wheel pops nothing.
        long popped = wheel.bucketsPopped();
        assertThat(recorder.advance(wheel, nowMs + 1_000 * yearMs)).isZero();
        assertThat(wheel.bucketsPopped()).isEqualTo(popped);
    }

    @Test
    void aCoarseBucketIsCascadedAheadOfItsStartInBoundedSteps() {
        // 1 ms ticks, 64 slots: level 2 buckets span 4,096 ms. 100,000 nodes due within one of them, placed there
        // from far enough ahead that no finer level holds them yet.
        TimerWheel wheel = new TimerWheel(1, 64, 0);
        long bucketStartMs = 3 * 4_096;
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            scheduled(wheel, i, bucketStartMs + (i * 4_096L) / n);
        }
        Recorder recorder = new Recorder();
        int largestStep = 0;
        int fired = 0;
        for (long nowMs = 1; nowMs <= bucketStartMs + 4_096; nowMs++) {
            // as a shard does: advance again at once while the wheel asks for it
            do {
                fired += recorder.advance(wheel, nowMs);
                largestStep = Math.max(largestStep, wheel.lastAdvanceCascaded());
            } while (wheel.nextExpirationMs() <= nowMs && !wheel.isEmpty()
                    && wheel.lastAdvanceCascaded() > 0);
            for (Timer t : recorder.drain()) {
                assertThat(t.deadlineMs()).as("fires in the advance of its deadline").isEqualTo(nowMs);
            }
        }
        assertThat(fired).isEqualTo(n);
        assertThat(wheel.isEmpty()).isTrue();
        // without the walk ahead, the advance at bucketStartMs re-inserts all 100,000 at once; with it, the pop
        // moves what did not fit a finer level yet (1/16 of the span) and the finer bucket due with it
        assertThat(largestStep).isLessThan(n / 10);
    }

    @Test
    void advancingDoesNotVisitTimersThatAreFarFromDue() {
        TimerWheel wheel = new TimerWheel(1, 512, EPOCH_2026_MS);
        Recorder recorder = new Recorder();
        long dayMs = 24 * 3_600_000L;
        for (int i = 0; i < 100_000; i++) {
            scheduled(wheel, i, EPOCH_2026_MS + dayMs + i);
        }
        for (long nowMs = EPOCH_2026_MS; nowMs < EPOCH_2026_MS + 10_000; nowMs++) {
            assertThat(recorder.advance(wheel, nowMs)).isZero();
        }
        assertThat(wheel.bucketsPopped()).isZero();
        assertThat(wheel.nextExpirationMs()).isGreaterThan(EPOCH_2026_MS + 10_000);
    }

    @Test
    void aLongMaxValueDeadlineNeverFires() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Recorder recorder = new Recorder();
        Timer never = scheduled(wheel, 1, Long.MAX_VALUE);
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
        Timer half = scheduled(wheel, 2, Long.MAX_VALUE / 2);
        Timer almostNever = scheduled(wheel, 3, Long.MAX_VALUE - 1);
        assertThat(wheel.size()).isEqualTo(3);
        assertThat(wheel.nextExpirationMs()).isLessThanOrEqualTo(Long.MAX_VALUE / 2);

        assertThat(recorder.advance(wheel, Long.MAX_VALUE / 2 - 1)).isZero();
        assertThat(recorder.advance(wheel, Long.MAX_VALUE / 2)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(half);
        assertThat(recorder.advance(wheel, Long.MAX_VALUE - 2)).isZero();
        assertThat(recorder.advance(wheel, Long.MAX_VALUE - 1)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(almostNever);
        assertThat(recorder.advance(wheel, Long.MAX_VALUE)).isZero();
        assertThat(recorder.advance(wheel, Long.MAX_VALUE)).isZero();

        assertThat(never.isScheduled()).isTrue();
        assertThat(wheel.size()).isEqualTo(1);
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
        wheel.schedule(never, Long.MAX_VALUE - 5); // rescheduled into the past: fires next
        assertThat(recorder.advance(wheel, Long.MAX_VALUE)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(never);
    }

    @Test
    void deadlinesBeyondTheTopWheelFireOnTime() {
        TimerWheel wheel = new TimerWheel(1, 512, EPOCH_2026_MS);
        Recorder recorder = new Recorder();
        assertThat(wheel.maxLevels()).isEqualTo(7); // the top level's 512 buckets span 2^54 ms each
        long farMs = EPOCH_2026_MS + (1L << 60);
        Timer far = scheduled(wheel, 1, farMs);
        Timer farther = scheduled(wheel, 2, Long.MAX_VALUE - 12_345);

        assertThat(recorder.advance(wheel, farMs - 1)).isZero();
        assertThat(recorder.advance(wheel, farMs)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(far);
        assertThat(recorder.advance(wheel, Long.MAX_VALUE - 12_346)).isZero();
        assertThat(recorder.advance(wheel, Long.MAX_VALUE - 12_345)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(farther);
        assertThat(wheel.bucketsPopped()).isLessThanOrEqualTo(2L * wheel.maxLevels());
    }

    @Test
    void negativeDeadlinesAreOverdue() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Recorder recorder = new Recorder();
        Timer timer = scheduled(wheel, 1, Long.MIN_VALUE);
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MIN_VALUE);
        assertThat(recorder.advance(wheel, 0)).isEqualTo(1);
        assertThat(recorder.drain()).containsExactly(timer);
    }

    @Test
    void timeNeverGoesBackwards() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Recorder recorder = new Recorder();
        recorder.advance(wheel, 1_000);
        Timer timer = scheduled(wheel, 1, 900);
        assertThat(wheel.currentTimeMs()).isEqualTo(1_000);
        assertThat(wheel.advance(500, node -> recorder.fired.add((Timer) node))).isEqualTo(1); // as 1000
        assertThat(recorder.drain()).containsExactly(timer);
    }

    @Test
    void theHandlerCanRescheduleAPeriodicTimer() {
        TimerWheel wheel = new TimerWheel(1, 4, 0);
        List<Long> firedAtMs = new ArrayList<>();
        long[] nowMs = {0};
        Consumer<TimerNode> handler = node -> {
            firedAtMs.add(nowMs[0]);
            wheel.schedule(node, node.deadlineMs() + 10);
        };
        scheduled(wheel, 1, 10);
        for (nowMs[0] = 0; nowMs[0] <= 100; nowMs[0]++) {
            wheel.advance(nowMs[0], handler);
        }
        assertThat(firedAtMs).containsExactly(10L, 20L, 30L, 40L, 50L, 60L, 70L, 80L, 90L, 100L);
        assertThat(wheel.size()).isEqualTo(1);
    }

    @Test
    void aNodeTheHandlerMakesDueFiresInThisAdvanceOrTheNext() {
        TimerWheel wheel = new TimerWheel(1, 4, 0);
        Timer periodic = new Timer(1);
        Timer fresh = new Timer(2);
        Timer future = new Timer(3);
        List<Timer> fired = new ArrayList<>();
        Consumer<TimerNode> handler = node -> {
            fired.add((Timer) node);
            if (node == periodic && fired.size() == 1) {
                wheel.schedule(periodic, 0); // already due
                wheel.schedule(fresh, 60); // due: the wheel is advancing to 100
                wheel.schedule(future, 150); // not due
            }
        };
        wheel.schedule(periodic, 10);

        int firedNow = wheel.advance(100, handler);
        int firedNext = wheel.advance(100, handler);

        assertThat(firedNow + firedNext).isEqualTo(3);
        assertThat(fired).containsExactlyInAnyOrder(periodic, periodic, fresh);
        assertThat(future.isScheduled()).isTrue();
        assertThat(wheel.nextExpirationMs()).isGreaterThan(100);
        assertThat(wheel.advance(149, handler)).isZero();
        assertThat(wheel.advance(150, handler)).isEqualTo(1);
    }

    @Test
    void theHandlerCanCancelOrRescheduleNodesDueInTheSameTick() {
        TimerWheel wheel = new TimerWheel(10, 8, 0);
        Timer a = scheduled(wheel, 1, 21);
        Timer b = scheduled(wheel, 2, 25);
        Timer c = scheduled(wheel, 3, 22);
        Timer d = scheduled(wheel, 4, 23);
        List<Timer> fired = new ArrayList<>();
        wheel.advance(30, node -> {
            fired.add((Timer) node);
            if (node == a || node == b) {
                wheel.cancel(node == a ? b : a); // whichever fires first cancels the other
            }
            if (node == c || node == d) {
                wheel.schedule(node == c ? d : c, 500); // whichever fires first postpones the other
            }
        });
        assertThat(fired).hasSize(2);
        assertThat(wheel.size()).isEqualTo(1);
        Timer postponed = c.isScheduled() ? c : d;
        assertThat(postponed.deadlineMs()).isEqualTo(500);
        assertThat(wheel.advance(499, node -> fired.add((Timer) node))).isZero();
        assertThat(wheel.advance(500, node -> fired.add((Timer) node))).isEqualTo(1);
        assertThat(wheel.size()).isZero();
    }

    @Test
    void aThrowingHandlerLosesNothing() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        Timer a = scheduled(wheel, 1, 5);
        Timer b = scheduled(wheel, 2, 5);
        Timer c = scheduled(wheel, 3, 9);
        List<Timer> fired = new ArrayList<>();
        assertThatThrownBy(() -> wheel.advance(10, node -> {
            throw new IllegalArgumentException("boom");
        })).isInstanceOf(IllegalArgumentException.class);
        assertThat(wheel.size()).isEqualTo(2);

        assertThat(wheel.advance(10, node -> fired.add((Timer) node))).isEqualTo(2);
        assertThat(fired).hasSize(2).isSubsetOf(a, b, c);
        assertThat(wheel.size()).isZero();
    }

    @Test
    void advanceIsNotReentrant() {
        TimerWheel wheel = new TimerWheel(1, 8, 0);
        scheduled(wheel, 1, 1);
        assertThatThrownBy(() -> wheel.advance(1, node -> wheel.advance(2, n -> { })))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aNodeBelongsToOneWheel() {
        TimerWheel one = new TimerWheel(1, 8, 0);
        TimerWheel other = new TimerWheel(1, 8, 0);
        Timer timer = scheduled(one, 1, 10);
        assertThatThrownBy(() -> other.schedule(timer, 20)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> other.cancel(timer)).isInstanceOf(IllegalStateException.class);
        assertThat(one.cancel(timer)).isTrue();
        other.schedule(timer, 20);
        assertThat(other.size()).isEqualTo(1);
        assertThat(one.size()).isZero();
    }

    @Test
    void rejectsBadParameters() {
        assertThatThrownBy(() -> new TimerWheel(0, 8, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TimerWheel(1, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new TimerWheel(1, 8, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new TimerWheel(1, 2, 0).maxLevels()).isEqualTo(63);
        assertThat(new TimerWheel(1, 512, 0).maxLevels()).isEqualTo(7);
        assertThat(new TimerWheel(Long.MAX_VALUE / 2, 2, 0).maxLevels()).isEqualTo(2);
        assertThat(new TimerWheel(Long.MAX_VALUE / 2, 8, 0).maxLevels()).isEqualTo(1);
    }

    /**
     * Random schedules, reschedules, cancellations and advances (small steps and huge jumps, handlers that
     * reschedule and cancel) checked against a map of what should be scheduled.
     */
    @ParameterizedTest
    @ValueSource(longs = {1L, 2L, 3L, 42L, 1_234L, 0xC0FFEEL, 987_654_321L, -7L, 20_260_101L, Long.MIN_VALUE})
    void matchesAReferenceModel(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long tickMs = new long[] {1, 1, 3, 10, 1_000}[random.nextInt(5)];
        int wheelSize = new int[] {2, 3, 4, 8, 64, 512}[random.nextInt(6)];
        long startMs = random.nextBoolean() ? 0 : random.nextLong(0, 2_000_000_000_000L);
        TimerWheel wheel = new TimerWheel(tickMs, wheelSize, startMs);
        Timer[] timers = new Timer[300];
        for (int i = 0; i < timers.length; i++) {
            timers[i] = new Timer(i);
        }
        Map<Timer, Long> model = new HashMap<>();
        Set<Timer> overdueWhenScheduled = new HashSet<>();
        Set<Timer> scheduledByHandler = new HashSet<>();
        List<Timer> fired = new ArrayList<>();
        List<Long> firedDeadlines = new ArrayList<>();
        List<Boolean> firedOverdue = new ArrayList<>();
        long[] nowMs = {startMs};

        Consumer<TimerNode> handler = node -> {
            Timer timer = (Timer) node;
            assertThat(timer.isScheduled()).isFalse();
            assertThat(model).containsEntry(timer, timer.deadlineMs());
            assertThat(timer.deadlineMs()).isLessThanOrEqualTo(nowMs[0]).isNotEqualTo(Long.MAX_VALUE);
            model.remove(timer);
            fired.add(timer);
            firedDeadlines.add(timer.deadlineMs()); // the handler may reschedule it
            firedOverdue.add(overdueWhenScheduled.remove(timer));
            int action = random.nextInt(10);
            if (action < 2) {
                Timer other = action == 0 ? timer : timers[random.nextInt(timers.length)];
                long deadlineMs = randomDeadline(random, nowMs[0]);
                wheel.schedule(other, deadlineMs);
                model.put(other, deadlineMs);
                scheduledByHandler.add(other);
                overdueWhenScheduled.remove(other);
            } else if (action == 2) {
                Timer other = timers[random.nextInt(timers.length)];
                assertThat(wheel.cancel(other)).isEqualTo(model.remove(other) != null);
            }
        };

        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(100);
            if (op < 45) {
                Timer timer = timers[random.nextInt(timers.length)];
                long deadlineMs = randomDeadline(random, nowMs[0]);
                wheel.schedule(timer, deadlineMs);
                model.put(timer, deadlineMs);
                if (deadlineMs <= wheel.currentTimeMs()) {
                    overdueWhenScheduled.add(timer);
                } else {
                    overdueWhenScheduled.remove(timer);
                }
            } else if (op < 60) {
                Timer timer = timers[random.nextInt(timers.length)];
                assertThat(wheel.cancel(timer)).isEqualTo(model.remove(timer) != null);
            } else {
                // Now and then time goes backwards: the wheel then stays at its current time.
                long targetMs = random.nextInt(50) == 0 ? nowMs[0] - 1 : advanceTo(random, nowMs[0]);
                nowMs[0] = Math.max(targetMs, wheel.currentTimeMs());
                scheduledByHandler.clear();
                fired.clear();
                firedDeadlines.clear();
                firedOverdue.clear();
                int count = wheel.advance(targetMs, handler);
                assertThat(count).isEqualTo(fired.size());
                assertThat(wheel.currentTimeMs()).isEqualTo(nowMs[0]);
                checkOrder(fired, firedDeadlines, firedOverdue, tickMs);
                // Everything due fired, except what the handler made due (that fires on the next advance).
                for (Map.Entry<Timer, Long> entry : model.entrySet()) {
                    if (entry.getValue() <= nowMs[0] && entry.getValue() != Long.MAX_VALUE) {
                        assertThat(scheduledByHandler).contains(entry.getKey());
                        overdueWhenScheduled.add(entry.getKey());
                    }
                }
            }
            checkState(wheel, timers, model, nowMs[0]);
        }

        // Drain: everything but the "never" nodes fires.
        fired.clear();
        Consumer<TimerNode> drainHandler = node -> {
            assertThat(model.remove((Timer) node)).isEqualTo(node.deadlineMs());
            fired.add((Timer) node);
        };
        wheel.advance(Long.MAX_VALUE, drainHandler);
        wheel.advance(Long.MAX_VALUE, drainHandler);
        assertThat(model.values()).containsOnly(Long.MAX_VALUE);
        assertThat(wheel.size()).isEqualTo(model.size());
    }

    private static long randomDeadline(SplittableRandom random, long nowMs) {
        int kind = random.nextInt(100);
        if (kind < 8) {
            return nowMs - random.nextLong(0, 10_000);
        } else if (kind < 12) {
            return Long.MAX_VALUE;
        } else if (kind < 14) {
            return random.nextLong(nowMs, Long.MAX_VALUE);
        } else if (kind < 55) {
            return nowMs + random.nextLong(0, 50);
        } else if (kind < 85) {
            return nowMs + random.nextLong(0, 5_000);
        } else {
            return nowMs + random.nextLong(0, 10_000_000);
        }
    }

    private static long advanceTo(SplittableRandom random, long nowMs) {
        int kind = random.nextInt(100);
        long deltaMs;
        if (kind < 60) {
            deltaMs = random.nextLong(0, 20);
        } else if (kind < 90) {
            deltaMs = random.nextLong(0, 2_000);
        } else if (kind < 98) {
            deltaMs = random.nextLong(0, 1_000_000);
        } else {
            deltaMs = random.nextLong(0, 10_000_000_000L);
        }
        return nowMs + deltaMs;
    }

    /** Nodes overdue when scheduled fire first; the others tick by tick. */
    private static void checkOrder(List<Timer> fired, List<Long> firedDeadlines, List<Boolean> firedOverdue,
            long tickMs) {
        boolean inTicks = false;
        long lastTick = Long.MIN_VALUE;
        for (int i = 0; i < fired.size(); i++) {
            Timer timer = fired.get(i);
            if (firedOverdue.get(i)) {
                assertThat(inTicks).as("overdue %s fired after a node due in a tick", timer).isFalse();
            } else {
                inTicks = true;
                long tick = Math.floorDiv(firedDeadlines.get(i), tickMs);
                assertThat(tick).as("tick of %s", timer).isGreaterThanOrEqualTo(lastTick);
                lastTick = tick;
            }
        }
    }

    private static void checkState(TimerWheel wheel, Timer[] timers, Map<Timer, Long> model, long nowMs) {
        assertThat(wheel.size()).isEqualTo(model.size());
        long earliestMs = Long.MAX_VALUE;
        for (Timer timer : timers) {
            Long deadlineMs = model.get(timer);
            if (timer.isScheduled() != (deadlineMs != null)
                    || deadlineMs != null && timer.deadlineMs() != deadlineMs) {
                throw new AssertionError(timer + " scheduled=" + timer.isScheduled() + ", model: " + deadlineMs);
            }
            if (deadlineMs != null) {
                earliestMs = Math.min(earliestMs, deadlineMs);
            }
        }
        long nextMs = wheel.nextExpirationMs();
        if (earliestMs == Long.MAX_VALUE) {
            assertThat(nextMs).isEqualTo(Long.MAX_VALUE);
        } else {
            assertThat(nextMs).isLessThanOrEqualTo(earliestMs);
        }
        if (earliestMs > nowMs && !wheel.walkDue(nowMs)) {
            assertThat(nextMs).as("nothing is due at %d", nowMs).isGreaterThan(nowMs);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aMillionNodesAllFire() {
        TimerWheel wheel = new TimerWheel(1, 512, EPOCH_2026_MS);
        SplittableRandom random = new SplittableRandom(1_000_000);
        int count = 1_000_000;
        long hourMs = 3_600_000;
        Timer[] timers = new Timer[count];
        for (int i = 0; i < count; i++) {
            timers[i] = new Timer(i);
            wheel.schedule(timers[i], EPOCH_2026_MS + random.nextLong(1, hourMs));
        }
        assertThat(wheel.size()).isEqualTo(count);
        assertThat(wheel.queuedBuckets()).isLessThanOrEqualTo(wheel.levelsCreated() * 512);

        boolean[] fired = new boolean[count];
        long[] nowMs = {EPOCH_2026_MS};
        int[] firedCount = {0};
        Consumer<TimerNode> handler = node -> {
            Timer timer = (Timer) node;
            if (timer.deadlineMs() > nowMs[0] || fired[timer.id]) {
                throw new AssertionError("fired early or twice: " + timer + " at " + nowMs[0]);
            }
            fired[timer.id] = true;
            firedCount[0]++;
        };
        int total = 0;
        for (nowMs[0] = EPOCH_2026_MS; nowMs[0] <= EPOCH_2026_MS + hourMs; nowMs[0] += 1_000) {
            total += wheel.advance(nowMs[0], handler);
        }
        assertThat(total).isEqualTo(count);
        assertThat(firedCount[0]).isEqualTo(count);
        assertThat(wheel.size()).isZero();
        assertThat(wheel.nextExpirationMs()).isEqualTo(Long.MAX_VALUE);
    }
}
