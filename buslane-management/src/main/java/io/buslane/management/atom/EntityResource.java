package io.buslane.management.atom;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.management.Await;
import org.w3c.dom.Element;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Queues and topics: {@code GET/PUT/DELETE /{path}} and {@code GET /$Resources/queues|topics}. A {@code PUT}
 * creates (201; 409 when the name is taken by a queue or a topic) unless it carries {@code If-Match}, which makes
 * it an update (200; 404 when there is nothing to update). The body's description decides between queue and topic.
 */
final class EntityResource {

    private final Engine engine;
    private final Clock clock;

    EntityResource(Engine engine, Clock clock) {
        this.engine = engine;
        this.clock = clock;
    }

    AdminResponse get(AdminRequest r) {
        String name = r.path().entity();
        QueueEntity q = engine.queue(name);
        if (q != null) {
            RuntimeCounts c = Counts.of(engine, q.properties().name());
            return AdminResponse.entry(200, AtomWriter.entry(r, queueEntry(r, q, c)));
        }
        TopicEntity t = engine.topic(name);
        if (t != null) {
            RuntimeCounts c = Counts.of(engine, t.properties().name());
            return AdminResponse.entry(200, AtomWriter.entry(r, topicEntry(r, t, c)));
        }
        return AdminResponse.feed(AtomWriter.emptyFeed(clock.epochMillis()));
    }

    AdminResponse put(AdminRequest r) {
        String name = r.path().entity();
        Element d = AtomReader.description(r.body());
        boolean update = r.ifMatch() != null;
        return switch (d.getLocalName()) {
            case "QueueDescription" -> update ? updateQueue(r, name, d) : createQueue(r, name, d);
            case "TopicDescription" -> update ? updateTopic(r, name, d) : createTopic(r, name, d);
            default -> throw new IllegalArgumentException("Expected a QueueDescription or a TopicDescription in the "
                    + "ATOM entry's content, found " + d.getLocalName() + ".");
        };
    }

    AdminResponse delete(AdminRequest r) {
        String name = r.path().entity();
        if (engine.queue(name) != null) {
            Await.result(engine.deleteQueue(name));
        } else if (engine.topic(name) != null) {
            Await.result(engine.deleteTopic(name));
        } else {
            throw BrokerException.entityNotFound(name);
        }
        return AdminResponse.okEmpty();
    }

    AdminResponse listQueues(AdminRequest r) {
        List<QueueEntity> all = new ArrayList<>(engine.queues());
        all.sort(Comparator.comparing(q -> q.properties().name().toLowerCase(Locale.ROOT)));
        Page<QueueEntity> page = Page.of(all, r);
        List<RuntimeCounts> counts = Counts.all(engine, page.items().stream().map(q -> q.properties().name()).toList());
        List<AtomWriter.Entry> entries = new ArrayList<>();
        for (int i = 0; i < page.items().size(); i++) {
            entries.add(queueEntry(r, page.items().get(i), counts.get(i)));
        }
        return AdminResponse.feed(AtomWriter.feed(r, "Queues", entries, page.nextSkip(), page.top(),
                clock.epochMillis()));
    }

    /**
     * Entities discovery of the namespace root ({@code GET https://{ns}/}, what the service documents as
     * "Entities Discovery"): a feed of the root's immediate children, the queues and topics whose path is one
     * segment, in name order, titled as the feed of an unoccupied name; {@code $skip} and {@code $top} page it.
     */
    AdminResponse discoverRoot(AdminRequest r) {
        record Child(String name, QueueEntity queue, TopicEntity topic) {
        }
        List<Child> all = new ArrayList<>();
        engine.queues().stream().filter(q -> q.properties().name().indexOf('/') < 0)
                .forEach(q -> all.add(new Child(q.properties().name(), q, null)));
        engine.topics().stream().filter(t -> t.properties().name().indexOf('/') < 0)
                .forEach(t -> all.add(new Child(t.properties().name(), null, t)));
        all.sort(Comparator.comparing(c -> c.name().toLowerCase(Locale.ROOT)));
        Page<Child> page = Page.of(all, r);
        List<RuntimeCounts> counts = Counts.all(engine, page.items().stream().map(Child::name).toList());
        List<AtomWriter.Entry> entries = new ArrayList<>();
        for (int i = 0; i < page.items().size(); i++) {
            Child c = page.items().get(i);
            entries.add(c.queue() != null ? queueEntry(r, c.queue(), counts.get(i))
                    : topicEntry(r, c.topic(), counts.get(i)));
        }
        return AdminResponse.feed(AtomWriter.feed(r, AtomWriter.DISCOVERY_TITLE, entries, page.nextSkip(),
                page.top(), clock.epochMillis()));
    }

