package io.buslane.management;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for engine futures on the Vert.x worker threads of the ATOM admin API and the web console, rethrowing the
 * engine's own exceptions.
 */
public final class Await {

    public static final long TIMEOUT_SECONDS = 30;

    private Await() {
    }

    public static <T> T result(CompletableFuture<T> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new BrokerException(ErrorKind.INTERNAL, String.valueOf(cause), cause);
        } catch (TimeoutException e) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, "The operation did not complete within "
                    + TIMEOUT_SECONDS + " seconds; the broker is busy. Retry later.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerException(ErrorKind.SERVER_BUSY, "The operation was interrupted.");
        }
    }
}
