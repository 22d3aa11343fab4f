package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import io.buslane.testsupport.BrokerProcess;
import org.awaitility.core.ConditionTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A history of one session queue through the official Java SDK while a cluster is disrupted: one producer sends
 * each of a few sessions' messages in order (a send that fails is retried with the same message id, through
 * another node, until it is acknowledged: the queue detects duplicates, so a send whose answer was lost is stored
 * once), and a few consumers accept the next free session, receive and complete one by one, and give the session
 * up when a call fails. Each SDK client goes through a node {@code via} picks (a random live node, say): what the
 * node does not serve it carries to the node that does.
 *
 * <p>{@link #stopAndCheck} then checks: every acknowledged message was completed (or its complete failed and it is
 * gone); no message is delivered after its completion was acknowledged; each session's messages are completed in
 * the order they were sent, each once, and received in that order within each hold of the session; a sequence
 * number names one message; and no two receivers held a session at once (a hold lasts from its accept until its
 * receiver is closed or its lock ran out), unless {@code excused} says a disruption could have ended the first.
 */
final class SdkSessionHistory {

    /** Whether a disruption could have ended a lock taken at {@code firstNs} by {@code againNs} (nanoTime). */
    interface Excuse {
        boolean excused(long firstNs, long againNs);
    }

    private record Receipt(String session, int index, long seq, int hold, long atNs) {
    }

    /** One receiver's hold of a session: from the accept to the close (or its lock's end), wall-clock ms. */
    private record Hold(String session, int id, long startNs, long startMs, long endMs) {
    }

    private static final long MARGIN_MS = 250;

    private final Supplier<BrokerProcess> via;
    private final String queue;
    private final int sessions;
    private final int consumers;
    private final AtomicBoolean sending = new AtomicBoolean(true);
    private final AtomicBoolean receiving = new AtomicBoolean(true);
    private final AtomicInteger holds = new AtomicInteger();
    private final Map<String, List<Integer>> acked = new ConcurrentHashMap<>();
    private final Map<String, Long> completedAtNs = new ConcurrentHashMap<>();
    /** Completions acknowledged, per session, in the order their answers came. */
    private final Map<String, List<Integer>> completed = new ConcurrentHashMap<>();
    /** Messages whose complete failed: the node may have applied it and died before its answer came back. */
    private final Set<String> completeFailed = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Receipt> receipts = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Hold> held = new ConcurrentLinkedQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger sendRetries = new AtomicInteger();

    SdkSessionHistory(Supplier<BrokerProcess> via, String queue, int sessions, int consumers) {
        this.via = via;
        this.queue = queue;
        this.sessions = sessions;
        this.consumers = consumers;
    }