    AdminResponse listTopics(AdminRequest r) {
        List<TopicEntity> all = new ArrayList<>(engine.topics());
        all.sort(Comparator.comparing(t -> t.properties().name().toLowerCase(Locale.ROOT)));
        Page<TopicEntity> page = Page.of(all, r);
        List<RuntimeCounts> counts = Counts.all(engine, page.items().stream().map(t -> t.properties().name()).toList());
        List<AtomWriter.Entry> entries = new ArrayList<>();
        for (int i = 0; i < page.items().size(); i++) {
            entries.add(topicEntry(r, page.items().get(i), counts.get(i)));
        }
        return AdminResponse.feed(AtomWriter.feed(r, "Topics", entries, page.nextSkip(), page.top(),
                clock.epochMillis()));
    }

    private AdminResponse createQueue(AdminRequest r, String name, Element d) {
        requireNameFree(name);
        QueueProperties p = DescriptionReader.queue(name, d, null);
        Forwarding.requireTargets(engine, r, p.forwardTo(), p.forwardDeadLetteredMessagesTo(), null, null);
        QueueEntity q = Await.result(engine.createQueue(p));
        return AdminResponse.entry(201, AtomWriter.entry(r, queueEntry(r, q, RuntimeCounts.ZERO)));
    }

    private AdminResponse updateQueue(AdminRequest r, String name, Element d) {
        QueueEntity existing = engine.queue(name);
        if (existing == null) {
            throw BrokerException.entityNotFound(name);
        }
        QueueProperties p = DescriptionReader.queue(existing.properties().name(), d, existing.properties());
        Forwarding.requireTargets(engine, r, p.forwardTo(), p.forwardDeadLetteredMessagesTo(),
                existing.properties().forwardTo(), existing.properties().forwardDeadLetteredMessagesTo());
        QueueEntity q = Await.result(engine.updateQueue(p));
        RuntimeCounts c = Counts.of(engine, q.properties().name());
        return AdminResponse.entry(200, AtomWriter.entry(r, queueEntry(r, q, c)));
    }

    private AdminResponse createTopic(AdminRequest r, String name, Element d) {
        requireNameFree(name);
        TopicProperties p = DescriptionReader.topic(name, d, null);
        TopicEntity t = Await.result(engine.createTopic(p));
        return AdminResponse.entry(201, AtomWriter.entry(r, topicEntry(r, t, RuntimeCounts.ZERO)));
    }

    private AdminResponse updateTopic(AdminRequest r, String name, Element d) {
        TopicEntity existing = engine.topic(name);
        if (existing == null) {
            throw BrokerException.entityNotFound(name);
        }
        TopicProperties p = DescriptionReader.topic(existing.properties().name(), d, existing.properties());
        TopicEntity t = Await.result(engine.updateTopic(p));
        return AdminResponse.entry(200, AtomWriter.entry(r, topicEntry(r, t,
                Counts.of(engine, t.properties().name()))));
    }

    private void requireNameFree(String name) {
        QueueEntity q = engine.queue(name);
        TopicEntity t = engine.topic(name);
        if (q != null || t != null) {
            String existing = q != null ? q.properties().name() : t.properties().name();
            throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '" + existing
                    + "' already exists.");
        }
    }

    static AtomWriter.Entry queueEntry(AdminRequest r, QueueEntity q, RuntimeCounts c) {
        String name = q.properties().name();
        return new AtomWriter.Entry(name, name, q.createdAtMs(), q.updatedAtMs(),
                o -> DescriptionWriter.queue(o, q, c, r::entityUrl));
    }

    static AtomWriter.Entry topicEntry(AdminRequest r, TopicEntity t, RuntimeCounts c) {
        String name = t.properties().name();
        boolean filterCounts = DescriptionWriter.hasFilterCounts(r.apiVersion());
        return new AtomWriter.Entry(name, name, t.createdAtMs(), t.updatedAtMs(),
                o -> DescriptionWriter.topic(o, t, c, filterCounts));
    }
}
