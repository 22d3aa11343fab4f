// Buslane conformance check with the official JavaScript SDK (@azure/service-bus).
//
// Usage: BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost:5672;...;UseDevelopmentEmulator=true;' node conformance.mjs
//
// Entities (declared in the broker's Config.json by JsSdkConformanceTest):
//   js-queue, js-sessions (RequiresSession), js-schedule, js-peek, js-deadletter, js-defer, js-ttl, js-footer,
//   js-lock (LockDuration PT5S)
// Every check runs even if an earlier one failed; the exit code is 0 only if all passed.

import assert from "node:assert/strict";
import { connect, receive, runChecks } from "./setup.mjs";

const { client, watchdog } = connect("conformance", 1);

async function checkSendReceive() {
  const sender = client.createSender("js-queue");
  const receiver = client.createReceiver("js-queue", { receiveMode: "peekLock" });
  try {
    await sender.sendMessages({ body: "hello", messageId: "m-1", applicationProperties: { n: 7, s: "x" } });
    await sender.sendMessages([{ body: { a: 1 } }, { body: "third", subject: "label-3" }]);
    const got = await receive(receiver, 3);
    assert.equal(got.length, 3, "three messages received");
    assert.deepEqual(got.map((m) => m.body), ["hello", { a: 1 }, "third"]);
    assert.equal(got[0].messageId, "m-1");
    assert.equal(got[0].applicationProperties.n, 7);
    assert.equal(got[0].applicationProperties.s, "x");
    assert.equal(got[2].subject, "label-3");
    for (const m of got) {
      assert.ok(m.lockToken, "peek-lock message has a lock token");
      assert.equal(m.deliveryCount, 0);
      assert.ok(m.enqueuedTimeUtc instanceof Date, "enqueuedTimeUtc is a Date");
      assert.equal(m.state, "active", "a message sent plainly is active");
    }
    const seqs = got.map((m) => m.sequenceNumber.toNumber());
    assert.ok(seqs[0] < seqs[1] && seqs[1] < seqs[2], `sequence numbers ascend: ${seqs}`);
    for (const m of got) await receiver.completeMessage(m);
    const rest = await receiver.receiveMessages(1, { maxWaitTimeInMs: 1_000 });
    assert.equal(rest.length, 0, "nothing left after completing");
  } finally {
    await receiver.close();
    await sender.close();
  }
}

async function checkSessions() {
  const sender = client.createSender("js-sessions");
  try {
    const batch = [];
    for (let i = 0; i < 3; i++) {
      batch.push({ body: `s1-${i}`, sessionId: "s1" });
      batch.push({ body: `s2-${i}`, sessionId: "s2" });
    }
    await sender.sendMessages(batch);
  } finally {
    await sender.close();
  }
  for (const id of ["s2", "s1"]) {
    const receiver = await client.acceptSession("js-sessions", id);
    try {
      assert.equal(receiver.sessionId, id);
      const got = await receive(receiver, 3);
      assert.deepEqual(got.map((m) => m.body), [`${id}-0`, `${id}-1`, `${id}-2`], `session ${id} in order`);
      for (const m of got) {
        assert.equal(m.sessionId, id);
        await receiver.completeMessage(m);
      }
      await receiver.setSessionState(`done-${id}`);
      const state = await receiver.getSessionState();
      assert.equal(Buffer.from(state).toString(), `done-${id}`, "session state round-trips");
    } finally {
      await receiver.close();
    }
  }
}

async function checkSchedule() {
  const sender = client.createSender("js-schedule");
  const receiver = client.createReceiver("js-schedule");
  try {
    const later = new Date(Date.now() + 60 * 60 * 1000);
    const seqs = await sender.scheduleMessages([{ body: "later-1" }, { body: "later-2" }], later);
    assert.equal(seqs.length, 2, "two sequence numbers");
    const nums = seqs.map((s) => s.toNumber());
    assert.ok(nums[0] > 0 && nums[1] > 0 && nums[0] !== nums[1], `distinct sequence numbers: ${nums}`);
    await sender.cancelScheduledMessages(seqs);

    const soon = new Date(Date.now() + 2_000);
    const [soonSeq] = await sender.scheduleMessages({ body: "soon" }, soon);
    assert.ok(soonSeq.toNumber() > nums[1], "a later schedule gets a higher sequence number");
    const got = await receive(receiver, 1, 15_000);
    assert.equal(got.length, 1, "the scheduled message arrives");
    assert.equal(got[0].body, "soon");
    // on activation a scheduled message is appended with a new sequence number (service-bus-behaviour §2.3)
    assert.ok(got[0].sequenceNumber.toNumber() >= soonSeq.toNumber(), "sequence number not below the scheduled one");
    assert.ok(Date.now() >= soon.getTime() - 100, "not delivered before its scheduled time");
    assert.ok(got[0].scheduledEnqueueTimeUtc instanceof Date, "scheduledEnqueueTimeUtc is set");
    // #32 cause 9: as the SDK's live tests expect, the service reports a message that was scheduled as scheduled
    assert.equal(got[0].state, "scheduled");
    await receiver.completeMessage(got[0]);
    const peeked = await receiver.peekMessages(10, { fromSequenceNumber: seqs[0] });
    assert.deepEqual(peeked.map((m) => m.body), [], "cancelled messages are gone");
  } finally {
    await receiver.close();
    await sender.close();
  }
}

