package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.partition.SessionWaiter;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A wait for the next free session that ends once: a session accepted, a failure or the timeout, whichever claims
 * it first; a failure fails {@code result}. Subclasses say what an accepted session does.
 */
abstract class OnceWaiter implements SessionWaiter {

    private final AtomicBoolean claimed = new AtomicBoolean();
    private final ConsumerHandle consumer;
    private final CompletableFuture<?> result;

    OnceWaiter(ConsumerHandle consumer, CompletableFuture<?> result) {
        this.consumer = consumer;
        this.result = result;
    }

    @Override
    public ConsumerHandle consumer() {
        return consumer;
    }

    @Override
    public boolean tryClaim() {
        return claimed.compareAndSet(false, true);
    }

    @Override
    public boolean isClaimed() {
        return claimed.get();
    }

    @Override
    public void onFailed(BrokerException error) {
        if (tryClaim()) {
            result.completeExceptionally(error);
        }
    }

    @Override
    public void onGrantWithdrawn(BrokerException error) {
        result.completeExceptionally(error); // claimed by the grant being withdrawn: nobody else answers it
    }
}
