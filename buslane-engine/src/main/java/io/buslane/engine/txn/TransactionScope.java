package io.buslane.engine.txn;

import io.buslane.engine.message.Message;

import java.util.List;

/**
 * One transaction as a {@code $management} request carrying {@code transactional-state{txn-id}} sees it: the
 * settlements of {@code update-disposition} and the cancels of {@code cancel-scheduled-message} are staged,
 * {@code schedule-message} is checked and its result remembered. Methods throw {@link TransactionFailure} when
 * the work is refused.
 */
public interface TransactionScope {

    /** Stages a settlement until the commit. Called on the connection's loop. */
    void stageSettlement(TransactionalBatch.Settle settle);

    /** Checks (entity pinning, message limit) and counts messages about to be scheduled on {@code entityPath}. */
    void beforeSchedule(String entityPath, int count);

    /**
     * The messages were numbered ({@code Engine#reserveScheduled}): they are stored if the transaction commits. May
     * be called off-loop.
     */
    void scheduled(String entityPath, List<Message> messages,
                   long[] sequenceNumbers);

    /** Stages a cancel of scheduled messages of {@code entityPath} until the commit. On the connection's loop. */
    void stageCancel(String entityPath, long[] sequenceNumbers);
}
