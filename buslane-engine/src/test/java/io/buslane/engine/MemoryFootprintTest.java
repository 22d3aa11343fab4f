package io.buslane.engine;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures the heap a message costs once its body is evicted (resident budget 0): the engine's entry and indexes
 * plus the file journal's index of its record. Each measurement fills a fresh engine over real file journals with
 * {@value #COUNT} items and divides the growth of the heap after full collections by the count. The numbers are
 * printed (see {@code docs/ARCHITECTURE.md}, "Memory") and checked against generous bounds, so that a change that
 * makes them balloon fails here rather than in production.
 */
class MemoryFootprintTest {

    private static final int COUNT = 100_000;
    private static final int BATCH = 1000;

    @TempDir
    Path dir;

    @Test
    void queuedMessage() {
        double perMessage = measure("queued message", h -> {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
        }, h -> sendAll(h, "q", i -> small("m" + i, null)));
        // 266 bytes measured; 315 while the sub-queue's sequence index was a TreeMap<Long, Entry>
        assertThat(perMessage).isLessThan(300);
    }

    @Test
    void scheduledMessage() {
        double perMessage = measure("scheduled message", h -> {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
        }, h -> {
            long at = h.clock.epochMillis() + 3_600_000;
            for (int i = 0; i < COUNT; i += BATCH) {
                List<Message> batch = new ArrayList<>();
                for (int j = i; j < i + BATCH; j++) {
                    batch.add(Message.builder().messageId("s" + j).body(new byte[100]).scheduledEnqueueTimeMs(at + j)
                            .build());
                }
                h.await(h.engine.schedule("q", batch));
            }
        });
        // 221 bytes measured; 269 while the partition's schedule was a TreeMap<Long, ScheduledEntry>
        assertThat(perMessage).isLessThan(250);
    }

    @Test
    void sessionWithOneMessage() {
        double perSession = measure("session with one message", h -> {
            h.await(h.engine.createQueue(QueueProperties.builder("s").requiresSession(true).build()));
        }, h -> sendAll(h, "s", i -> small("m" + i, "session-" + i)));
        assertThat(perSession).isLessThan(1000);
    }

    @Test
    void idleSessionWithOneKibibyteOfState() {
        double perSession = measure("idle session with 1 KiB of state", h -> {
            h.withSessionStateBytesPerShard(0); // every state evicted once durable
            h.await(h.engine.createQueue(QueueProperties.builder("s").requiresSession(true).build()));
        }, h -> {
            for (int i = 0; i < COUNT; i += BATCH) {
                List<java.util.concurrent.CompletableFuture<Void>> writes = new ArrayList<>(BATCH);
                for (int j = i; j < i + BATCH; j++) {
                    writes.add(h.engine.setSessionState(io.buslane.engine.api.EntityAddress.parse("s"),
                            "session-" + j, new byte[1024]));
                }
                h.engine.runUntilIdle();
                writes.forEach(java.util.concurrent.CompletableFuture::join);
            }
            assertThat(h.engine.shards().residentSessionStateBytes()).isZero();
        });
        // the entry, its indexes and the journal's index of its state record: the 1 KiB state is not in the heap
        assertThat(perSession).isLessThan(600);
    }

    @Test
    void topicMessageWithTwoSubscriptions() {
        double perMessage = measure("topic message, 2 subscriptions", h -> {
            h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "a").build(), null));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "b").build(), null));
        }, h -> sendAll(h, "t", i -> small("m" + i, null)));
        // 680 bytes measured; 780 with TreeMap sequence indexes
        assertThat(perMessage).isLessThan(750);
    }

    private static Message small(String id, String sessionId) {
        return Message.builder().messageId(id).sessionId(sessionId).body(new byte[100]).build();
    }

    private static void sendAll(EngineHarness h, String entity, IntFunction<Message> make) {
        for (int i = 0; i < COUNT; i += BATCH) {
            List<Message> batch = new ArrayList<>(BATCH);
            for (int j = i; j < i + BATCH; j++) {
                batch.add(make.apply(j));
            }
            h.send(entity, batch);
        }
    }

    private interface Step {
        void run(EngineHarness h);
    }

    private double measure(String what, Step setUp, Step fill) {
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, 0, 64L * 1024 * 1024)) {
            setUp.run(h);
            long before = usedHeapAfterGc();
            fill.run(h);
            long after = usedHeapAfterGc();
            assertThat(h.engine.shards().residentMessageBytes()).isZero();
            double per = (after - before) / (double) COUNT;
            System.out.printf("heap per %s: %.0f bytes (%d items, %d -> %d bytes used)%n", what, per, COUNT,
                    before, after);
            return per;
        }
    }

    private static long usedHeapAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
