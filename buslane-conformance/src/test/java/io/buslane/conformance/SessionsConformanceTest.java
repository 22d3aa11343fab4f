package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Message sessions with the official Java SDK: per-session FIFO receivers, accept-next, session locks (renewal and
 * expiry), session state, abandon inside a session, rejection of session-less messages, the session processor and
 * session-enabled subscriptions. One broker for the class; every test uses its own entity (or its own session ids) so
 * that tests do not see each other's sessions. The queues' LockDuration is PT5S, except {@code sessions-next}
 * (PT1M), whose session must stay locked while the test waits for accept-next timeouts.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SessionsConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "sessions-fifo", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-next", "Properties": { "RequiresSession": true, "LockDuration": "PT1M" } },
                      { "Name": "sessions-empty", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-state", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-renew", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-expiry", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-abandon", "Properties": { "RequiresSession": true, "LockDuration": "PT5S",
                                                                    "MaxDeliveryCount": 10 } },
                      { "Name": "sessions-reject", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "sessions-processor",
                        "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } }
                    ],
                    "Topics": [
                      {
                        "Name": "sessions-topic",
                        "Subscriptions": [
                          { "Name": "session-sub", "Properties": { "RequiresSession": true } }
                        ]
                      }
                    ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    /** The queues' LockDuration. */
    private static final Duration LOCK = Duration.ofSeconds(5);

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** A builder with short try timeouts and no retries, so that expected failures surface quickly. */
    @Override
    ServiceBusClientBuilder builder() {
        return builder(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(5)).setMaxRetries(0));
    }

    private ServiceBusSessionReceiverClient sessionClient(String queue) {
        return track(builder().sessionReceiver().queueName(queue).disableAutoComplete()
                .maxAutoLockRenewDuration(Duration.ZERO).buildClient());
    }

    private static ServiceBusMessage msg(String body, String sessionId) {
        return new ServiceBusMessage(body).setSessionId(sessionId);
    }

    /** The failure reason of the first ServiceBusException in the cause chain, or null. */
    private static ServiceBusFailureReason reasonOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof ServiceBusException sbe) {
                return sbe.getReason();
            }
        }
        return null;
    }

    /**
     * The AMQP error condition of the first ServiceBusException or AmqpException in the cause chain, or null. The
     * SDK surfaces link-attach failures of a session receiver as a bare AmqpException (ServiceBusSessionAcquirer
     * propagates it unmapped), management failures as a ServiceBusException wrapping one.
     */
    private static AmqpErrorCondition conditionOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof AmqpException ae && ae.getErrorCondition() != null) {
                return ae.getErrorCondition();
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------ tests

    @Test
    void interleavedSessionsAreDemultiplexedInSendOrder() {
        String q = "sessions-fifo";
        ServiceBusSenderClient sender = sender(q);
        List<String> ids = List.of("s-a", "s-b", "s-c");
        for (int i = 0; i < 4; i++) {
            for (String id : ids) {
                sender.sendMessage(msg(id + "-" + i, id));
            }
        }
        // and one batch, interleaved as well
        sender.sendMessages(List.of(msg("s-c-4", "s-c"), msg("s-a-4", "s-a"), msg("s-b-4", "s-b")));

        ServiceBusSessionReceiverClient client = sessionClient(q);
        Map<String, ServiceBusReceiverClient> receivers = new LinkedHashMap<>();
        for (String id : ids) {
            receivers.put(id, track(client.acceptSession(id)));
        }
        for (String id : ids) {
            ServiceBusReceiverClient r = receivers.get(id);
            assertThat(r.getSessionId()).isEqualTo(id);
            List<ServiceBusReceivedMessage> got = receive(r, 5, Duration.ofSeconds(15));
            assertThat(bodies(got)).as("session %s", id)
                    .containsExactly(id + "-0", id + "-1", id + "-2", id + "-3", id + "-4");
            assertThat(got).extracting(ServiceBusReceivedMessage::getSessionId).containsOnly(id);
            assertThat(got).extracting(ServiceBusReceivedMessage::getSequenceNumber).isSorted();
            got.forEach(r::complete);
            assertThat(r.receiveMessages(1, Duration.ofSeconds(1)).stream().toList())
                    .as("nothing else in session %s", id).isEmpty();
        }
    }

    @Test
    void acceptNextSessionAndLockedSessionAndTimeout() {
        String q = "sessions-next";
        sender(q).sendMessages(List.of(msg("n1", "next-1"), msg("n2", "next-1")));
        ServiceBusSessionReceiverClient client = sessionClient(q);

        ServiceBusReceiverClient first = track(client.acceptNextSession());
        assertThat(first.getSessionId()).isEqualTo("next-1");
        assertThat(bodies(receive(first, 2, Duration.ofSeconds(10)))).containsExactly("n1", "n2");

        // the session is locked by 'first': accepting it again fails
        Throwable locked = catchThrowable(() -> track(client.acceptSession("next-1")));
        assertThat(locked).as("acceptSession of a locked session").isNotNull();
        // the SDK throws AmqpException for a refused session attach (ServiceBusException would carry the reason)
        if (locked instanceof ServiceBusException sbe) {
            assertThat(sbe.getReason()).isEqualTo(ServiceBusFailureReason.SESSION_CANNOT_BE_LOCKED);
        } else {
            assertThat(conditionOf(locked)).as("%s", locked).isEqualTo(AmqpErrorCondition.SESSION_CANNOT_BE_LOCKED);
        }

        // nothing else available: accept-next times out within the try timeout (5 s) plus slack
        ServiceBusSessionReceiverClient emptyClient = sessionClient("sessions-empty");
        long t0 = System.nanoTime();
        Throwable timeout = catchThrowable(() -> track(emptyClient.acceptNextSession()));
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(timeout).as("acceptNextSession on an empty entity").isNotNull();
        assertThat(String.valueOf(timeout) + " " + String.valueOf(timeout.getCause()))
                .containsIgnoringCase("timeout");
        assertThat(elapsedMs).isBetween(2_000L, 20_000L);

        // on the queue whose only session is locked, accept-next also times out
        Throwable lockedNext = catchThrowable(() -> track(client.acceptNextSession()));
        assertThat(lockedNext).as("acceptNextSession with the only session locked").isNotNull();
    }

    @Test
    void sessionStateSurvivesConsumptionAndReaccept() {
        String q = "sessions-state";
        sender(q).sendMessages(List.of(msg("x1", "stateful"), msg("x2", "stateful")));
        ServiceBusSessionReceiverClient client = sessionClient(q);
        byte[] state = "step=2;{\"k\":1}".getBytes(StandardCharsets.UTF_8);

        ServiceBusReceiverClient r = client.acceptSession("stateful");
        assertThat(r.getSessionState()).as("no state yet").isNull();
        r.setSessionState(state);
        assertThat(r.getSessionState()).isEqualTo(state);
        List<ServiceBusReceivedMessage> got = receive(r, 2, Duration.ofSeconds(10));
        assertThat(bodies(got)).containsExactly("x1", "x2");
        got.forEach(r::complete);
        assertThat(r.getSessionState()).as("kept after all messages are consumed").isEqualTo(state);
        r.close();

        // re-accept from another client: the SDK names a session link after the session id and may hand back its
        // cached, just-closed link when the same client accepts the same session again right away
        ServiceBusReceiverClient again = track(sessionClient(q).acceptSession("stateful"));
        assertThat(again.getSessionState()).as("kept after closing and re-accepting").isEqualTo(state);
        byte[] next = new byte[] {0, 1, 2, (byte) 0xff};
        again.setSessionState(next);
        assertThat(again.getSessionState()).isEqualTo(next);
        again.setSessionState(null);
        assertThat(again.getSessionState()).as("cleared").isNull();
    }

    @Test
    void sessionLockRenewalExtendsTheLock() throws Exception {
        String q = "sessions-renew";
        sender(q).sendMessages(List.of(msg("r1", "renewed"), msg("r2", "renewed")));
        ServiceBusReceiverClient r = track(sessionClient(q).acceptSession("renewed"));
        assertThat(r.getSessionId()).isEqualTo("renewed");
        ServiceBusReceivedMessage m1 = receive(r, 1, Duration.ofSeconds(10)).get(0);

        OffsetDateTime first = r.renewSessionLock();
        assertThat(first).isAfter(OffsetDateTime.now().plusSeconds(3)).isBefore(OffsetDateTime.now().plusSeconds(8));
        // hold the session for longer than LockDuration, renewing every 2 s
        OffsetDateTime last = first;
        for (int i = 0; i < 4; i++) {
            Thread.sleep(2_000);
            OffsetDateTime renewed = r.renewSessionLock();
            assertThat(renewed).isAfter(last);
            last = renewed;
        }
        assertThat(Duration.between(first, last)).isGreaterThanOrEqualTo(Duration.ofSeconds(7));
        // 8 s > LockDuration: the session and its messages are still ours
        r.complete(m1);
        ServiceBusReceivedMessage m2 = receive(r, 1, Duration.ofSeconds(10)).get(0);
        assertThat(m2.getBody().toString()).isEqualTo("r2");
        r.complete(m2);
        assertThat(r.getSessionState()).isNull();
    }

    @Test
    void sessionLockIsLostAfterLockDuration() throws Exception {
        String q = "sessions-expiry";
        sender(q).sendMessages(List.of(msg("e1", "expiring"), msg("e2", "expiring")));
        ServiceBusSessionReceiverClient client = sessionClient(q);
        ServiceBusReceiverClient r = track(client.acceptSession("expiring"));
        ServiceBusReceivedMessage m1 = receive(r, 1, Duration.ofSeconds(10)).get(0);
        assertThat(m1.getBody().toString()).isEqualTo("e1");

        Thread.sleep(LOCK.plusSeconds(1).toMillis());

        Throwable renew = catchThrowable(r::renewSessionLock);
        assertThat(reasonOf(renew)).as("renewSessionLock after expiry: %s", renew)
                .isEqualTo(ServiceBusFailureReason.SESSION_LOCK_LOST);
        Throwable complete = catchThrowable(() -> r.complete(m1));
        assertThat(complete).as("complete after the session lock expired").isNotNull();
        assertThat(reasonOf(complete)).as("complete after expiry: %s", complete)
                .isEqualTo(ServiceBusFailureReason.SESSION_LOCK_LOST);

        // the session is free again; its first message comes back with delivery count + 1
        ServiceBusReceiverClient again = track(sessionClient(q).acceptSession("expiring"));
        List<ServiceBusReceivedMessage> got = receive(again, 2, Duration.ofSeconds(10));
        assertThat(bodies(got)).containsExactly("e1", "e2");
        assertThat(got.get(0).getDeliveryCount()).isEqualTo(1);
        got.forEach(again::complete);
    }

    @Test
    void sessionStateOperationsFailAfterTheSessionLockExpired() throws Exception {
        String q = "sessions-expiry";
        sender(q).sendMessage(msg("st", "expiring-state"));
        ServiceBusSessionReceiverClient client = sessionClient(q);
        ServiceBusReceiverClient r = track(client.acceptSession("expiring-state"));
        r.setSessionState(new byte[] {7});

        Thread.sleep(LOCK.plusSeconds(1).toMillis());

        Throwable set = catchThrowable(() -> r.setSessionState(new byte[] {1}));
        assertThat(reasonOf(set)).as("setSessionState after expiry: %s", set)
                .isEqualTo(ServiceBusFailureReason.SESSION_LOCK_LOST);
        Throwable get = catchThrowable(r::getSessionState);
        assertThat(reasonOf(get)).as("getSessionState after expiry: %s", get)
                .isEqualTo(ServiceBusFailureReason.SESSION_LOCK_LOST);

        // the failed set changed nothing
        ServiceBusReceiverClient again = track(sessionClient(q).acceptSession("expiring-state"));
        assertThat(again.getSessionState()).containsExactly(7);
        again.setSessionState(null);
        receive(again, 1, Duration.ofSeconds(10)).forEach(again::complete);
    }

    @Test
    void abandonedMessageIsRedeliveredFirstWithinTheSession() {
        String q = "sessions-abandon";
        sender(q).sendMessages(List.of(msg("a1", "ab"), msg("a2", "ab"), msg("a3", "ab")));
        ServiceBusReceiverClient r = track(sessionClient(q).acceptSession("ab"));
        ServiceBusReceivedMessage first = receive(r, 1, Duration.ofSeconds(10)).get(0);
        assertThat(first.getBody().toString()).isEqualTo("a1");
        assertThat(first.getDeliveryCount()).isZero();
        r.abandon(first);

        List<ServiceBusReceivedMessage> got = receive(r, 3, Duration.ofSeconds(15));
        assertThat(bodies(got)).containsExactly("a1", "a2", "a3");
        assertThat(got.get(0).getSequenceNumber()).isEqualTo(first.getSequenceNumber());
        assertThat(got.get(0).getDeliveryCount()).isEqualTo(1);
        assertThat(got.get(1).getDeliveryCount()).isZero();
        got.forEach(r::complete);
    }

    @Test
    void sessionlessMessageIsRejectedBySessionQueue() {
        ServiceBusSenderClient sender = sender("sessions-reject");
        assertThatThrownBy(() -> sender.sendMessage(new ServiceBusMessage("no session")))
                .isInstanceOf(ServiceBusException.class);
        assertThatThrownBy(() -> sender.sendMessages(List.of(msg("ok", "s1"), new ServiceBusMessage("no session"))))
                .isInstanceOf(ServiceBusException.class);
        // the queue still works for session messages, and nothing of the rejected batch was enqueued
        sender.sendMessage(msg("fine", "s1"));
        ServiceBusReceiverClient r = track(sessionClient("sessions-reject").acceptSession("s1"));
        List<ServiceBusReceivedMessage> got = receive(r, 2, Duration.ofSeconds(3));
        assertThat(bodies(got)).containsExactly("fine");
        got.forEach(r::complete);
    }

    @Test
    void sessionProcessorHandlesSeveralSessionsEachInOrder() {
        String q = "sessions-processor";
        List<String> ids = List.of("p-1", "p-2", "p-3");
        int perSession = 6;
        ServiceBusSenderClient sender = sender(q);
        List<ServiceBusMessage> batch = new ArrayList<>();
        for (int i = 0; i < perSession; i++) {
            for (String id : ids) {
                batch.add(msg(id + "/" + i, id));
            }
        }
        sender.sendMessages(batch);

        Map<String, List<String>> seen = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        ServiceBusProcessorClient processor = track(builder().sessionProcessor().queueName(q)
                .maxConcurrentSessions(3).disableAutoComplete()
                .processMessage(ctx -> {
                    // complete before recording, so that every recorded message is settled
                    ctx.complete();
                    seen.computeIfAbsent(ctx.getMessage().getSessionId(), k -> new CopyOnWriteArrayList<>())
                            .add(ctx.getMessage().getBody().toString());
                })
                .processError(ctx -> errors.add(ctx.getException()))
                .buildProcessorClient());
        processor.start();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(
                seen.values().stream().mapToInt(List::size).sum()).as("processed (errors: %s)", errors)
                .isGreaterThanOrEqualTo(ids.size() * perSession));
        // close (stop only pauses: the processor would keep its sessions locked)
        processor.close();

        assertThat(seen.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        for (String id : ids) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < perSession; i++) {
                expected.add(id + "/" + i);
            }
            assertThat(seen.get(id)).as("session %s (processor errors: %s)", id, errors)
                    .containsExactlyElementsOf(expected);
        }
        // everything was completed: the sessions are empty now (once the closed processor's session links are
        // detached, which may take a moment; a fresh client per attempt, see sessionStateSurvives...)
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().untilAsserted(() -> {
            try (ServiceBusSessionReceiverClient client = builder().sessionReceiver().queueName(q)
                    .disableAutoComplete().buildClient();
                 ServiceBusReceiverClient r = client.acceptSession("p-1")) {
                assertThat(r.receiveMessages(1, Duration.ofSeconds(1)).stream().toList()).isEmpty();
            }
        });
    }

    @Test
    void sessionEnabledSubscriptionReceivesPerSession() {
        ServiceBusSenderClient sender = track(builder().sender().topicName("sessions-topic").buildClient());
        for (int i = 0; i < 3; i++) {
            sender.sendMessage(msg("t-x-" + i, "t-x"));
            sender.sendMessage(msg("t-y-" + i, "t-y"));
        }
        ServiceBusSessionReceiverClient client = track(builder().sessionReceiver().topicName("sessions-topic")
                .subscriptionName("session-sub").disableAutoComplete().buildClient());
        ServiceBusReceiverClient y = track(client.acceptSession("t-y"));
        ServiceBusReceiverClient x = track(client.acceptSession("t-x"));
        List<ServiceBusReceivedMessage> gotY = receive(y, 3, Duration.ofSeconds(10));
        List<ServiceBusReceivedMessage> gotX = receive(x, 3, Duration.ofSeconds(10));
        assertThat(bodies(gotX)).containsExactly("t-x-0", "t-x-1", "t-x-2");
        assertThat(bodies(gotY)).containsExactly("t-y-0", "t-y-1", "t-y-2");
        assertThat(gotX).extracting(ServiceBusReceivedMessage::getSessionId).containsOnly("t-x");
        gotX.forEach(x::complete);
        gotY.forEach(y::complete);
    }
}
