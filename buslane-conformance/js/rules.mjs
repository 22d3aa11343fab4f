// Buslane conformance check of subscription rules with the official JavaScript SDK (@azure/service-bus):
// ServiceBusRuleManager (add-rule / remove-rule / enumerate-rules over $management), SQL filters and actions.
//
// Usage: BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost:5672;...;UseDevelopmentEmulator=true;' node rules.mjs
//
// Entities (declared in the broker's Config.json by RulesJsSdkConformanceTest): topic js-rules, subscription s.

import assert from "node:assert/strict";
import { connect, receive } from "./setup.mjs";

const { client, watchdog } = connect("rules", 0);

async function listRules(rules) {
  const out = [];
  for await (const r of rules.listRules()) out.push(r);
  return out;
}

async function checkRules() {
  const rules = client.createRuleManager("js-rules", "s");
  await rules.createRule("red", { sqlExpression: "color = 'red'" }, { sqlExpression: "SET tagged = 'js'" });
  await rules.createRule("corr", { correlationId: "c-1", applicationProperties: { region: "eu" } });
  await rules.deleteRule("$Default");

  const listed = await listRules(rules);
  assert.deepEqual(listed.map((r) => r.name), ["red", "corr"]);
  assert.equal(listed[0].filter.sqlExpression, "color = 'red'");
  assert.equal(listed[0].action.sqlExpression, "SET tagged = 'js'");
  assert.equal(listed[1].filter.correlationId, "c-1");
  assert.equal(listed[1].filter.applicationProperties.region, "eu");

  await assert.rejects(rules.createRule("RED", { sqlExpression: "1=1" }),
    (e) => e.code === "MessagingEntityAlreadyExists", "duplicate rule name");
  await assert.rejects(rules.createRule("bad", { sqlExpression: "color = = 'x'" }),
    (e) => /position 9/.test(e.message), "invalid SQL names the position");
  await assert.rejects(rules.deleteRule("nope"), (e) => e.code === "MessagingEntityNotFound", "missing rule");

  const sender = client.createSender("js-rules");
  const receiver = client.createReceiver("js-rules", "s", { receiveMode: "receiveAndDelete" });
  try {
    await sender.sendMessages([
      { body: "r", applicationProperties: { color: "red" } },
      { body: "b", applicationProperties: { color: "blue" } },
      { body: "c", correlationId: "c-1", applicationProperties: { region: "eu" } },
    ]);
    const got = await receive(receiver, 2);
    assert.deepEqual(got.map((m) => m.body), ["r", "c"]);
    assert.equal(got[0].applicationProperties.tagged, "js");
    assert.equal(got[0].applicationProperties.RuleName, "red");
    assert.equal(got[1].applicationProperties.RuleName, undefined);
    assert.equal((await receiver.peekMessages(10)).length, 0, "the blue message was not delivered");
  } finally {
    await sender.close();
    await receiver.close();
  }
}

let failed = 0;
try {
  await checkRules();
  console.log("PASS rules");
} catch (e) {
  failed++;
  console.error("FAIL rules:", e);
}
await client.close();
clearTimeout(watchdog);
process.exit(failed === 0 ? 0 : 1);
