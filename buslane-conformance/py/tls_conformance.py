"""Buslane conformance check with the official Python SDK (azure-servicebus 7.8.2 on uamqp, Debian's packages).

Usage: BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost/;...' BUSLANE_CA=/path/ca.crt \
       [BUSLANE_WEBSOCKETS=1] /usr/bin/python3 tls_conformance.py

7.8.2 predates the emulator flag: it speaks AMQPS to port 5671 and checks the broker's certificate against
BUSLANE_CA (connection_verify); BUSLANE_WEBSOCKETS=1 switches it to AMQP over WebSockets on 443.
Entities (declared by TlsConformanceTest), each with the suffix -amqps and -ws: py-queue, py-sessions
(RequiresSession), py-schedule, py-peek, py-deadletter.
Every check runs even if an earlier one failed; the exit code is 0 only if all passed.
"""
import datetime
import os
import sys
import threading
import traceback

from azure.servicebus import ServiceBusClient, ServiceBusMessage, TransportType

TAG = "ws" if os.environ.get("BUSLANE_WEBSOCKETS") == "1" else "amqps"


def Q(name):  # noqa: N802 - each transport has its own queues, so that both runs can go at once
    return name + "-" + TAG


def client():
    transport = TransportType.AmqpOverWebsocket if TAG == "ws" else TransportType.Amqp
    return ServiceBusClient.from_connection_string(
        os.environ["BUSLANE_CONNECTION_STRING"], connection_verify=os.environ["BUSLANE_CA"],
        transport_type=transport, retry_total=1)


def body(m):
    return b"".join(m.body).decode()


def receive(receiver, count, wait=10):
    got = []
    while len(got) < count:
        batch = receiver.receive_messages(max_message_count=count - len(got), max_wait_time=wait)
        if not batch:
            break
        got.extend(batch)
    return got


def check_send_receive(c):
    with c.get_queue_sender(Q("py-queue")) as s, c.get_queue_receiver(Q("py-queue")) as r:
        s.send_messages([ServiceBusMessage("one-" + TAG, application_properties={"n": 7}),
                         ServiceBusMessage("two-" + TAG)])
        got = receive(r, 2)
        assert [body(m) for m in got] == ["one-" + TAG, "two-" + TAG], [body(m) for m in got]
        assert got[0].application_properties[b"n"] == 7, got[0].application_properties
        for m in got:
            r.complete_message(m)
        assert receive(r, 1, wait=1) == [], "nothing left after completing"


def check_sessions(c):
    with c.get_queue_sender(Q("py-sessions")) as s:
        s.send_messages([ServiceBusMessage("a-" + TAG, session_id="s1"),
                         ServiceBusMessage("b-" + TAG, session_id="s2")])
    with c.get_queue_receiver(Q("py-sessions"), session_id="s2") as r:
        got = receive(r, 1)
        assert [body(m) for m in got] == ["b-" + TAG], [body(m) for m in got]
        r.session.set_state("state-" + TAG)
        assert r.session.get_state() == ("state-" + TAG).encode(), r.session.get_state()
        r.complete_message(got[0])
    with c.get_queue_receiver(Q("py-sessions"), session_id="s1") as r:
        got = receive(r, 1)
        assert [body(m) for m in got] == ["a-" + TAG]
        r.complete_message(got[0])
    with c.get_queue_receiver(Q("py-sessions"), session_id="s2") as r:
        assert r.session.get_state() == ("state-" + TAG).encode(), "the session state was kept"
        r.session.set_state(None)


def check_schedule(c):
    with c.get_queue_sender(Q("py-schedule")) as s, c.get_queue_receiver(Q("py-schedule")) as r:
        now = datetime.datetime.now(datetime.timezone.utc)
        s.schedule_messages(ServiceBusMessage("soon-" + TAG), now + datetime.timedelta(seconds=2))
        later, = s.schedule_messages(ServiceBusMessage("later-" + TAG), now + datetime.timedelta(minutes=10))
        s.cancel_scheduled_messages(later)
        got = receive(r, 1, wait=15)
        assert [body(m) for m in got] == ["soon-" + TAG], [body(m) for m in got]
        # (its sequence number is a new one once it is enqueued, as on the service)
        r.complete_message(got[0])
        assert receive(r, 1, wait=1) == [], "the cancelled message never comes"


def check_peek(c):
    with c.get_queue_sender(Q("py-peek")) as s, c.get_queue_receiver(Q("py-peek")) as r:
        s.send_messages([ServiceBusMessage("p%d-%s" % (i, TAG)) for i in range(3)])
        peeked = r.peek_messages(max_message_count=10)
        assert [body(m) for m in peeked] == ["p%d-%s" % (i, TAG) for i in range(3)], [body(m) for m in peeked]
        for m in receive(r, 3):
            r.complete_message(m)


def check_dead_letter(c):
    with c.get_queue_sender(Q("py-deadletter")) as s, c.get_queue_receiver(Q("py-deadletter")) as r:
        s.send_messages(ServiceBusMessage("bad-" + TAG))
        m, = receive(r, 1)
        r.dead_letter_message(m, reason="broken", error_description="cannot parse")
    with c.get_queue_receiver(Q("py-deadletter"), sub_queue="deadletter") as dlq:
        got = receive(dlq, 1)
        assert [body(m) for m in got] == ["bad-" + TAG], [body(m) for m in got]
        assert got[0].dead_letter_reason == "broken", got[0].dead_letter_reason
        dlq.complete_message(got[0])


def main():
    watchdog = threading.Timer(100, lambda: (print("FAIL: did not finish within 100 s", flush=True), os._exit(3)))
    watchdog.daemon = True
    watchdog.start()
    failed = 0
    with client() as c:
        for check in (check_send_receive, check_sessions, check_schedule, check_peek, check_dead_letter):
            try:
                check(c)
                print("PASS %s (%s)" % (check.__name__, TAG), flush=True)
            except Exception:  # noqa: BLE001 - report every check
                failed += 1
                print("FAIL %s (%s)" % (check.__name__, TAG), flush=True)
                traceback.print_exc()
    watchdog.cancel()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
