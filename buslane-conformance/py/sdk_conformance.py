"""Buslane conformance check with the official Python SDK of today: azure-servicebus 7.15 on its pure-Python AMQP
stack ("pyamqp"), pinned in requirements.txt and installed into py/.venv by PythonSdkConformanceTest.

Usage: BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost:5672;...;UseDevelopmentEmulator=true;' \
       [BUSLANE_CA=/path/ca.crt] [BUSLANE_WEBSOCKETS=1] [BUSLANE_TAG=tls] [BUSLANE_ADMIN=1] \
       py/.venv/bin/python sdk_conformance.py

With the emulator's connection string the SDK speaks plain AMQP to the given port. With a normal connection string
(no emulator flag) it speaks AMQPS to 5671, checking the broker's certificate against BUSLANE_CA;
BUSLANE_WEBSOCKETS=1 switches it to AMQP over WebSockets on 443. BUSLANE_ADMIN=1 adds the administration client
(HTTPS to 443 of the connection string's host, the certificate checked against BUSLANE_CA).
Entities (declared by the Java test), each with the suffix -TAG (BUSLANE_TAG, "plain" by default): py-queue,
py-sessions (RequiresSession), py-schedule, py-deadletter, py-defer, py-lock (LockDuration PT5S), py-rad, and the
topic py-topic with subscriptions "all" and "red" (SQL filter color = 'red').
Every check runs even if an earlier one failed; the exit code is 0 only if all passed.
"""
import datetime
import os
import sys
import threading
import time
import traceback
import uuid

from azure.servicebus import (ServiceBusClient, ServiceBusMessage, ServiceBusMessageState, ServiceBusReceiveMode,
                              ServiceBusSubQueue, TransportType, NEXT_AVAILABLE_SESSION)
from azure.servicebus.exceptions import MessageAlreadySettled, OperationTimeoutError, ServiceBusError

TAG = os.environ.get("BUSLANE_TAG", "plain")
CA = os.environ.get("BUSLANE_CA")
WEBSOCKETS = os.environ.get("BUSLANE_WEBSOCKETS") == "1"


def Q(name):  # noqa: N802 - each run has entities of its own, so that runs can go at once
    return name + "-" + TAG


def client():
    kwargs = {"retry_total": 1}
    if CA:
        kwargs["connection_verify"] = CA
    if WEBSOCKETS:
        kwargs["transport_type"] = TransportType.AmqpOverWebsocket
    return ServiceBusClient.from_connection_string(os.environ["BUSLANE_CONNECTION_STRING"], **kwargs)


def body(m):
    return b"".join(m.body).decode()


def receive(receiver, count, wait=10):
    got = []
    deadline = time.monotonic() + wait
    while len(got) < count and time.monotonic() < deadline:
        batch = receiver.receive_messages(max_message_count=count - len(got),
                                          max_wait_time=max(1, deadline - time.monotonic()))
        got.extend(batch)
    return got


def check_batch_size_from_the_link(c):
    # a large-message entity (100 MB messages) takes batches of 1 MB, as the link's
    # com.microsoft:max-message-batch-size says
    with c.get_queue_sender(Q("py-large")) as s:
        assert s.create_message_batch().max_size_in_bytes == 1024 * 1024


def check_send_batch_and_peek_lock(c):
    with c.get_queue_sender(Q("py-queue")) as s, c.get_queue_receiver(Q("py-queue")) as r:
        s.send_messages(ServiceBusMessage("one", application_properties={"n": 7}, subject="greeting",
                                          content_type="text/plain", correlation_id="corr-1"))
        batch = s.create_message_batch()
        for i in range(3):
            batch.add_message(ServiceBusMessage("batch-%d" % i))
        s.send_messages(batch)
        got = receive(r, 4)
        assert [body(m) for m in got] == ["one", "batch-0", "batch-1", "batch-2"], [body(m) for m in got]
        first = got[0]
        assert first.application_properties[b"n"] == 7, first.application_properties
        assert (first.subject, first.content_type, first.correlation_id) == ("greeting", "text/plain", "corr-1")
        assert first.delivery_count == 0, first.delivery_count
        assert first.sequence_number > 0 and first.enqueued_time_utc is not None
        assert [m.sequence_number for m in got] == sorted(m.sequence_number for m in got)
        assert first.locked_until_utc > datetime.datetime.now(datetime.timezone.utc)
        for m in got:
            r.complete_message(m)
        try:
            r.complete_message(first)
            raise AssertionError("a second complete of one message was accepted")
        except MessageAlreadySettled:
            pass
        assert receive(r, 1, wait=1) == [], "nothing left after completing"


def check_abandon_and_renew_lock(c):
    with c.get_queue_sender(Q("py-lock")) as s, c.get_queue_receiver(Q("py-lock")) as r:
        s.send_messages(ServiceBusMessage("again"))
        m, = receive(r, 1)
        before = m.locked_until_utc
        time.sleep(1)
        renewed = r.renew_message_lock(m)
        assert renewed > before, (before, renewed)
        r.abandon_message(m)
        again, = receive(r, 1)
        assert body(again) == "again" and again.delivery_count == 1, (body(again), again.delivery_count)
        r.complete_message(again)


