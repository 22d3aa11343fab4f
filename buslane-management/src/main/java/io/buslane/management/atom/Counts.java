package io.buslane.management.atom;

import io.buslane.engine.Engine;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.management.Await;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Runtime counts from {@link Engine#counts(String)}: for a queue, a subscription ({@code topic/Subscriptions/sub})
 * or a topic (its scheduled messages). An entity deleted while being listed counts as zero.
 */
final class Counts {

    private Counts() {
    }

    static RuntimeCounts of(Engine engine, String path) {
        return all(engine, List.of(path)).get(0);
    }

    /** The counts of several entities, asked for at once. */
    static List<RuntimeCounts> all(Engine engine, List<String> paths) {
        List<CompletableFuture<RuntimeCounts>> futures = new ArrayList<>(paths.size());
        for (String path : paths) {
            futures.add(engine.counts(path));
        }
        List<RuntimeCounts> out = new ArrayList<>(paths.size());
        for (CompletableFuture<RuntimeCounts> f : futures) {
            try {
                out.add(Await.result(f));
            } catch (BrokerException e) {
                if (e.kind() != ErrorKind.ENTITY_NOT_FOUND) {
                    throw e;
                }
                out.add(RuntimeCounts.ZERO);
            }
        }
        return out;
    }
}
