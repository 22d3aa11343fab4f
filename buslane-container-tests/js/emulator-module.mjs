// Testcontainers for Node.js, its Azure Service Bus module (@testcontainers/azureservicebus), with the Buslane image
// in place of Microsoft's emulator: run by BuslaneContainerTest over podman's Docker-compatible socket (DOCKER_HOST,
// TESTCONTAINERS_RYUK_DISABLED=true from the test's environment).
//
//   BUSLANE_IMAGE=localhost/buslane:test BUSLANE_PLACEHOLDER_IMAGE=localhost/buslane-jre17-base:test \
//     node emulator-module.mjs
//
// The module always starts a SQL Server for the emulator; Buslane needs none, so it is handed a placeholder that
// starts at once (any small local image: here the JRE base the Buslane image is built on, sleeping). Its Config.json
// goes where the emulator reads it, its wait strategy is the emulator's /health on 5300, and its connection string
// is the emulator's. Exit code 0 when a message sent through that string came back.
import { AzureServiceBusContainer } from "@testcontainers/azureservicebus";
import { GenericContainer } from "testcontainers";
import { ServiceBusClient } from "@azure/service-bus";

const config = {
  UserConfig: {
    Namespaces: [{ Name: "sbemulatorns", Queues: [{ Name: "node-tc-queue" }] }],
    Logging: { Type: "File" },
  },
};

const placeholder = new GenericContainer(process.env.BUSLANE_PLACEHOLDER_IMAGE).withCommand(["sleep", "infinity"]);
const container = await new AzureServiceBusContainer(process.env.BUSLANE_IMAGE)
  .acceptLicense()
  .withMssqlContainer(placeholder)
  .withConfig(JSON.stringify(config))
  .start();
let failed = false;
try {
  const connectionString = container.getConnectionString();
  console.log("connection string: " + connectionString.replace(/SharedAccessKey=[^;]*/, "SharedAccessKey=***"));
  const client = new ServiceBusClient(connectionString);
  try {
    await client.createSender("node-tc-queue").sendMessages({ body: "through the Node module" });
    const receiver = client.createReceiver("node-tc-queue", { receiveMode: "receiveAndDelete" });
    const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 10_000 });
    if (got.length !== 1 || got[0].body !== "through the Node module") {
      console.log("FAIL: received " + JSON.stringify(got.map((m) => m.body)));
      failed = true;
    } else {
      console.log("PASS: the Node module ran the Buslane image; a message sent through its connection string came back");
    }
  } finally {
    await client.close();
  }
} finally {
  await container.stop();
}
process.exit(failed ? 1 : 0);
