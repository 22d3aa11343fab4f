package io.buslane.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.receive.RemoteConsumers;
import io.buslane.engine.remote.OpCodec;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two nodes in one JVM (two engines on one set of in-memory journals, dedicated shard threads, a real loopback
 * channel): A serves shards 0 and 1 of 4, B serves 2 and 3. Unary operations through A's engine facade on
 * partitions B serves are carried to B and answer as a single engine would.
 */
class ClusterRoutingTest {

    private static final byte[] SECRET = "the cluster secret".getBytes(StandardCharsets.UTF_8);
    private static final long T0 = 1_700_000_000_000L;

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private Vertx vertx;
    /** A queue whose only partition is on one of B's shards, a session queue likewise, and a partitioned one. */
    private String onB;
    /** A plain queue on one of A's shards. */
    private String onA;
    private String sessionsOnB;
    private final String partitioned = "p";
    /** A topic on one of B's shards, with subscription "s". */
    private String topicOnB;

    @BeforeEach
    void setUp() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        vertx.close().await();
    }

    // ------------------------------------------------------------------------------------------------ set-up

    private final Map<Engine, ManualClock> clocks = new java.util.IdentityHashMap<>();

    private Engine start(InMemoryJournalFactory journals, java.util.function.IntPredicate serves) {
        ManualClock clock = new ManualClock(T0);
        Engine e = Engine.start(new EngineConfig(clock, Storage.of(journals), 4, ThreadingMode.DEDICATED), serves);
        clocks.put(e, clock);
        toClose.add(e);
        return e;
    }

    /** Creates the entities (on a node serving every shard) and picks those placed on shards 2 and 3. */
    private InMemoryJournalFactory namespace() {
        InMemoryJournalFactory journals = new InMemoryJournalFactory();
        Engine setup = Engine.start(new EngineConfig(new ManualClock(T0), Storage.of(journals), 4,
                ThreadingMode.DEDICATED), s -> true);
        onB = null;
        onA = null;
        sessionsOnB = null;
        for (int i = 0; onB == null || sessionsOnB == null || onA == null; i++) {
            String q = "q" + i;
            join(setup.createQueue(QueueProperties.builder(q).requiresSession(i % 2 == 1).build()));
            if (setup.queue(q).partitions()[0].shard().index() < 2 && i % 2 == 0 && onA == null) {
                onA = q;
            } else if (setup.queue(q).partitions()[0].shard().index() >= 2) {
                if (i % 2 == 0 && onB == null) {
                    onB = q;
                } else if (i % 2 == 1 && sessionsOnB == null) {
                    sessionsOnB = q;
                }
            }
        }
        join(setup.createQueue(QueueProperties.builder(partitioned).enablePartitioning(true).build()));
        topicOnB = null;
        for (int i = 0; topicOnB == null; i++) {
            String t = "t" + i;
            join(setup.createTopic(TopicProperties.builder(t).build()));
            join(setup.createSubscription(SubscriptionProperties.builder(t, "s").build(), null));
            if (setup.topic(t).partitions()[0].shard().index() >= 2) {
                topicOnB = t;
            }
        }
        java.util.Set<Integer> shards = new java.util.HashSet<>();
        for (var ref : setup.queue(partitioned).partitions()) {
            shards.add(ref.shard().index());
        }
        assertThat(shards).as("the partitioned queue spans both nodes").contains(0, 2);
        setup.close();
        return journals;
    }

    private record Cluster(Engine a, Engine b, ClusterClient clientA, int portA, int portB) {
    }

    private Cluster cluster() {
        InMemoryJournalFactory journals = namespace();
        Engine a = start(journals, s -> s < 2);
        Engine b = start(journals, s -> s >= 2);
        int portA = listen(a);
        int portB = listen(b);
        ShardDirectory directory = shard -> "127.0.0.1:" + (shard < 2 ? portA : portB);
        ClusterClient clientA = client(directory, SECRET, 64, Duration.ofSeconds(5));
        a.cluster().remotePartitions(clientA);
        b.cluster().remotePartitions(client(directory, SECRET, 64, Duration.ofSeconds(5)));
        return new Cluster(a, b, clientA, portA, portB);
    }

    private int listen(Engine e) {
        ClusterServer server = new ClusterServer(vertx, e, SECRET, 256);
        toClose.add(server);
        return server.listen("127.0.0.1", 0).await();
    }

    private ClusterClient client(ShardDirectory directory, byte[] secret, int maxInFlight, Duration timeout) {
        ClusterClient c = new ClusterClient(vertx, directory, secret, maxInFlight, timeout);
        toClose.add(c);
        return c;
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new CompletionException(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static Message text(String id, String body) {
        return Message.builder().messageId(id).body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    private static String describe(ReceivedMessage m) {
        return m.message().messageId() + ":" + new String(m.message().body(), StandardCharsets.UTF_8) + "#"
                + m.sequenceNumber() + "@" + m.enqueuedTimeMs() + " " + m.state() + " dc=" + m.deliveryCount()
                + " p=" + m.partitionIndex() + " " + m.message().applicationProperties() + " dlq="
                + m.message().annotations();
    }

    private static String outcome(Runnable r) {
        try {
            r.run();
            return "ok";
        } catch (BrokerException e) {
            return e.kind() + ": " + e.getMessage();
        }
    }

    /** Deliveries of a receiver, for the lock tokens. */
    private static final class Sink implements DeliverySink {
        final LinkedBlockingQueue<ReceivedMessage> messages = new LinkedBlockingQueue<>();

        @Override
        public void onMessage(Receiver receiver, ReceivedMessage message) {
            messages.add(message);
        }

        final CompletableFuture<BrokerException> closed = new CompletableFuture<>();

        @Override
        public void onClosed(Receiver receiver, BrokerException error) {
            closed.complete(error);
        }

        /** Asserts nothing more arrives for a while. */
        void none() throws InterruptedException {
            assertThat(messages.poll(300, TimeUnit.MILLISECONDS)).as("no delivery").isNull();
        }

        ReceivedMessage take() throws InterruptedException {
            ReceivedMessage m = messages.poll(10, TimeUnit.SECONDS);
            assertThat(m).as("a delivery").isNotNull();
            return m;
        }
    }

    // ------------------------------------------------------------------------------------------------ the scenario

    /**
     * Sends, schedules, cancels, browses, counts, settles and uses session state through {@code front}; receivers
     * (not routed in this slice) are attached on {@code owner}, which serves the entities' shards. Returns what was
     * observed, lock tokens aside.
     */
    /** How the scenario waits: for a future, and for deliveries (nothing to do with real threads). */
    private interface Await {
        <T> T join(CompletableFuture<T> f);

        default void settle() {
        }
    }

    private static final Await THREADS = new Await() {
        @Override
        public <T> T join(CompletableFuture<T> f) {
            return ClusterRoutingTest.join(f);
        }
    };

    private List<String> scenario(Engine front, Engine owner) throws InterruptedException {
        return scenario(front, owner, THREADS);
    }

    private List<String> scenario(Engine front, Engine owner, Await a) throws InterruptedException {
        List<String> seen = new ArrayList<>();
        EntityAddress q = EntityAddress.parse(onB);
        a.join(front.send(onB, List.of(text("m1", "one"), text("m2", "two"),
                text("m3", "later").toBuilder().scheduledEnqueueTimeMs(T0 + 3_600_000).build())));
        seen.add("counts " + a.join(front.counts(onB)));
        long[] seqs = a.join(front.schedule(onB, List.of(text("m4", "scheduled")
                .toBuilder().scheduledEnqueueTimeMs(T0 + 7_200_000).build())));
        seen.add("scheduled " + seqs[0] + " " + a.join(front.counts(onB)));
        a.join(front.cancelScheduled(onB, seqs));
        seen.add("cancelled " + a.join(front.counts(onB)));
        seen.add("cancel again " + outcome(() -> a.join(front.cancelScheduled(onB, seqs))));
        a.join(front.peek(q, 0, 10, null)).forEach(m -> seen.add("peek " + describe(m)));

        Sink sink = new Sink();
        Receiver r = owner.createReceiver(q, ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(2);
        a.settle();
        ReceivedMessage first = sink.take();
        ReceivedMessage second = sink.take();
        r.close();
        a.join(front.defer(q, first.lockToken(), Map.of("why", "later")));
        seen.add("renewed " + a.join(front.renewLock(q, second.lockToken())));
        a.join(front.complete(q, second.lockToken()));
        seen.add("complete again " + outcome(() -> a.join(front.complete(q, second.lockToken()))));
        seen.add("unknown lock " + outcome(() -> a.join(front.abandon(q, new UUID(7, 0), null))));
        seen.add("after settling " + a.join(front.counts(onB)));
        List<ReceivedMessage> deferred = a.join(front.receiveDeferred(q, new long[] {first.sequenceNumber()},
                ReceiveMode.PEEK_LOCK, null, null));
        deferred.forEach(m -> seen.add("deferred " + describe(m)));
        a.join(front.deadLetter(q, deferred.get(0).lockToken(), "Reason", "Description", Map.of("k", 1L)));
        seen.add("dead-lettered " + a.join(front.counts(onB)));
        a.join(front.peek(q.withSubQueue(io.buslane.engine.api.SubQueue.DEAD_LETTER), 0, 10, null))
                .forEach(m -> seen.add("dlq " + describe(m)));
        seen.add("no deferred " + outcome(() -> a.join(front.receiveDeferred(q, new long[] {999},
                ReceiveMode.PEEK_LOCK, null, null))));

        EntityAddress s = EntityAddress.parse(sessionsOnB);
        seen.add("state before " + java.util.Arrays.toString(a.join(front.getSessionState(s, "s1"))));
        a.join(front.setSessionState(s, "s1", new byte[] {1, 2, 3}));
        seen.add("state after " + java.util.Arrays.toString(a.join(front.getSessionState(s, "s1"))));
        seen.add("renew unlocked session " + outcome(() -> a.join(front.renewSessionLock(s, "s1", null))));
        seen.add("state on a queue without sessions " + outcome(() -> a.join(front.getSessionState(q, "s1"))));
        seen.add("send without session " + outcome(() -> a.join(front.send(sessionsOnB, List.of(text("x", "x"))))));

        for (int i = 0; i < 12; i++) { // one send per key: a batch with distinct keys is refused, as on the service
            a.join(front.send(partitioned, List.of(text("pm" + i, "body" + i).toBuilder().partitionKey("key" + i)
                    .build())));
        }
        seen.add("partitioned " + a.join(front.counts(partitioned)));
        a.join(front.peek(EntityAddress.parse(partitioned), 0, 100, null)).forEach(m -> seen.add("p " + describe(m)));
        a.join(front.peek(EntityAddress.parse(partitioned), ((long) 3) << 48, 5, null))
                .forEach(m -> seen.add("p from 3 " + describe(m)));

        a.join(front.send(topicOnB, List.of(text("t1", "now"),
                text("t2", "later").toBuilder().scheduledEnqueueTimeMs(T0 + 3_600_000).build())));
        seen.add("topic " + a.join(front.counts(topicOnB)));
        seen.add("subscription " + a.join(front.counts(topicOnB + "/Subscriptions/s")));
        a.join(front.peek(EntityAddress.parse(topicOnB), 0, 10, null)).forEach(m -> seen.add("t " + describe(m)));
        a.join(front.peek(EntityAddress.subscription(topicOnB, "s"), 0, 10, null))
                .forEach(m -> seen.add("s " + describe(m)));
        seen.add("no subscription " + outcome(() -> a.join(front.counts(topicOnB + "/Subscriptions/none"))));

        a.join(front.send(sessionsOnB, List.of(text("x1", "x").toBuilder().sessionId("s2").build())));
        seen.add("sessions " + a.join(front.listSessions(s, Engine.ALL_ACTIVE_SESSIONS, 0, 10, null)));
        seen.add("deleted " + a.join(front.deleteMessages(EntityAddress.parse(partitioned), 5, Long.MAX_VALUE, null)));
        seen.add("purged " + a.join(front.purge(EntityAddress.parse(partitioned))));
        seen.add("after purge " + a.join(front.counts(partitioned)));
        return seen;
    }

    @Test
    void operationsThroughNodeAOnBsShardsAnswerAsASingleEngine() throws InterruptedException {
        InMemoryJournalFactory single = namespace();
        Engine alone = start(single, s -> true);
        List<String> expected = scenario(alone, alone);

        Cluster c = cluster();
        List<String> routed = scenario(c.a(), c.b());

        assertThat(routed).isEqualTo(expected);
        assertThat(expected).anySatisfy(line -> assertThat(line).startsWith("deferred m1:one"))
                .anySatisfy(line -> assertThat(line).startsWith("dlq m1:one"))
                .contains("state after [1, 2, 3]")
                .anySatisfy(line -> assertThat(line).startsWith("t t2:later"))
                .anySatisfy(line -> assertThat(line).startsWith("s t1:now"))
                .anySatisfy(line -> assertThat(line).startsWith("cancel again MESSAGE_NOT_FOUND"));
        assertThat(c.clientA().inFlight("127.0.0.1:" + c.portB())).isZero();
    }

    // ------------------------------------------------------------------------------------------------ loopback

    private record Loopback(Engine a, Engine b, LoopbackChannel channel) implements Await {
        @Override
        public <T> T join(CompletableFuture<T> f) {
            return channel.await(f);
        }

        @Override
        public void settle() {
            channel.pump();
        }
    }

    /** A and B in manual threading mode on one manual clock, joined by the in-process {@link LoopbackChannel}. */
    private Loopback loopback() {
        InMemoryJournalFactory journals = namespace();
        ManualClock clock = new ManualClock(T0);
        Engine a = Engine.start(new EngineConfig(clock, Storage.of(journals), 4, ThreadingMode.MANUAL), s -> s < 2);
        toClose.add(a);
        Engine b = Engine.start(new EngineConfig(clock, Storage.of(journals), 4, ThreadingMode.MANUAL), s -> s >= 2);
        toClose.add(b);
        LoopbackChannel channel = new LoopbackChannel(clock);
        java.util.function.IntFunction<Engine> owner = shard -> shard < 2 ? a : b;
        a.cluster().remotePartitions(channel.portFor(owner));
        b.cluster().remotePartitions(channel.portFor(owner));
        channel.drive(a);
        channel.drive(b);
        channel.pump();
        return new Loopback(a, b, channel);
    }

    /** The same scenario, deterministic: no socket, no thread, no wall-clock time (#33). */
    @Test
    void operationsThroughNodeAOnBsShardsAnswerAsASingleEngineOverTheLoopbackChannel() throws InterruptedException {
        InMemoryJournalFactory single = namespace();
        Engine alone = start(single, s -> true);
        List<String> expected = scenario(alone, alone);

        Loopback l = loopback();
        assertThat(scenario(l.a(), l.b(), l)).isEqualTo(expected);
        assertThat(l.channel().carried()).isPositive();
    }

    /**
     * A receiver on A fed by B's partition through the long polls of the loopback channel: within its credit, with
     * settlements carried back, a drain ending the poll that waits at B, and the poll deadline firing on the manual
     * clock only.
     */
    @Test
    void aReceiverOnAGetsBsMessagesOverTheLoopbackChannelOnItsOwnClock() {
        Loopback l = loopback();
        EntityAddress q = EntityAddress.parse(onB);
        for (int i = 0; i < 5; i++) {
            l.join(l.a().send(onB, List.of(text("m" + i, "body" + i))));
        }
        Sink sink = new Sink();
        Receiver r = l.a().createReceiver(q, ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(3);
        l.settle();
        List<ReceivedMessage> got = new ArrayList<>(sink.messages);
        sink.messages.clear();
        assertThat(got).extracting(m -> m.message().messageId()).containsExactly("m0", "m1", "m2");
        l.join(r.complete(got.get(0).lockToken()));
        l.join(r.abandon(got.get(1).lockToken(), null));
        r.addCredit(3);
        l.settle();
        assertThat(new ArrayList<>(sink.messages)).extracting(m -> m.message().messageId() + " dc=" + m.deliveryCount())
                .containsExactly("m1 dc=1", "m3 dc=0", "m4 dc=0");
        sink.messages.clear();
        assertThat(l.join(l.a().counts(onB)).activeMessageCount()).isEqualTo(4);

        // the poll waiting at B for more ends with the drain, at once, the clock standing still
        assertThat(l.join(r.drain())).isEqualTo(0);
        r.addCredit(5);
        assertThat(l.join(r.drain())).isEqualTo(5);
        // a message sent later reaches the receiver through a new poll, as time passes on the manual clock only
        r.addCredit(1);
        l.join(l.a().send(onB, List.of(text("later", "after a while"))));
        l.channel().advance(Duration.ofSeconds(30));
        assertThat(new ArrayList<>(sink.messages)).extracting(m -> m.message().messageId()).containsExactly("later");
        r.close();
        l.settle();
    }

    /** A long poll's answer is bounded in bytes, not only in messages: large messages come in several answers. */
    @Test
    void aPollOfLargeMessagesAnswersWithinItsByteBoundAndTheReceiverGetsThemAll() {
        Loopback l = loopback();
        String body = "x".repeat(200 * 1024);
        int count = 40; // 8 MB in all, twice the bound
        for (int i = 0; i < count; i++) {
            l.join(l.a().send(onB, List.of(text("big" + i, body))));
        }
        Sink sink = new Sink();
        Receiver r = l.a().createReceiver(EntityAddress.parse(onB), ReceiveMode.RECEIVE_AND_DELETE, sink);
        r.addCredit(count);
        l.channel().advance(Duration.ofSeconds(5));
        assertThat(new ArrayList<>(sink.messages)).extracting(m -> m.message().messageId())
                .containsExactlyElementsOf(IntStream.range(0, count).mapToObj(i -> "big" + i).toList());
        assertThat(l.channel().largestAnswerBytes()).as("the largest answer (bytes)")
                .isLessThan(RemoteConsumers.MAX_ANSWER_BYTES + 2 * body.length());
        r.close();
        l.settle();
    }

    @Test
    void aRetriedSendIsStoredOnce() {
        Cluster c = cluster();
        int shard = c.a().queue(onB).partitions()[0].shard().index();
        PartitionOp.Send send = new PartitionOp.Send(onB, 0, List.of(text("r1", "retried")), "transfer-key-1");
        join(c.clientA().call(shard, send));
        join(c.clientA().call(shard, send));
        assertThat(join(c.a().counts(onB)).activeMessageCount()).isEqualTo(1);
        join(c.clientA().call(shard, new PartitionOp.Send(onB, 0, send.messages(), "transfer-key-2")));
        assertThat(join(c.a().counts(onB)).activeMessageCount()).isEqualTo(2);
    }

    @Test
    void aSendWhoseAnswerIsLostIsSentAgainOnANewConnectionAndStoredOnce() {
        Cluster c = cluster();
        // a proxy in front of B that, on its first connection, drops the connection instead of passing on the first
        // answer (after B's one handshake frame, the challenge): B did the work, A never heard
        int challengeBytes = 4 + 1 + Frames.NONCE_BYTES + Frames.MAC_BYTES + 1; // + the protocol version
        java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
        NetServer proxy = vertx.createNetServer().connectHandler(in -> {
            boolean dropFirstAnswer = connections.incrementAndGet() == 1;
            in.pause();
            vertx.createNetClient().connect(c.portB(), "127.0.0.1").onSuccess(out -> {
                long[] fromB = {0};
                out.handler(b -> {
                    if (dropFirstAnswer && fromB[0] >= challengeBytes) {
                        in.close();
                        out.close();
                        return;
                    }
                    fromB[0] += b.length();
                    in.write(b);
                });
                in.handler(out::write);
                in.closeHandler(v -> out.close());
                out.closeHandler(v -> in.close());
                in.resume();
            });
        });
        int port = proxy.listen(0, "127.0.0.1").await().actualPort();
        ClusterClient viaProxy = client(shard -> "127.0.0.1:" + port, SECRET, 8, Duration.ofSeconds(5));
        int shard = c.a().queue(onB).partitions()[0].shard().index();
        PartitionOp.Send send = new PartitionOp.Send(onB, 0, List.of(text("l1", "lost answer")),
                UUID.randomUUID().toString());
        join(viaProxy.call(shard, send));
        assertThat(connections).hasValue(2);
        assertThat(join(c.a().counts(onB)).activeMessageCount()).isEqualTo(1);
        proxy.close().await();
    }

    @Test
    void theOwnerRefusesAPartitionItDoesNotServeInsteadOfCarryingItOn() {
        Cluster c = cluster();
        int onA = -1;
        for (int p = 0; p < c.a().queue(partitioned).partitions().length; p++) {
            if (c.a().queue(partitioned).partitions()[p].shard().index() < 2) {
                onA = p;
            }
        }
        PartitionOp.Counts counts = new PartitionOp.Counts(partitioned, onA);
        assertThatThrownBy(() -> join(c.b().cluster().ownerSide().run(counts)))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        assertThat(join(c.a().cluster().ownerSide().run(counts))).isNotNull();

        // a stale directory (B named for A's shard): B refuses, and the refusal travels back as it is
        ClusterClient stale = client(shard -> "127.0.0.1:" + c.portB(), SECRET, 8, Duration.ofSeconds(5));
        assertThatThrownBy(() -> join(stale.call(0, counts)))
                .isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
                    assertThat(e.getMessage()).contains("is not served by this node");
                });
    }

    @Test
    void aPeerWithoutTheSecretIsRefused() {
        Cluster c = cluster();
        // a node with another secret: the server's proof does not check out, so it never sends its AUTH
        ClusterClient intruder = client(shard -> "127.0.0.1:" + c.portB(),
                "wrong".getBytes(StandardCharsets.UTF_8), 8, Duration.ofSeconds(5));
        long start = System.nanoTime();
        assertThatThrownBy(() -> join(intruder.call(2, new PartitionOp.Counts(onB, 0))))
                .isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
                    assertThat(e.getMessage()).contains("does not know this cluster's secret");
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));

        // a peer that answers the challenge wrongly and pipelines a send at once: the server closes the connection
        // without a word more, and the send is not stored
        CompletableFuture<Integer> bytesAfterChallenge = new CompletableFuture<>();
        int[] received = {0};
        vertx.createNetClient().connect(c.portB(), "127.0.0.1").onSuccess(socket -> {
            socket.handler(b -> {
                received[0] += b.length();
                RecordWriter auth = new RecordWriter(40);
                auth.writeByte(Frames.AUTH);
                auth.writeRaw(new byte[Frames.MAC_BYTES], 0, Frames.MAC_BYTES);
                RecordWriter request = new RecordWriter(256);
                request.writeByte(Frames.REQUEST);
                request.writeLong(1);
                OpCodec.write(request, new PartitionOp.Send(onB, 0, List.of(text("x1", "from an intruder")),
                        UUID.randomUUID().toString()));
                socket.write(Frames.frame(auth).appendBuffer(Frames.frame(request)));
            });
            socket.closeHandler(v -> bytesAfterChallenge.complete(received[0]
                    - (4 + 1 + Frames.NONCE_BYTES + Frames.MAC_BYTES + 1))); // + the version (one byte)
            RecordWriter hello = new RecordWriter(40);
            hello.writeByte(Frames.HELLO);
            hello.writeRaw(new byte[Frames.NONCE_BYTES], 0, Frames.NONCE_BYTES);
            socket.write(Frames.frame(hello));
        });
        assertThat(join(bytesAfterChallenge)).isZero();
        assertThat(join(c.a().counts(onB)).activeMessageCount()).isZero();
    }

    /**
     * A Vert.x client installs its socket's data handler in the connect callback, a later event-loop task: bytes the
     * server wrote on accept could be read and dropped before it (the handshake then hung until the request timed
     * out, a rare CI failure). So the server says nothing until the client's hello.
     */
    @Test
    void theServerSaysNothingBeforeTheClientsHello() throws Exception {
        Cluster c = cluster();
        try (java.net.Socket raw = new java.net.Socket("127.0.0.1", c.portB())) {
            raw.setSoTimeout(300);
            assertThatThrownBy(() -> raw.getInputStream().read()).isInstanceOf(java.net.SocketTimeoutException.class);
            RecordWriter hello = new RecordWriter(40);
            hello.writeByte(Frames.HELLO);
            hello.writeRaw(new byte[Frames.NONCE_BYTES], 0, Frames.NONCE_BYTES);
            raw.getOutputStream().write(Frames.frame(hello).getBytes());
            raw.setSoTimeout(5_000);
            byte[] challenge = raw.getInputStream().readNBytes(4 + 1 + Frames.NONCE_BYTES + Frames.MAC_BYTES);
            assertThat(challenge[4]).isEqualTo(Frames.CHALLENGE);
            byte[] proof = java.util.Arrays.copyOfRange(challenge, 5 + Frames.NONCE_BYTES, challenge.length);
            assertThat(proof).isEqualTo(Frames.mac(SECRET, Frames.SERVER, new byte[Frames.NONCE_BYTES]));
        }
    }

    /**
     * The handshake carries the protocol version (#33): a peer announcing one this node does not speak is refused
     * with both named, in either direction; a peer of before the version (none in its frames) speaks version 1.
     */
    @Test
    void aPeerOfAnotherProtocolVersionIsRefusedAndOneWithoutAVersionSpeaksTheFirst() throws Exception {
        Cluster c = cluster();
        for (int[] variant : new int[][] {{Frames.PROTOCOL_VERSION + 1}, {}}) {
            try (java.net.Socket raw = new java.net.Socket("127.0.0.1", c.portB())) {
                raw.setSoTimeout(5_000);
                byte[] clientNonce = new byte[Frames.NONCE_BYTES];
                RecordWriter hello = new RecordWriter(40);
                hello.writeByte(Frames.HELLO);
                hello.writeRaw(clientNonce, 0, clientNonce.length);
                raw.getOutputStream().write(Frames.frame(hello).getBytes());
                byte[] challenge = raw.getInputStream().readNBytes(4 + 1 + Frames.NONCE_BYTES + Frames.MAC_BYTES + 1);
                assertThat(challenge[challenge.length - 1]).as("the server's version").isEqualTo((byte) 1);
                byte[] serverNonce = java.util.Arrays.copyOfRange(challenge, 5, 5 + Frames.NONCE_BYTES);
                RecordWriter auth = new RecordWriter(40);
                auth.writeByte(Frames.AUTH);
                byte[] mac = Frames.mac(SECRET, Frames.CLIENT, serverNonce);
                auth.writeRaw(mac, 0, mac.length);
                for (int v : variant) {
                    auth.writeVarInt(v);
                }
                RecordWriter request = new RecordWriter(64);
                request.writeByte(Frames.REQUEST);
                request.writeLong(7);
                OpCodec.write(request, new PartitionOp.Counts(onB, 0));
                raw.getOutputStream().write(Frames.frame(auth).appendBuffer(Frames.frame(request)).getBytes());
                int first = raw.getInputStream().read();
                if (variant.length == 1) {
                    assertThat(first).as("closed without an answer").isEqualTo(-1);
                } else {
                    assertThat(first).as("answered").isNotEqualTo(-1);
                }
            }
        }
        NetServer newer = vertx.createNetServer().connectHandler(socket -> socket.handler(b -> {
            RecordWriter w = new RecordWriter(80);
            w.writeByte(Frames.CHALLENGE);
            w.writeRaw(new byte[Frames.NONCE_BYTES], 0, Frames.NONCE_BYTES);
            byte[] proof = b.length() > 5 ? Frames.mac(SECRET, Frames.SERVER,
                    b.getBytes(5, 5 + Frames.NONCE_BYTES)) : new byte[Frames.MAC_BYTES];
            w.writeRaw(proof, 0, proof.length);
            w.writeVarInt(Frames.PROTOCOL_VERSION + 1);
            socket.write(Frames.frame(w));
        }));
        int port = newer.listen(0, "127.0.0.1").await().actualPort();
        ClusterClient client = client(shard -> "127.0.0.1:" + port, SECRET, 8, Duration.ofSeconds(5));
        assertThatThrownBy(() -> join(client.call(0, new PartitionOp.Counts("q", 0))))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.getMessage()).contains("speaks cluster protocol version 2"));
        newer.close().await();
    }

    @Test
    void aServerWithoutTheSecretIsNotTrusted() {
        NetServer impostor = vertx.createNetServer().connectHandler(socket -> socket.handler(b -> {
            RecordWriter w = new RecordWriter(80);
            w.writeByte(Frames.CHALLENGE);
            w.writeRaw(new byte[Frames.NONCE_BYTES], 0, Frames.NONCE_BYTES);
            w.writeRaw(new byte[Frames.MAC_BYTES], 0, Frames.MAC_BYTES);
            socket.write(Frames.frame(w));
        }));
        int port = impostor.listen(0, "127.0.0.1").await().actualPort();
        ClusterClient c = client(shard -> "127.0.0.1:" + port, SECRET, 8, Duration.ofSeconds(5));
        assertThatThrownBy(() -> join(c.call(0, new PartitionOp.Counts("q", 0))))
                .isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
                    assertThat(e.getMessage()).contains("does not know this cluster's secret");
                });
        impostor.close().await();
    }

    @Test
    void aStalledPeerYieldsServerBusyWithinTheTimeoutAndTheInFlightCapHolds() {
        NetServer stalled = vertx.createNetServer().connectHandler(socket -> socket.handler(b -> { }));
        int port = stalled.listen(0, "127.0.0.1").await().actualPort();
        String address = "127.0.0.1:" + port;
        ClusterClient c = client(shard -> address, SECRET, 2, Duration.ofMillis(300));
        long start = System.nanoTime();
        CompletableFuture<RuntimeCounts> one = c.call(0, new PartitionOp.Counts("q", 0));
        CompletableFuture<RuntimeCounts> two = c.call(0, new PartitionOp.Counts("q", 0));
        CompletableFuture<RuntimeCounts> three = c.call(0, new PartitionOp.Counts("q", 0));
        assertThat(three).isCompletedExceptionally();
        assertThatThrownBy(three::join).hasCauseInstanceOf(BrokerException.class)
                .hasMessageContaining("Too many requests in flight");
        assertThat(c.inFlight(address)).isEqualTo(2);
        for (CompletableFuture<RuntimeCounts> f : List.of(one, two)) {
            assertThatThrownBy(() -> join(f)).isInstanceOfSatisfying(BrokerException.class, e -> {
                assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
                assertThat(e.getMessage()).contains("did not answer within 300 ms");
            });
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        assertThat(c.inFlight(address)).isZero();
        stalled.close().await();
    }

    // ------------------------------------------------------------------------------------------------ receivers

    @Test
    void aReceiverOnAGetsBsMessagesWithinItsCreditAndSettlesThem() throws Exception {
        Cluster c = cluster();
        EntityAddress q = EntityAddress.parse(onB);
        for (int i = 0; i < 5; i++) {
            join(c.a().send(onB, List.of(text("m" + i, "body" + i))));
        }
        Sink sink = new Sink();
        Receiver r = c.a().createReceiver(q, ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(3);
        List<ReceivedMessage> got = new ArrayList<>(List.of(sink.take(), sink.take(), sink.take()));
        sink.none();
        assertThat(got).extracting(m -> m.message().messageId()).containsExactly("m0", "m1", "m2");
        join(r.complete(got.get(0).lockToken()));
        join(r.abandon(got.get(1).lockToken(), null));
        r.addCredit(3);
        List<ReceivedMessage> more = List.of(sink.take(), sink.take(), sink.take());
        assertThat(more).extracting(m -> m.message().messageId() + " dc=" + m.deliveryCount())
                .containsExactly("m1 dc=1", "m3 dc=0", "m4 dc=0");
        assertThat(join(c.a().counts(onB)).activeMessageCount()).isEqualTo(4);

        // a drain ends the poll waiting at B at once (B's clock stands still: only the end request can end it)
        assertThat(join(r.drain())).isEqualTo(0);
        r.addCredit(5);
        assertThat(join(r.drain())).isEqualTo(5);
        r.addCredit(1);
        r.close();
        join(c.a().send(onB, List.of(text("late", "after close"))));
        sink.none();
        Sink other = new Sink();
        Receiver onBItself = c.b().createReceiver(q, ReceiveMode.PEEK_LOCK, other);
        onBItself.addCredit(1);
        assertThat(other.take().message().messageId()).isEqualTo("late");
        onBItself.close();
    }

    @Test
    void aReceiveAndDeleteReceiverOnAEmptiesBsQueueAndAPartitionedOneAcrossBothNodes() throws Exception {
        Cluster c = cluster();
        join(c.a().send(onB, List.of(text("d1", "one"), text("d2", "two"))));
        Sink sink = new Sink();
        Receiver r = c.a().createReceiver(EntityAddress.parse(onB), ReceiveMode.RECEIVE_AND_DELETE, sink);
        r.addCredit(10);
        assertThat(List.of(sink.take(), sink.take())).extracting(m -> m.message().messageId())
                .containsExactly("d1", "d2");
        assertThat(join(c.b().counts(onB)).activeMessageCount()).isZero();
        r.close();

        for (int i = 0; i < 12; i++) { // one send per key
            join(c.b().send(partitioned, List.of(text("pm" + i, "body" + i).toBuilder().partitionKey("key" + i)
                    .build())));
        }
        Sink all = new Sink();
        Receiver p = c.a().createReceiver(EntityAddress.parse(partitioned), ReceiveMode.PEEK_LOCK, all);
        p.addCredit(100);
        java.util.Set<String> ids = new java.util.TreeSet<>();
        java.util.Set<Integer> partitions = new java.util.TreeSet<>();
        for (int i = 0; i < 12; i++) {
            ReceivedMessage m = all.take();
            ids.add(String.valueOf(m.message().messageId()));
            partitions.add(m.partitionIndex());
            join(p.complete(m.lockToken()));
        }
        assertThat(ids).hasSize(12);
        assertThat(join(c.a().counts(partitioned)).activeMessageCount()).isZero();
        assertThat(join(p.drain())).isEqualTo(88);
        p.close();
    }

    @Test
    void aSessionOnBIsAcceptedRenewedAndReleasedThroughA() throws Exception {
        Cluster c = cluster();
        EntityAddress s = EntityAddress.parse(sessionsOnB);
        for (int i = 0; i < 3; i++) {
            join(c.a().send(sessionsOnB, List.of(text("a" + i, "s1-" + i).toBuilder().sessionId("s1").build(),
                    text("b" + i, "s2-" + i).toBuilder().sessionId("s2").build())));
        }
        Sink sink = new Sink();
        Receiver r = join(c.a().acceptSession(s, "s1", ReceiveMode.PEEK_LOCK, 1_000, sink));
        assertThat(r.sessionId()).isEqualTo("s1");
        assertThat(r.sessionLockedUntilMs()).isGreaterThan(T0);
        r.addCredit(10);
        List<ReceivedMessage> got = List.of(sink.take(), sink.take(), sink.take());
        sink.none();
        assertThat(got).extracting(m -> m.message().messageId()).containsExactly("a0", "a1", "a2");

        // the lock is held on B for the receiver on A: B cannot take it, A's receiver renews it (by its link too)
        assertThatThrownBy(() -> join(c.b().acceptSession(s, "s1", ReceiveMode.PEEK_LOCK, 0, new Sink())))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.SESSION_CANNOT_BE_LOCKED));
        clocks.get(c.b()).advance(Duration.ofSeconds(20));
        assertThat(join(r.renewSessionLock())).isEqualTo(T0 + 20_000 + 60_000);
        assertThat(join(c.a().renewSessionLock(s, "s1", r))).isEqualTo(T0 + 20_000 + 60_000);
        join(c.a().checkSessionLocked(s, "s1", r));
        join(c.a().setSessionState(s, "s1", new byte[] {9}));
        join(r.complete(got.get(0).lockToken()));
        join(r.complete(got.get(1).lockToken()));
        join(r.defer(got.get(2).lockToken(), null));
        List<ReceivedMessage> deferred = join(c.a().receiveDeferred(s, new long[] {got.get(2).sequenceNumber()},
                ReceiveMode.PEEK_LOCK, "s1", r));
        assertThat(deferred).extracting(m -> m.message().messageId()).containsExactly("a2");
        join(r.complete(deferred.get(0).lockToken()));

        // accept-next on A finds the other session on B
        Sink next = new Sink();
        Receiver r2 = join(c.a().acceptSession(s, null, ReceiveMode.PEEK_LOCK, 5_000, next));
        assertThat(r2.sessionId()).isEqualTo("s2");
        r2.addCredit(1);
        assertThat(next.take().message().messageId()).isEqualTo("b0");
        r2.close(); // the session goes back, its locked message with it (no delivery counted)
        r.close();
        Receiver again = acceptWhenFree(c.b(), s, "s2", next);
        again.addCredit(1);
        ReceivedMessage b0 = next.take();
        assertThat(b0.message().messageId() + " dc=" + b0.deliveryCount()).isEqualTo("b0 dc=0");
        again.close();
        assertThat(java.util.Arrays.toString(join(c.b().getSessionState(s, "s1")))).isEqualTo("[9]");
        acceptWhenFree(c.b(), s, "s1", new Sink()).close();
    }

    /** Accepts a named session once the release a closing remote receiver sent has reached its owner. */
    private static Receiver acceptWhenFree(Engine e, EntityAddress s, String id, Sink sink)
            throws InterruptedException {
        for (int i = 0; ; i++) {
            try {
                return join(e.acceptSession(s, id, ReceiveMode.PEEK_LOCK, 0, sink));
            } catch (BrokerException locked) {
                if (locked.kind() != ErrorKind.SESSION_CANNOT_BE_LOCKED || i == 100) {
                    throw locked;
                }
                Thread.sleep(20);
            }
        }
    }

    @Test
    void aRemoteSessionWhoseLockRunsOutAtTheOwnerClosesTheReceiverOnA() throws Exception {
        Cluster c = cluster();
        EntityAddress s = EntityAddress.parse(sessionsOnB);
        join(c.a().send(sessionsOnB, List.of(text("x", "x").toBuilder().sessionId("s9").build())));
        Sink sink = new Sink();
        Receiver r = join(c.a().acceptSession(s, null, ReceiveMode.PEEK_LOCK, 5_000, sink));
        assertThat(r.sessionId()).isEqualTo("s9");
        r.addCredit(1);
        sink.take();
        r.addCredit(1); // a poll waits at B
        clocks.get(c.b()).advance(Duration.ofSeconds(61));
        join(c.b().counts(sessionsOnB)); // a cycle on B's shard runs its timers
        BrokerException why = sink.closed.get(10, TimeUnit.SECONDS);
        assertThat(why.kind()).isEqualTo(ErrorKind.SESSION_LOCK_LOST);
        assertThatThrownBy(() -> join(r.renewSessionLock())).isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(ErrorKind.SESSION_LOCK_LOST));
        Receiver taken = join(c.b().acceptSession(s, "s9", ReceiveMode.PEEK_LOCK, 0, new Sink()));
        assertThat(taken.sessionId()).isEqualTo("s9");
    }

    @Test
    void acceptNextOnAWithNoSessionAnywhereTimesOut() {
        Cluster c = cluster();
        long start = System.nanoTime();
        assertThatThrownBy(() -> join(c.a().acceptSession(EntityAddress.parse(sessionsOnB), null,
                ReceiveMode.PEEK_LOCK, 500, new Sink()))).isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.TIMEOUT));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aTransactionOnBsQueueIsCommittedThroughAByB() throws Exception {
        Cluster c = cluster();
        EntityAddress q = EntityAddress.parse(onB);
        join(c.a().send(onB, List.of(text("m1", "to settle"))));
        Sink sink = new Sink();
        Receiver r = c.a().createReceiver(q, ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(1);
        ReceivedMessage m1 = sink.take();
        long[] reserved = join(c.a().reserveScheduled(onB, List.of(text("later", "scheduled")
                .toBuilder().scheduledEnqueueTimeMs(T0 + 3_600_000).build())));
        io.buslane.engine.txn.TransactionalBatch batch = new io.buslane.engine.txn.TransactionalBatch()
                .addSend(onB, List.of(text("t1", "sent in the transaction")))
                .addSchedule(new io.buslane.engine.txn.TransactionalBatch.Schedule(onB, text("later", "scheduled")
                        .toBuilder().scheduledEnqueueTimeMs(T0 + 3_600_000).build(), reserved[0]))
                .addSettlement(new io.buslane.engine.txn.TransactionalBatch.Settle(q, m1.lockToken(),
                        io.buslane.engine.txn.TransactionalBatch.SettleKind.COMPLETE, null, null, null));
        assertThat(io.buslane.engine.txn.TransactionalBatchCodec.decode(
                io.buslane.engine.txn.TransactionalBatchCodec.encode(batch)))
                .usingRecursiveComparison().isEqualTo(batch);
        join(c.a().commit(batch));
        r.close();
        var counts = join(c.b().counts(onB));
        assertThat(counts.activeMessageCount()).as("m1 completed, t1 sent").isEqualTo(1);
        assertThat(counts.scheduledMessageCount()).isEqualTo(1);
        assertThat(join(c.b().peek(q, 0, 10, null))).extracting(m -> m.message().messageId())
                .containsExactlyInAnyOrder("t1", "later");
        // a lost lock fails the whole commit, nothing of it applied
        join(c.a().send(onB, List.of(text("m2", "stays"))));
        io.buslane.engine.txn.TransactionalBatch failing = new io.buslane.engine.txn.TransactionalBatch()
                .addSend(onB, List.of(text("t2", "never")))
                .addSettlement(new io.buslane.engine.txn.TransactionalBatch.Settle(q, m1.lockToken(),
                        io.buslane.engine.txn.TransactionalBatch.SettleKind.COMPLETE, null, null, null));
        assertThatThrownBy(() -> join(c.a().commit(failing))).isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(ErrorKind.MESSAGE_LOCK_LOST));
        assertThat(join(c.b().counts(onB)).activeMessageCount()).isEqualTo(2);
    }

    @Test
    void aTransactionFromASubscriptionOnBSendingAndSchedulingViaItsTopicIntoAQueueOnACommits() throws Exception {
        Cluster c = cluster();
        EntityAddress sub = EntityAddress.parse(topicOnB + "/Subscriptions/s");
        join(c.a().send(topicOnB, List.of(text("in", "to settle"))));
        Sink sink = new Sink();
        Receiver r = c.a().createReceiver(sub, ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(1);
        ReceivedMessage in = sink.take();
        Message later = text("later", "scheduled").toBuilder().scheduledEnqueueTimeMs(T0 + 3_600_000).build();
        long[] reserved = join(c.a().reserveScheduled(onA, List.of(later)));
        // the topic's shard is B's, the destination's A's: one commit on B, whose parked work B forwards to A
        join(c.a().commit(new io.buslane.engine.txn.TransactionalBatch()
                .addSend(onA, List.of(text("out", "sent via the topic")), topicOnB)
                .addSchedule(new io.buslane.engine.txn.TransactionalBatch.Schedule(onA, later, reserved[0],
                        topicOnB))
                .addSettlement(new io.buslane.engine.txn.TransactionalBatch.Settle(sub, in.lockToken(),
                        io.buslane.engine.txn.TransactionalBatch.SettleKind.COMPLETE, null, null, null))));
        r.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (join(c.a().counts(onA)).scheduledMessageCount() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20); // the forwards run after B's sync, B to A over the channel
        }
        assertThat(join(c.a().peek(EntityAddress.parse(onA), 0, 10, null)))
                .extracting(m -> m.message().messageId() + "#" + (m.message().messageId().equals("later")
                        ? m.sequenceNumber() == reserved[0] : "sent"))
                .containsExactlyInAnyOrder("out#sent", "later#true");
        assertThat(join(c.b().counts(sub.toString())).activeMessageCount()).as("completed").isZero();
        assertThat(join(c.b().counts(sub.toString())).transferMessageCount()).as("forwarded").isZero();
    }

    @Test
    void aReceiverClosedBecauseOneOfItsShardsWentAwayLeavesItsOtherPartitionsToo() throws Exception {
        Cluster c = cluster();
        var refs = c.a().queue(partitioned).partitions();
        assertThat(java.util.Arrays.stream(refs).map(ref -> ref.shard().index())).contains(0, 1);
        Sink zombie = new Sink();
        Receiver r = c.a().createReceiver(EntityAddress.parse(partitioned), ReceiveMode.PEEK_LOCK, zombie);
        r.addCredit(100);
        c.a().cluster().stopServingShard(0, "moved away for the test");
        assertThat(zombie.closed.get(10, TimeUnit.SECONDS).kind()).isEqualTo(ErrorKind.SERVER_BUSY);

        int stored = 0;
        for (int i = 0; i < 24; i++) {
            try {
                join(c.a().send(partitioned, List.of(text("z" + i, "after").toBuilder().partitionKey("key" + i)
                        .build())));
                stored++;
            } catch (BrokerException notServed) {
                assertThat(notServed.kind()).isEqualTo(ErrorKind.SERVER_BUSY); // a partition of shard 0
            }
        }
        assertThat(stored).isPositive();
        Sink fresh = new Sink();
        Receiver r2 = c.a().createReceiver(EntityAddress.parse(partitioned), ReceiveMode.PEEK_LOCK, fresh);
        r2.addCredit(100);
        for (int i = 0; i < stored; i++) {
            fresh.take(); // none went to the closed receiver's slots on shard 1's partitions
        }
        assertThat(zombie.messages).isEmpty();
        r2.close();
    }

    @Test
    void withOneUnitOfCreditAMessageOnAPartitionServedHereIsNotHeldUpByPollsOfTheOtherNode() throws Exception {
        Cluster c = cluster();
        var refs = c.a().queue(partitioned).partitions();
        Message local = null;
        for (int i = 0; local == null; i++) {
            Message m = text("l" + i, "here").toBuilder().partitionKey("key" + i).build();
            int p = io.buslane.engine.routing.PartitionDirectory.partitionIndexFor(m, false, refs.length, 0);
            if (refs[p].shard().index() < 2) {
                local = m;
            }
        }
        Sink sink = new Sink();
        Receiver r = c.a().createReceiver(EntityAddress.parse(partitioned), ReceiveMode.PEEK_LOCK, sink);
        for (int round = 0; round < 5; round++) {
            r.addCredit(1); // the remote polls take the unit first, B has nothing (and its clock stands still)
            Thread.sleep(50);
            join(c.a().send(partitioned, List.of(local.toBuilder().messageId("l-" + round).build())));
            ReceivedMessage m = sink.take();
            assertThat(m.message().messageId()).isEqualTo("l-" + round);
            join(r.complete(m.lockToken()));
        }
        r.close();
    }
}
