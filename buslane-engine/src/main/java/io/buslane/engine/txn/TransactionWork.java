package io.buslane.engine.txn;

import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What {@link Transactions} asks of the engine: apply a committed batch, and take back messages scheduled under a
 * transaction that did not commit. A front end wires these to {@code Engine#commit} and
 * {@code Engine#cancelScheduled} ({@code TransactionWork.of(engine::commit, engine::cancelScheduled)}); the engine's
 * packages below the facade do not see the facade itself.
 */
public interface TransactionWork {

    /** Applies a committed transaction's sends and settlements (see {@link TransactionCommit}). */
    CompletableFuture<Void> commit(TransactionalBatch batch);

    /** Cancels scheduled messages of {@code entityPath} (best effort). */
    CompletableFuture<Void> cancelScheduled(String entityPath, long[] sequenceNumbers);

    /** The work done by the two given functions. */
    static TransactionWork of(Function<TransactionalBatch, CompletableFuture<Void>> commit,
                              BiFunction<String, long[], CompletableFuture<Void>> cancelScheduled) {
        return new TransactionWork() {
            @Override
            public CompletableFuture<Void> commit(TransactionalBatch batch) {
                return commit.apply(batch);
            }

            @Override
            public CompletableFuture<Void> cancelScheduled(String entityPath, long[] sequenceNumbers) {
                return cancelScheduled.apply(entityPath, sequenceNumbers);
            }
        };
    }
}
