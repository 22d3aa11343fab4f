// Buslane conformance check of the official JavaScript SDK's administration client (ServiceBusAdministrationClient),
// the details its own live tests check (issue #32 causes 1-5).
//
// Usage: BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost/;...' NODE_EXTRA_CA_CERTS=ca.crt node admin.mjs
// The client always speaks HTTPS to the host of the connection string's endpoint (port 443 unless given), so
// TlsConformanceTest runs it against a broker with an HTTPS listener. It creates and deletes js-admin-* entities.
// Every check runs even if an earlier one failed; the exit code is 0 only if all passed.

import assert from "node:assert/strict";
import { ServiceBusAdministrationClient } from "@azure/service-bus";
import { runChecks, startWatchdog } from "./setup.mjs";

const connectionString = process.env.BUSLANE_CONNECTION_STRING;
if (!connectionString) {
  console.error("BUSLANE_CONNECTION_STRING is not set");
  process.exit(2);
}
const watchdog = startWatchdog("admin");
const admin = new ServiceBusAdministrationClient(connectionString);
// what the SDK prefixes a bare forwarding target with: "sb://" + the endpoint's host (and port) + "/"
const endpointWithProtocol = admin.endpointWithProtocol;

async function fresh(kind, name, options) {
  const exists = kind === "queue" ? admin.queueExists(name) : admin.topicExists(name);
  if (await exists) {
    await (kind === "queue" ? admin.deleteQueue(name) : admin.deleteTopic(name));
  }
  return kind === "queue" ? admin.createQueue(name, options) : admin.createTopic(name, options);
}

async function names(iterator) {
  const got = [];
  for await (const item of iterator) got.push(item.name ?? item.subscriptionName ?? item);
  return got;
}

// cause 1: the client signs each request for its own URL (sr = the lower-cased request URL, query included): lists,
// $namespaceinfo, subscription and rule lists are all accepted with such a token.
async function checkEachRequestIsSignedForItsOwnUrl() {
  await fresh("queue", "js-admin-listed");
  await fresh("topic", "js-admin-topic");
  await admin.createSubscription("js-admin-topic", "s");
  const info = await admin.getNamespaceProperties();
  assert.ok(info.name, "namespace properties read");
  assert.ok((await names(admin.listQueues())).includes("js-admin-listed"), "the queue is listed");
  assert.ok((await names(admin.listTopics())).includes("js-admin-topic"), "the topic is listed");
  assert.deepEqual(await names(admin.listSubscriptions("js-admin-topic")), ["s"]);
  assert.deepEqual(await names(admin.listRules("js-admin-topic", "s")), ["$Default"]);
  const page = await admin.listQueues().byPage({ maxPageSize: 1 }).next();
  assert.equal(page.value.length, 1, "a page of one ($skip and $top in the signed URL)");
}

// cause 2: a forwarding target comes back in the form the client sent it (this SDK: sb://{endpoint}/{name}).
async function checkForwardingTargetsComeBackAsSent() {
  await fresh("queue", "js-admin-fwd-target");
  const expected = endpointWithProtocol + "js-admin-fwd-target";
  const created = await fresh("queue", "js-admin-fwd-source", {
    forwardTo: "js-admin-fwd-target",
    forwardDeadLetteredMessagesTo: "js-admin-fwd-target",
  });
  assert.equal(created.forwardTo, expected);
  assert.equal(created.forwardDeadLetteredMessagesTo, expected);
  const read = await admin.getQueue("js-admin-fwd-source");
  assert.equal(read.forwardTo, expected);
  read.maxDeliveryCount = 7;
  const updated = await admin.updateQueue(read);
  assert.equal(updated.forwardTo, expected, "kept through an update of what was read");
  await fresh("topic", "js-admin-fwd-topic");
  const sub = await admin.createSubscription("js-admin-fwd-topic", "s", { forwardTo: "js-admin-fwd-target" });
  assert.equal(sub.forwardTo, expected);
  assert.equal(sub.forwardDeadLetteredMessagesTo, undefined);
}

// cause 3: a partitioned entity reports its 16 partitions' size; authorization rules keep the order of their rights.
async function checkPartitionedSizeAndTheOrderOfRights() {
  const created = await fresh("queue", "js-admin-partitioned", {
    enablePartitioning: true,
    maxSizeInMegabytes: 1024,
    authorizationRules: [{ keyName: "ordered", accessRights: ["Manage", "Send", "Listen"] }],
  });
  assert.equal(created.maxSizeInMegabytes, 16384, "1,024 MB on each of 16 partitions");
  assert.deepEqual(created.authorizationRules.map((r) => r.accessRights), [["Manage", "Send", "Listen"]]);
  const updated = await admin.updateQueue(created);
  assert.equal(updated.maxSizeInMegabytes, 16384, "the size read back and sent again does not grow");
  assert.deepEqual(updated.authorizationRules.map((r) => r.accessRights), [["Manage", "Send", "Listen"]]);
}

// cause 4: a GET of the namespace root is entities discovery (200, a feed), as the SDK's own tests check.
async function checkTheNamespaceRootIsDiscovery() {
  await fresh("queue", "js-admin-listed");
  const response = await admin.listResources("", {}, admin.queueResourceSerializer);
  assert.equal(response.status, 200);
  const seen = (response.bodyAsText ?? "") + JSON.stringify(response.parsedBody ?? null);
  assert.match(seen, /js-admin-listed/, "the root lists its queues");
}

// cause 5: rules are listed in name order, whatever order they were created in.
async function checkRulesAreListedInNameOrder() {
  await fresh("topic", "js-admin-rules");
  await admin.createSubscription("js-admin-rules", "s");
  await admin.createRule("js-admin-rules", "s", "b-rule", { sqlExpression: "1=1" });
  await admin.createRule("js-admin-rules", "s", "a-rule", { sqlExpression: "1=1" });
  assert.deepEqual(await names(admin.listRules("js-admin-rules", "s")), ["$Default", "a-rule", "b-rule"]);
}

const checks = {
  checkEachRequestIsSignedForItsOwnUrl, checkForwardingTargetsComeBackAsSent,
  checkPartitionedSizeAndTheOrderOfRights, checkTheNamespaceRootIsDiscovery, checkRulesAreListedInNameOrder,
};
const failed = await runChecks(checks);
for (const q of ["js-admin-fwd-source", "js-admin-fwd-target", "js-admin-listed", "js-admin-partitioned"]) {
  await admin.deleteQueue(q).catch(() => {});
}
for (const t of ["js-admin-topic", "js-admin-fwd-topic", "js-admin-rules"]) {
  await admin.deleteTopic(t).catch(() => {});
}
clearTimeout(watchdog);
console.log(failed === 0 ? "ALL PASSED" : `${failed} CHECK(S) FAILED`);
process.exit(failed === 0 ? 0 : 1);