def check_defer(c):
    with c.get_queue_sender(Q("py-defer")) as s, c.get_queue_receiver(Q("py-defer")) as r:
        s.send_messages(ServiceBusMessage("later"))
        m, = receive(r, 1)
        seq = m.sequence_number
        r.defer_message(m)
        assert receive(r, 1, wait=1) == [], "a deferred message is not received again"
        # (this SDK peeks from the last received sequence number + 1 unless told where to start)
        peeked = r.peek_messages(max_message_count=5, sequence_number=seq)
        assert [p.state for p in peeked] == [ServiceBusMessageState.DEFERRED], [p.state for p in peeked]
        deferred, = r.receive_deferred_messages([seq])
        assert body(deferred) == "later" and deferred.sequence_number == seq
        r.complete_message(deferred)


def check_dead_letter(c):
    with c.get_queue_sender(Q("py-deadletter")) as s, c.get_queue_receiver(Q("py-deadletter")) as r:
        s.send_messages(ServiceBusMessage("bad"))
        m, = receive(r, 1)
        r.dead_letter_message(m, reason="broken", error_description="cannot parse")
    with c.get_queue_receiver(Q("py-deadletter"), sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
        got = receive(dlq, 1)
        assert [body(m) for m in got] == ["bad"], [body(m) for m in got]
        assert got[0].dead_letter_reason == "broken", got[0].dead_letter_reason
        assert got[0].dead_letter_error_description == "cannot parse", got[0].dead_letter_error_description
        dlq.complete_message(got[0])


def check_receive_and_delete(c):
    with c.get_queue_sender(Q("py-rad")) as s, \
            c.get_queue_receiver(Q("py-rad"), receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        s.send_messages([ServiceBusMessage("rad-%d" % i) for i in range(3)])
        got = receive(r, 3)
        assert [body(m) for m in got] == ["rad-0", "rad-1", "rad-2"], [body(m) for m in got]
        assert r.peek_messages(max_message_count=5) == [], "received and deleted"


def check_schedule_peek_and_cancel(c):
    with c.get_queue_sender(Q("py-schedule")) as s, c.get_queue_receiver(Q("py-schedule")) as r:
        now = datetime.datetime.now(datetime.timezone.utc)
        soon, = s.schedule_messages(ServiceBusMessage("soon"), now + datetime.timedelta(seconds=2))
        later, = s.schedule_messages(ServiceBusMessage("later"), now + datetime.timedelta(minutes=10))
        peeked = r.peek_messages(max_message_count=5)
        assert [(body(p), p.state) for p in peeked] == [("soon", ServiceBusMessageState.SCHEDULED),
                                                        ("later", ServiceBusMessageState.SCHEDULED)], \
            [(body(p), p.state) for p in peeked]
        assert peeked[1].sequence_number == later and peeked[1].scheduled_enqueue_time_utc is not None
        s.cancel_scheduled_messages(later)
        got = receive(r, 1, wait=15)
        assert [body(m) for m in got] == ["soon"], [body(m) for m in got]
        assert got[0].enqueued_time_utc >= now + datetime.timedelta(seconds=1), (got[0].enqueued_time_utc, now)
        r.complete_message(got[0])
        assert soon > 0
        assert receive(r, 1, wait=1) == [], "the cancelled message never comes"


def check_sessions(c):
    with c.get_queue_sender(Q("py-sessions")) as s:
        s.send_messages([ServiceBusMessage("a-%d" % i, session_id="s1") for i in range(3)]
                        + [ServiceBusMessage("b-0", session_id="s2")])
    # no filter: the sessions with active messages or state
    assert sorted(c.list_queue_sessions(Q("py-sessions"))) == ["s1", "s2"]
    before_state = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    with c.get_queue_receiver(Q("py-sessions"), session_id="s1") as r:
        got = receive(r, 3)
        assert [body(m) for m in got] == ["a-0", "a-1", "a-2"], [body(m) for m in got]
        assert all(m.session_id == "s1" for m in got)
        r.session.set_state("state-s1")
        assert r.session.get_state() == b"state-s1", r.session.get_state()
        before = r.session.locked_until_utc
        time.sleep(1)
        assert r.session.renew_lock() > before
        for m in got:
            r.complete_message(m)
    with c.get_queue_receiver(Q("py-sessions"), session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as r:
        assert r.session.session_id == "s2", r.session.session_id
        got = receive(r, 1)
        assert [body(m) for m in got] == ["b-0"], [body(m) for m in got]
        r.complete_message(got[0])
    # every message completed: s1 is listed for its state; with a cutoff, the sessions whose state changed since
    assert list(c.list_queue_sessions(Q("py-sessions"))) == ["s1"]
    assert list(c.list_queue_sessions(Q("py-sessions"), state_updated_after=before_state)) == ["s1"]
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)
    assert list(c.list_queue_sessions(Q("py-sessions"), state_updated_after=later)) == []
    with c.get_queue_receiver(Q("py-sessions"), session_id="s1") as r:
        assert r.session.get_state() == b"state-s1", "the session state was kept"
        r.session.set_state(None)
    assert list(c.list_queue_sessions(Q("py-sessions"))) == [], "no messages, no state: not listed"
    try:
        with c.get_queue_receiver(Q("py-sessions"), session_id=NEXT_AVAILABLE_SESSION, max_wait_time=2) as r:
            r.receive_messages(max_wait_time=1)
        raise AssertionError("a session was accepted though none has messages")
    except OperationTimeoutError:
        pass


def check_topic_with_sql_rule(c):
    with c.get_topic_sender(Q("py-topic")) as s:
        s.send_messages([ServiceBusMessage("red-1", application_properties={"color": "red"}),
                         ServiceBusMessage("blue-1", application_properties={"color": "blue"})])
    with c.get_subscription_receiver(Q("py-topic"), "all") as r:
        got = receive(r, 2)
        assert sorted(body(m) for m in got) == ["blue-1", "red-1"], [body(m) for m in got]
        for m in got:
            r.complete_message(m)
    with c.get_subscription_receiver(Q("py-topic"), "red") as r:
        got = receive(r, 2, wait=3)
        assert [body(m) for m in got] == ["red-1"], [body(m) for m in got]
        r.complete_message(got[0])


def check_message_id_types(c):
    # pyamqp sends a str message id as a string; the service keeps what it was given
    mid = str(uuid.uuid4())
    with c.get_queue_sender(Q("py-queue")) as s, c.get_queue_receiver(Q("py-queue")) as r:
        s.send_messages(ServiceBusMessage("with-id", message_id=mid))
        m, = receive(r, 1)
        assert m.message_id == mid, m.message_id
        r.defer_message(m)
        deferred, = r.receive_deferred_messages([m.sequence_number])
        assert deferred.message_id == mid, deferred.message_id
        r.complete_message(deferred)


def check_administration():
    from azure.servicebus.management import CorrelationRuleFilter, ServiceBusAdministrationClient, SqlRuleFilter
    admin = ServiceBusAdministrationClient.from_connection_string(os.environ["BUSLANE_CONNECTION_STRING"],
                                                                  connection_verify=CA)
    name = "py-admin-" + TAG
    with admin:
        created = admin.create_queue(name, max_delivery_count=7, lock_duration=datetime.timedelta(seconds=45))
        assert created.name == name and created.max_delivery_count == 7, created
        assert created.lock_duration == datetime.timedelta(seconds=45), created.lock_duration
        with client() as c, c.get_queue_sender(name) as s:
            s.send_messages([ServiceBusMessage("x"), ServiceBusMessage("y")])
        runtime = admin.get_queue_runtime_properties(name)
        assert runtime.active_message_count == 2 and runtime.total_message_count == 2, runtime
        assert name in [q.name for q in admin.list_queues()]
        topic = "py-admin-topic-" + TAG
        admin.create_topic(topic)
        admin.create_subscription(topic, "sub")
        admin.create_rule(topic, "sub", "only-red", filter=SqlRuleFilter("color = 'red'"))
        admin.create_rule(topic, "sub", "by-id", filter=CorrelationRuleFilter(correlation_id="c1"))
        assert sorted(r.name for r in admin.list_rules(topic, "sub")) == ["$Default", "by-id", "only-red"]
        topic_runtime = admin.get_topic_runtime_properties(topic)
        assert topic_runtime.subscription_count == 1
        # api-version 2024-05, this client's default: the filter counts, $Default counted as SQL
        assert (topic_runtime.sql_filter_count, topic_runtime.correlation_filter_count) == (2, 1), \
            (topic_runtime.sql_filter_count, topic_runtime.correlation_filter_count)
        admin.delete_topic(topic)
        admin.delete_queue(name)
        assert name not in [q.name for q in admin.list_queues()]


def main():
    watchdog = threading.Timer(150, lambda: (print("FAIL: did not finish within 150 s", flush=True), os._exit(3)))
    watchdog.daemon = True
    watchdog.start()
    failed = 0
    checks = [check_batch_size_from_the_link, check_send_batch_and_peek_lock, check_abandon_and_renew_lock, check_defer, check_dead_letter,
              check_receive_and_delete, check_schedule_peek_and_cancel, check_sessions, check_topic_with_sql_rule,
              check_message_id_types]
    with client() as c:
        for check in checks:
            try:
                check(c)
                print("PASS %s (%s)" % (check.__name__, TAG), flush=True)
            except (AssertionError, ServiceBusError, Exception):  # noqa: BLE001 - report every check
                failed += 1
                print("FAIL %s (%s)" % (check.__name__, TAG), flush=True)
                traceback.print_exc()
    if os.environ.get("BUSLANE_ADMIN") == "1":
        try:
            check_administration()
            print("PASS check_administration (%s)" % TAG, flush=True)
        except Exception:  # noqa: BLE001
            failed += 1
            print("FAIL check_administration (%s)" % TAG, flush=True)
            traceback.print_exc()
    watchdog.cancel()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
