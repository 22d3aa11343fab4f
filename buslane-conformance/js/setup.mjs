// Set-up shared by the conformance scripts (conformance.mjs, rules.mjs): the broker's connection string from
// BUSLANE_CONNECTION_STRING, a watchdog, a ServiceBusClient and a receive helper. BUSLANE_WEBSOCKETS=1 makes the client
// speak AMQP over WebSockets (the `ws` package, as Node.js applications do); NODE_EXTRA_CA_CERTS trusts a private CA.

import { ServiceBusClient } from "@azure/service-bus";
import WebSocket from "ws";

/**
 * A client for BUSLANE_CONNECTION_STRING (exit code 2 when it is not set) with 10-second tries and `maxRetries`
 * retries, and a watchdog (exit code 3 after 100 s, so that a hanging SDK call cannot hang the build) that the
 * script clears when done. `what` names the script in the watchdog's message.
 */
export function connect(what, maxRetries) {
  const connectionString = process.env.BUSLANE_CONNECTION_STRING;
  if (!connectionString) {
    console.error("BUSLANE_CONNECTION_STRING is not set");
    process.exit(2);
  }
  const watchdog = startWatchdog(what);
  const options = { retryOptions: { timeoutInMs: 10_000, maxRetries, retryDelayInMs: 500 } };
  if (process.env.BUSLANE_WEBSOCKETS === "1") {
    options.webSocketOptions = { webSocket: WebSocket };
  }
  const client = new ServiceBusClient(connectionString, options);
  return { client, watchdog };
}

/** Receives until `count` messages arrived or `withinMs` elapsed. */
export async function receive(receiver, count, withinMs = 10_000) {
  const got = [];
  const deadline = Date.now() + withinMs;
  while (got.length < count) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const batch = await receiver.receiveMessages(count - got.length, { maxWaitTimeInMs: Math.max(left, 100) });
    got.push(...batch);
  }
  return got;
}

/** A watchdog (exit code 3 after 100 s, so that a hanging SDK call cannot hang the build); clear it when done. */
export function startWatchdog(what) {
  return setTimeout(() => {
    console.error(`FAIL: the ${what} script did not finish within 100 s`);
    process.exit(3);
  }, 100_000);
}

/** Runs every check, even after one failed, printing PASS or FAIL for each; returns how many failed. */
export async function runChecks(checks) {
  let failed = 0;
  for (const [name, check] of Object.entries(checks)) {
    const t0 = Date.now();
    try {
      await check();
      console.log(`PASS ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name} (${Date.now() - t0} ms): ${e && e.stack ? e.stack : e}`);
    }
  }
  return failed;
}
