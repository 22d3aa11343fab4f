package io.buslane.server.config;

import io.buslane.engine.entity.QueueProperties;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable. The entities a broker starts with, as declared by a Config.json file (see {@link ConfigLoader}): one
 * namespace's queues and topics, each topic with its subscriptions and each subscription with its rules. Names are
 * unique case-insensitively across queues and topics.
 *
 * @param namespaceName the namespace's {@code Name} as written in the file (the emulator requires
 *                      {@code sbemulatorns}; Buslane keeps whatever is given)
 * @param queues        the queues, in file order
 * @param topics        the topics, in file order
 */
public record Topology(String namespaceName, List<QueueProperties> queues, List<TopicDefinition> topics) {

    public Topology {
        Objects.requireNonNull(namespaceName, "namespaceName");
        queues = List.copyOf(queues);
        topics = List.copyOf(topics);
    }

    /** The queue with this name, compared case-insensitively. */
    public Optional<QueueProperties> findQueue(String name) {
        return queues.stream().filter(q -> q.name().equalsIgnoreCase(name)).findFirst();
    }

    /** The topic with this name, compared case-insensitively. */
    public Optional<TopicDefinition> findTopic(String name) {
        return topics.stream().filter(t -> t.topic().name().equalsIgnoreCase(name)).findFirst();
    }
}
