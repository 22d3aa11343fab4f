package io.buslane.bench.broker;

import com.azure.core.util.BinaryData;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceiverAsyncClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;

import reactor.core.Disposable;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Workload 9: what a user of the official Java SDK (azure-messaging-servicebus 7.17.20) sees against Buslane.
 * Sends in {@link ServiceBusMessageBatch}es of up to 100 1 KiB messages, one batch at a time (each awaited), then
 * receives them with the async receiver (prefetch 500, peek-lock) completing up to 64 at a time.
 */
final class SdkLoad {

    record Result(double sendPerSec, double sendCpuUs, double receivePerSec, double receiveCpuUs) {
    }

    /** The session processor's figures: messages per second, broker and client (this JVM) CPU µs per message. */
    record SessionResult(double msgsPerSec, double brokerCpuUs, double clientCpuUs) {
    }

    /** How long the SDK's session processor waits on a session without messages before it takes the next one. */
    static final Duration SESSION_IDLE_TIMEOUT = Duration.ofSeconds(1);

    private SdkLoad() {
    }

    private static String connectionString(int port) {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;"
                + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    /**
     * The SDK's {@code ServiceBusProcessorClient} for sessions ({@code maxConcurrentSessions} = {@code concurrency},
     * auto-complete, {@link #SESSION_IDLE_TIMEOUT}) on a session queue holding {@code warmup} messages in older
     * sessions and then {@code count} more: measured over the {@code count}.
     */
    static SessionResult sessionProcessor(int port, String queue, long warmup, long count, int concurrency,
                                          LongSupplier brokerCpuMicros) throws InterruptedException {
        AtomicLong done = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<Throwable> lastError = new AtomicReference<>();
        ServiceBusProcessorClient processor = new ServiceBusClientBuilder().connectionString(connectionString(port))
                .sessionProcessor().queueName(queue).maxConcurrentSessions(concurrency)
                .sessionIdleTimeout(SESSION_IDLE_TIMEOUT)
                .processMessage(ctx -> done.incrementAndGet())
                .processError(ctx -> {
                    errors.incrementAndGet();
                    lastError.set(ctx.getException());
                })
                .buildProcessorClient();
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        processor.start();
        try {
            awaitCount(done, warmup, Duration.ofMinutes(5));
            long d0 = done.get();
            long cpu0 = brokerCpuMicros.getAsLong();
            long client0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            awaitCount(done, warmup + count, Duration.ofMinutes(15));
            long d1 = done.get();
            long t1 = System.nanoTime();
            long cpu1 = brokerCpuMicros.getAsLong();
            long client1 = os.getProcessCpuTime();
            if (d1 < warmup + count) {
                throw new IllegalStateException("the SDK's session processor handled " + d1 + " of "
                        + (warmup + count) + " messages; last error: " + lastError.get(), lastError.get());
            }
            if (errors.get() > 0) {
                System.out.println("  (the SDK's session processor reported " + errors.get() + " errors; last: "
                        + lastError.get() + ")");
            }
            double n = d1 - d0;
            return new SessionResult(n / ((t1 - t0) / 1e9), (cpu1 - cpu0) / n, (client1 - client0) / 1e3 / n);
        } finally {
            processor.close();
        }
    }

    private static void awaitCount(AtomicLong counter, long count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (counter.get() < count && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
    }

    static Result run(int port, String queue, int count, LongSupplier brokerCpuMicros) {
        String cs = connectionString(port);
        byte[] body = new byte[AmqpLoad.BODY_BYTES];
        ServiceBusSenderClient sender = new ServiceBusClientBuilder().connectionString(cs).sender().queueName(queue)
                .buildClient();
        // warm up: connection, link, JIT
        sender.sendMessage(new ServiceBusMessage(BinaryData.fromBytes(body)));
        long cpu0 = brokerCpuMicros.getAsLong();
        long t0 = System.nanoTime();
        int sent = 0;
        while (sent < count) {
            ServiceBusMessageBatch batch = sender.createMessageBatch();
            while (sent < count && batch.getCount() < 100
                    && batch.tryAddMessage(new ServiceBusMessage(BinaryData.fromBytes(body)))) {
                sent++;
            }
            sender.sendMessages(batch);
        }
        long t1 = System.nanoTime();
        long cpu1 = brokerCpuMicros.getAsLong();
        sender.close();

        ServiceBusReceiverAsyncClient receiver = new ServiceBusClientBuilder().connectionString(cs).receiver()
                .queueName(queue).prefetchCount(Integer.getInteger("bench.sdk.prefetch", 0)).disableAutoComplete()
                .buildAsyncClient();
        long cpu2 = brokerCpuMicros.getAsLong();
        long t2 = System.nanoTime();
        AtomicLong completed = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Disposable subscription = receiver.receiveMessages()
                .flatMap(m -> receiver.complete(m).doOnSuccess(v -> completed.incrementAndGet()), 64)
                .subscribe(v -> { }, failed::set);
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (completed.get() < count + 1L && failed.get() == null && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
        long t3 = System.nanoTime();
        long cpu3 = brokerCpuMicros.getAsLong();
        subscription.dispose();
        receiver.close();
        if (completed.get() < count + 1L) {
            throw new IllegalStateException("the SDK completed " + completed.get() + " of " + (count + 1)
                    + " messages", failed.get());
        }
        return new Result(count / ((t1 - t0) / 1e9), (double) (cpu1 - cpu0) / count,
                (count + 1) / ((t3 - t2) / 1e9), (double) (cpu3 - cpu2) / (count + 1));
    }
}
