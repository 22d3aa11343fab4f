package io.buslane.engine.namespace;

import io.buslane.engine.partition.Forwarder;

/**
 * Makes the {@link Forwarder} of a queue or topic partition: the namespace installs one on every partition it
 * builds; the routing layer implements it, since forwarding resolves the destination like a send.
 */
@FunctionalInterface
public interface Forwarding {

    Forwarder forwarderFor(PartitionRef source);
}