async function checkPeek() {
  const sender = client.createSender("js-peek");
  const receiver = client.createReceiver("js-peek");
  try {
    await sender.sendMessages([{ body: "p-0" }, { body: "p-1" }, { body: "p-2" }]);
    const peeked = await receiver.peekMessages(10);
    assert.deepEqual(peeked.map((m) => m.body), ["p-0", "p-1", "p-2"]);
    for (const m of peeked) assert.equal(m.lockToken, undefined, "peeked messages are not locked");
    const again = await receiver.peekMessages(10);
    assert.equal(again.length, 0, "the next peek continues after the last peeked message");
    const fromSecond = await receiver.peekMessages(10, { fromSequenceNumber: peeked[1].sequenceNumber });
    assert.deepEqual(fromSecond.map((m) => m.body), ["p-1", "p-2"]);
    const got = await receive(receiver, 3);
    assert.deepEqual(got.map((m) => m.body), ["p-0", "p-1", "p-2"], "peek did not consume");
    for (const m of got) await receiver.completeMessage(m);
  } finally {
    await receiver.close();
    await sender.close();
  }
}

async function checkDeadLetter() {
  const sender = client.createSender("js-deadletter");
  const receiver = client.createReceiver("js-deadletter");
  const dlq = client.createReceiver("js-deadletter", { subQueueType: "deadLetter" });
  try {
    await sender.sendMessages({ body: "poison", messageId: "dl-1" });
    const [m] = await receive(receiver, 1);
    assert.ok(m, "message received");
    await receiver.deadLetterMessage(m, { deadLetterReason: "BadPayload", deadLetterErrorDescription: "cannot parse" });
    const rest = await receiver.receiveMessages(1, { maxWaitTimeInMs: 1_000 });
    assert.equal(rest.length, 0, "the dead-lettered message left the queue");
    const [d] = await receive(dlq, 1);
    assert.ok(d, "message found in the dead-letter queue");
    assert.equal(d.body, "poison");
    assert.equal(d.messageId, "dl-1");
    assert.equal(d.deadLetterReason, "BadPayload");
    assert.equal(d.deadLetterErrorDescription, "cannot parse");
    assert.equal(d.sequenceNumber.toNumber(), m.sequenceNumber.toNumber(), "same sequence number in the DLQ");
    // #32 cause 11: the service refuses to dead-letter a message of the dead-letter queue (amqp:not-allowed)
    await assert.rejects(dlq.deadLetterMessage(d), "a dead-lettered message cannot be dead-lettered again");
  } finally {
    await dlq.close();
    await receiver.close();
    await sender.close();
  }
}

// #32 cause 8: received, deferred, fetched by sequence number: the delivery that deferred it counts (the service
// reports 1).
async function checkDeferredDeliveryCount() {
  const sender = client.createSender("js-defer");
  const receiver = client.createReceiver("js-defer");
  try {
    await sender.sendMessages({ body: "later" });
    const [m] = await receive(receiver, 1);
    assert.ok(m, "message received");
    assert.equal(m.deliveryCount, 0);
    await receiver.deferMessage(m);
    const [d] = await receiver.receiveDeferredMessages(m.sequenceNumber);
    assert.ok(d, "deferred message received by its sequence number");
    assert.equal(d.deliveryCount, 1, "the first delivery counts");
    await receiver.completeMessage(d);
  } finally {
    await receiver.close();
    await sender.close();
  }
}

