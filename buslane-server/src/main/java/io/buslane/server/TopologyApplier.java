package io.buslane.server;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.Engine;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.server.config.SubscriptionDefinition;
import io.buslane.server.config.TopicDefinition;
import io.buslane.server.config.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Makes the namespace contain a configured topology: creates what is missing and updates what differs. Entities
 * created at run time and not named in the configuration are kept (the broker is durable). Called once at
 * start-up, before the front ends open.
 */
final class TopologyApplier {

    private static final Logger LOG = LoggerFactory.getLogger(TopologyApplier.class);

    private TopologyApplier() {
    }

    static void apply(Engine engine, Topology topology) {
        apply(engine, topology, true);
    }

    /**
     * @param readFirst whether to read the namespace again first (cluster mode: what the other nodes created
     *                  already); false only in tests, standing for another node's create landing just after that read
     */
    static void apply(Engine engine, Topology topology, boolean readFirst) {
        if (readFirst) {
            engine.cluster().refreshNamespace();
        }
        int created = 0;
        int updated = 0;
        for (QueueProperties configured : topology.queues()) {
            if (engine.queue(configured.name()) == null) {
                int made = createdNow(() -> engine.createQueue(configured));
                created += made;
                if (made == 1) {
                    continue;
                }
            }
            QueueEntity existing = engine.queue(configured.name()); // another node may have created it a moment ago
            // Config.json has no authorization rules: those set through the admin API stay; so do the forwarding
            // targets' addresses as an admin client wrote them, while the targets stay those configured
            QueueProperties q = configured.toBuilder().authorizationRules(existing.properties().authorizationRules())
                    .forwardToAddress(existing.properties().forwardToAddress())
                    .forwardDeadLetteredMessagesToAddress(existing.properties().forwardDeadLetteredMessagesToAddress())
                    .build();
            if (!existing.properties().equals(q)) {
                join(engine.updateQueue(q));
                updated++;
            }
        }
        for (TopicDefinition t : topology.topics()) {
            int made = engine.topic(t.topic().name()) == null ? createdNow(() -> engine.createTopic(t.topic())) : 0;
            created += made;
            TopicEntity existing = engine.topic(t.topic().name());
            if (made == 0) {
                TopicProperties p = t.topic().toBuilder()
                        .authorizationRules(existing.properties().authorizationRules()).build();
                if (!existing.properties().equals(p)) {
                    join(engine.updateTopic(p));
                    updated++;
                }
            }
            TopicEntity topic = engine.topic(t.topic().name());
            for (SubscriptionDefinition s : t.subscriptions()) {
                SubscriptionEntity sub = topic.subscription(s.subscription().name());
                if (sub == null) {
                    int madeSub = createdNow(() -> engine.createSubscription(s.subscription(), s.rules()));
                    created += madeSub;
                    if (madeSub == 1) {
                        continue;
                    }
                    sub = engine.topic(t.topic().name()).subscription(s.subscription().name());
                }
                SubscriptionProperties configuredSub = s.subscription().toBuilder()
                        .forwardToAddress(sub.properties().forwardToAddress())
                        .forwardDeadLetteredMessagesToAddress(sub.properties().forwardDeadLetteredMessagesToAddress())
                        .build();
                if (!sub.properties().equals(configuredSub)) {
                    join(engine.updateSubscription(configuredSub));
                    updated++;
                }
                if (!sub.rules().equals(s.rules())) {
                    replaceRules(engine, t.topic().name(), sub, s.rules());
                    updated++;
                }
            }
        }
        LOG.info("Topology '{}' applied: {} entities created, {} updated", topology.namespaceName(), created,
                updated);
    }

    private static void replaceRules(Engine engine, String topic, SubscriptionEntity sub, List<RuleProperties> want) {
        String name = sub.properties().name();
        for (RuleProperties r : new ArrayList<>(sub.rules())) {
            if (!want.contains(r)) {
                join(engine.removeRule(topic, name, r.name()));
            }
        }
        for (RuleProperties r : want) {
            if (!engine.topic(topic).subscription(name).rules().contains(r)) {
                join(engine.addRule(topic, name, r));
            }
        }
    }

    /**
     * 1 when the entity was created, 0 when it exists already: in a cluster, another node applying the same
     * configuration at the same time may have created it first (the create refuses at once, having read the
     * namespace again, or when its write lost the race); the caller then compares it with the configuration as an
     * existing entity.
     */
    private static int createdNow(Supplier<CompletableFuture<?>> create) {
        try {
            create.get().join();
            return 1;
        } catch (BrokerException e) {
            if (e.kind() == ErrorKind.ENTITY_ALREADY_EXISTS) {
                return 0;
            }
            throw e;
        } catch (CompletionException e) {
            if (e.getCause() instanceof BrokerException be
                    && be.kind() == ErrorKind.ENTITY_ALREADY_EXISTS) {
                return 0;
            }
            throw e;
        }
    }

    private static <T> T join(CompletableFuture<T> f) {
        return f.join();
    }
}