    private static ServiceBusClientBuilder client(BrokerProcess b) {
        // short tries, few retries: a call that fails is retried here, through another node
        return new ServiceBusClientBuilder().connectionString(b.connectionString())
                .retryOptions(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(6)).setMaxRetries(1)
                        .setDelay(Duration.ofMillis(200)).setMaxDelay(Duration.ofSeconds(1)));
    }

    void start() {
        threads.add(new Thread(this::produce, "sdk-session-producer"));
        for (int c = 0; c < consumers; c++) {
            threads.add(new Thread(this::consume, "sdk-session-consumer-" + c));
        }
        threads.forEach(Thread::start);
    }

    private BrokerProcess node() {
        BrokerProcess b = via.get();
        while (b == null && (sending.get() || receiving.get())) {
            sleep(200);
            b = via.get();
        }
        return b;
    }

    private void produce() {
        ServiceBusSenderClient sender = null;
        try {
            for (int i = 0; sending.get(); i++) {
                String session = "s" + (i % sessions);
                String id = session + ":" + i;
                while (sending.get()) {
                    try {
                        if (sender == null) {
                            BrokerProcess b = node();
                            if (b == null) {
                                return;
                            }
                            sender = client(b).sender().queueName(queue).buildClient();
                        }
                        sender.sendMessage(new ServiceBusMessage(id).setSessionId(session).setMessageId(id));
                        acked.computeIfAbsent(session, k -> new ArrayList<>()).add(i);
                        break;
                    } catch (RuntimeException e) {
                        sendRetries.incrementAndGet();
                        closeQuietly(sender);
                        sender = null; // the next try goes through another node
                        sleep(100);
                    }
                }
            }
        } finally {
            closeQuietly(sender);
        }
    }

    private void consume() {
        BrokerProcess b = null;
        ServiceBusSessionReceiverClient sessionClient = null;
        while (receiving.get()) {
            try {
                if (sessionClient == null) {
                    b = node();
                    if (b == null) {
                        return;
                    }
                    sessionClient = client(b).sessionReceiver().queueName(queue).disableAutoComplete()
                            .maxAutoLockRenewDuration(Duration.ZERO).buildClient();
                }
                ServiceBusReceiverClient r = sessionClient.acceptNextSession();
                int hold = holds.incrementAndGet();
                long startNs = System.nanoTime();
                long startMs = System.currentTimeMillis();
                long lockedUntilMs = take(r, hold);
                long closedMs = System.currentTimeMillis(); // before the close: its detach reaches the node after
                closeQuietly(r);
                held.add(new Hold(r.getSessionId(), hold, startNs, startMs,
                        lockedUntilMs > 0 ? Math.min(closedMs, lockedUntilMs) : closedMs));
            } catch (RuntimeException e) {
                // no session free in time, or the node is down or moved: accept again, through another node
                closeQuietly(sessionClient);
                sessionClient = null;
            }
        }
        closeQuietly(sessionClient);
    }

    /** Receives and completes a session's messages for a few rounds; returns the last lock end seen (ms), or 0. */
    private long take(ServiceBusReceiverClient r, int hold) {
        long lockedUntilMs = 0;
        try {
            for (int round = 0; round < 3 && receiving.get(); round++) {
                for (ServiceBusReceivedMessage m : r.receiveMessages(10, Duration.ofSeconds(1))) {
                    String[] parts = m.getBody().toString().split(":");
                    String body = m.getBody().toString();
                    receipts.add(new Receipt(parts[0], Integer.parseInt(parts[1]), m.getSequenceNumber(), hold,
                            System.nanoTime()));
                    if (m.getLockedUntil() != null) {
                        lockedUntilMs = m.getLockedUntil().toInstant().toEpochMilli();
                    }
                    try {
                        r.complete(m);
                    } catch (RuntimeException lost) {
                        completeFailed.add(body);
                        return lockedUntilMs; // the session's lock may be gone with its node: accept again
                    }
                    completedAtNs.put(body, System.nanoTime());
                    completed.computeIfAbsent(parts[0], k -> new CopyOnWriteArrayList<>())
                            .add(Integer.parseInt(parts[1]));
                }
            }
        } catch (RuntimeException lockLostOrNodeGone) {
            // give the session up
        }
        return lockedUntilMs;
    }

    /**
     * Stops the producer, lets the consumers complete what was sent (for up to {@code settle}), stops them, drains
     * every session through {@code via}, and checks the history.
     */
    void stopAndCheck(Duration settle, Excuse excused) throws InterruptedException {
        sending.set(false);
        threads.get(0).join(60_000);
        try {
            await().atMost(settle).pollInterval(Duration.ofMillis(200)).until(this::allSettled);
        } catch (ConditionTimeoutException e) {
            // the drain takes the rest; the checks say what did not hold
        }
        receiving.set(false);
        for (Thread t : threads) {
            t.join(30_000);
        }
        Set<String> drained = drain();
        List<Receipt> all = new ArrayList<>(receipts);
        int ackedCount = acked.values().stream().mapToInt(List::size).sum();
        System.out.println("CLUSTER SDK sessions: " + ackedCount + " sends acknowledged (" + sendRetries
                + " tries failed and were retried), " + all.size() + " deliveries in " + held.size() + " holds, "
                + completedAtNs.size() + " completions, " + completeFailed.size() + " completes failed, "
                + drained.size() + " drained at the end");
        assertThat(ackedCount).as("session sends acknowledged").isPositive();
        Set<String> missing = new HashSet<>();
        acked.forEach((s, is) -> is.forEach(i -> missing.add(s + ":" + i)));
        missing.removeAll(completedAtNs.keySet());
        missing.removeAll(completeFailed);
        missing.removeAll(drained);
        assertThat(missing).as("acknowledged session messages never completed").isEmpty();
        assertThat(drained).as("drained at the end though their completion was acknowledged")
                .doesNotContainAnyElementsOf(completedAtNs.keySet());
        assertThat(all.stream().filter(d -> completedAtNs.getOrDefault(d.session() + ":" + d.index(), Long.MAX_VALUE)
                < d.atNs()).map(d -> d.session() + ":" + d.index()).toList())
                .as("session messages delivered after their completion was acknowledged").isEmpty();
        completed.forEach((s, is) -> assertThat(is).as("session %s completed in send order, each once", s)
                .isSortedAccordingTo(Integer::compare).doesNotHaveDuplicates());
        Map<Integer, List<Integer>> byHold = new HashMap<>();
        Map<String, String> bodyOfSeq = new HashMap<>();
        for (Receipt d : all) {
            byHold.computeIfAbsent(d.hold(), k -> new ArrayList<>()).add(d.index());
            String before = bodyOfSeq.putIfAbsent(Long.toString(d.seq()), d.session() + ":" + d.index());
            assertThat(before == null || before.equals(d.session() + ":" + d.index()))
                    .as("sequence number %d names %s and %s:%d", d.seq(), before, d.session(), d.index()).isTrue();
        }
        byHold.forEach((h, is) -> assertThat(is).as("hold %d received its session in send order", h)
                .isSortedAccordingTo(Integer::compare).doesNotHaveDuplicates());
        assertThat(heldTwice(excused)).as("a session accepted while another receiver's hold of it ran").isEmpty();
    }

    private boolean allSettled() {
        for (Map.Entry<String, List<Integer>> e : acked.entrySet()) {
            for (int i : List.copyOf(e.getValue())) {
                String body = e.getKey() + ":" + i;
                if (!completedAtNs.containsKey(body) && !completeFailed.contains(body)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Receives and completes what is left in each session (through {@code via}); returns the messages. */
    private Set<String> drain() {
        Set<String> out = new HashSet<>();
        for (int s = 0; s < sessions; s++) {
            String session = "s" + s;
            for (int attempt = 0; attempt < 10; attempt++) {
                BrokerProcess b = via.get();
                try (ServiceBusSessionReceiverClient c = client(b).sessionReceiver().queueName(queue)
                        .disableAutoComplete().buildClient();
                     ServiceBusReceiverClient r = c.acceptSession(session)) {
                    int hold = holds.incrementAndGet();
                    int empty = 0;
                    while (empty < 2) {
                        List<ServiceBusReceivedMessage> got = new ArrayList<>();
                        r.receiveMessages(50, Duration.ofSeconds(2)).forEach(got::add);
                        empty = got.isEmpty() ? empty + 1 : 0;
                        for (ServiceBusReceivedMessage m : got) {
                            String[] parts = m.getBody().toString().split(":");
                            receipts.add(new Receipt(parts[0], Integer.parseInt(parts[1]), m.getSequenceNumber(),
                                    hold, System.nanoTime()));
                            r.complete(m);
                            out.add(m.getBody().toString());
                        }
                    }
                    break;
                } catch (RuntimeException e) {
                    // the session still locked by a receiver that went with its node, or the node moved: again
                    System.out.println("CLUSTER SDK session drain of " + session + " failed, again: " + e);
                    sleep(1_000);
                }
            }
        }
        return out;
    }

    /**
     * Holds of a session that began while an earlier hold of it still ran (less a margin), with no disruption that
     * could have ended the earlier one.
     */
    private List<String> heldTwice(Excuse excused) {
        Map<String, List<Hold>> bySession = new HashMap<>();
        held.forEach(h -> bySession.computeIfAbsent(h.session(), k -> new ArrayList<>()).add(h));
        List<String> out = new ArrayList<>();
        bySession.values().forEach(hs -> {
            hs.sort((x, y) -> Long.compare(x.startNs(), y.startNs()));
            for (int i = 1; i < hs.size(); i++) {
                Hold again = hs.get(i);
                for (Hold first : hs.subList(0, i)) {
                    if (again.startMs() + MARGIN_MS < first.endMs()
                            && !excused.excused(first.startNs(), again.startNs())) {
                        out.add(again.session() + ": hold " + again.id() + " from " + again.startMs()
                                + " while hold " + first.id() + " ran " + first.startMs() + ".." + first.endMs());
                    }
                }
            }
        });
        return out;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the node went away: nothing to release
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
