package io.buslane.engine.cluster;

import io.buslane.engine.Engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

/** The cluster tests' engines run in manual threading mode: run them idle, then take the answer (or its error). */
final class Await {

    private Await() {
    }

    static <T> T await(Engine e, CompletableFuture<T> f) {
        e.runUntilIdle();
        assertThat(f).isDone();
        try {
            return f.join();
        } catch (CompletionException x) {
            throw (RuntimeException) x.getCause();
        }
    }
}
