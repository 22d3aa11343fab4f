package io.buslane.engine.txn;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What {@link Transactions} asks of the engine: apply a committed batch. A front end wires it to
 * {@code Engine#commit} ({@code TransactionWork.of(engine::commit)}); the engine's packages below the facade do not
 * see the facade itself.
 */
public interface TransactionWork {

    /** Applies a committed transaction's sends, scheduled messages and settlements (see {@link TransactionCommit}). */
    CompletableFuture<Void> commit(TransactionalBatch batch);

    /** The work done by the given function. */
    static TransactionWork of(Function<TransactionalBatch, CompletableFuture<Void>> commit) {
        return commit::apply;
    }
}
