package io.buslane.engine.api;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * Cumulative message counters of one engine, for metrics: plain {@link LongAdder}s that the engine bumps when an
 * operation succeeds (after its records are durable) and anything reads at any time. No metrics library here: the
 * server exposes these as Prometheus counters. Counts only grow (entity deletion does not lower them).
 */
public final class EngineStats {

    /** How a locked message was settled. */
    public enum Outcome {
        COMPLETE, ABANDON, DEFER, DEAD_LETTER, RELEASE
    }

    private final LongAdder sent = new LongAdder();
    private final LongAdder delivered = new LongAdder();
    private final LongAdder[] settled = new LongAdder[Outcome.values().length];

    public EngineStats() {
        for (int i = 0; i < settled.length; i++) {
            settled[i] = new LongAdder();
        }
    }

    /** Messages accepted by send or schedule (each message once, whatever the number of subscriptions). */
    public long sent() {
        return sent.sum();
    }

    /** Messages handed to receivers: locked (peek-lock), removed (receive-and-delete) or received by sequence. */
    public long delivered() {
        return delivered.sum();
    }

    /** Settlements with the given outcome. */
    public long settled(Outcome outcome) {
        return settled[outcome.ordinal()].sum();
    }

    /** One message handed to a receiver. */
    public void onDelivered() {
        delivered.increment();
    }

    /** The counter of sent messages, for {@code Shard.call} to add to once a send is durable. */
    public LongAdder sentCounter() {
        return sent;
    }

    /** The counter of settlements with the given outcome, for {@code Shard.call} to add to once durable. */
    public LongAdder settledCounter(Outcome outcome) {
        return settled[outcome.ordinal()];
    }

    /** Counts the messages of a receive-by-sequence-number once {@code f} succeeds; returns {@code f} itself. */
    public <T extends List<?>> CompletableFuture<T> countDelivered(CompletableFuture<T> f) {
        f.whenComplete((r, e) -> {
            if (e == null && r != null) {
                delivered.add(r.size());
            }
        });
        return f;
    }
}