// #32 cause 7: the SDK reads the time-to-live back as the sender's absolute-expiry-time minus its creation-time,
// which must come back as sent (the broker's own expiry counts from enqueuing: the TTL drifted by the send's
// latency). The SDK itself sends at most the header's 2^32-1 ms.
async function checkTimeToLiveComesBackAsSent() {
  const sender = client.createSender("js-ttl");
  const receiver = client.createReceiver("js-ttl");
  try {
    const sixtyDays = 60 * 24 * 3600 * 1000;
    await sender.sendMessages([{ body: "long", timeToLive: sixtyDays }, { body: "short", timeToLive: 600_000 }]);
    const got = await receive(receiver, 2);
    assert.deepEqual(got.map((m) => m.body), ["long", "short"]);
    assert.equal(got[0].timeToLive, 4294967295, "as the SDK sent it: capped at 2^32-1 ms");
    assert.equal(got[1].timeToLive, 600_000);
    for (const m of got) await receiver.completeMessage(m);
  } finally {
    await receiver.close();
    await sender.close();
  }
}

// #32 cause 10: the service names a missing entity by its address.
async function checkNotFoundNamesTheAddress() {
  const sender = client.createSender("js-missing");
  try {
    await assert.rejects(sender.sendMessages({ body: "nowhere" }), (e) => {
      assert.equal(e.code, "MessagingEntityNotFound");
      assert.match(e.message, /The messaging entity 'sb:\/\/localhost\/js-missing' could not be found\./);
      return true;
    });
  } finally {
    await sender.close();
  }
}

// #32 cause 6: the SDK's AMQP library writes the footer before the body; the service accepts it and hands it back.
async function checkFooterBeforeTheBody() {
  const sender = client.createSender("js-footer");
  const receiver = client.createReceiver("js-footer");
  try {
    await sender.sendMessages({ body: Buffer.from("with a footer"), bodyType: "data", footer: { sig: "abc" } });
    const [m] = await receive(receiver, 1);
    assert.ok(m, "the message with a footer was accepted and delivered");
    assert.equal(Buffer.from(m.body).toString(), "with a footer");
    assert.equal(m._rawAmqpMessage.footer?.sig, "abc", "the footer comes back");
    await receiver.completeMessage(m);
  } finally {
    await receiver.close();
    await sender.close();
  }
}

// #32 cause 13: the SDK's live tests complete a message 1 s after its lock ran out (batch receiver, no credit left)
// and expect MessageLockLost; the message stays in the queue with its lapse counted. A late renew, by contrast,
// succeeds while nobody took the message again (the Java SDK renews a buffered message when it hands it over).
async function checkLateSettlementIsLockLostButALateRenewSucceeds() {
  const sender = client.createSender("js-lock");
  const receiver = client.createReceiver("js-lock", { maxAutoLockRenewalDurationInMs: 0 });
  try {
    await sender.sendMessages([{ body: "renewed late" }, { body: "settled late" }]);
    const got = await receive(receiver, 2);
    assert.deepEqual(got.map((m) => m.body), ["renewed late", "settled late"]);
    await new Promise((resolve) => setTimeout(resolve, got[1].lockedUntilUtc.getTime() - Date.now() + 1000));
    const renewedUntil = await receiver.renewMessageLock(got[0]);
    assert.ok(renewedUntil.getTime() > Date.now() + 3000, "renewed for a full lock duration");
    await assert.rejects(receiver.completeMessage(got[1]), (e) => {
      assert.equal(e.code, "MessageLockLost");
      return true;
    });
    await receiver.completeMessage(got[0]);
    const [again] = await receive(receiver, 1);
    assert.equal(again?.body, "settled late", "the message whose late settlement failed is delivered again");
    assert.equal(again.deliveryCount, 1, "its lapsed lock counted as a delivery");
    await receiver.completeMessage(again);
  } finally {
    await receiver.close();
    await sender.close();
  }
}

const checks = {
  checkSendReceive, checkSessions, checkSchedule, checkPeek, checkDeadLetter, checkDeferredDeliveryCount,
  checkTimeToLiveComesBackAsSent, checkNotFoundNamesTheAddress, checkFooterBeforeTheBody,
  checkLateSettlementIsLockLostButALateRenewSucceeds,
};
const failed = await runChecks(checks);
await client.close();
clearTimeout(watchdog);
console.log(failed === 0 ? "ALL PASSED" : `${failed} CHECK(S) FAILED`);
process.exit(failed === 0 ? 0 : 1);
