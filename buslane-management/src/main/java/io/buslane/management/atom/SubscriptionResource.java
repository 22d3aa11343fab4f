package io.buslane.management.atom;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.management.Await;
import org.w3c.dom.Element;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Subscriptions: {@code GET/PUT/DELETE /{topic}/Subscriptions/{name}} and {@code GET /{topic}/Subscriptions}. A
 * create may carry a {@code DefaultRuleDescription}, which replaces the {@code $Default} TrueFilter rule.
 */
final class SubscriptionResource {

    private final Engine engine;
    private final Clock clock;

    SubscriptionResource(Engine engine, Clock clock) {
        this.engine = engine;
        this.clock = clock;
    }

    /**
     * A subscription; a missing one (or one of a missing topic) is a 404, unlike a missing queue or topic: the
     * SDKs read a subscription's answer as an entry only (Java's fails to parse a feed there), so the service
     * cannot be answering the discovery feed of an unoccupied name here.
     */
    AdminResponse get(AdminRequest r) {
        SubscriptionEntity s = require(engine, r.path());
        return AdminResponse.entry(200, AtomWriter.entry(r, entry(r, s, Counts.of(engine, path(s)))));
    }

    AdminResponse put(AdminRequest r) {
        TopicEntity topic = requireTopic(engine, r.path().entity());
        String name = r.path().subscription();
        Element d = AtomReader.description(r.body());
        if (r.ifMatch() != null) {
            SubscriptionEntity existing = require(engine, r.path());
            SubscriptionProperties p = DescriptionReader.subscription(topic.properties().name(),
                    existing.properties().name(), d, existing.properties());
            Forwarding.requireTargets(engine, r, p.forwardTo(), p.forwardDeadLetteredMessagesTo(),
                    existing.properties().forwardTo(), existing.properties().forwardDeadLetteredMessagesTo());
            SubscriptionEntity s = Await.result(engine.updateSubscription(p));
            return AdminResponse.entry(200, AtomWriter.entry(r, entry(r, s, Counts.of(engine, path(s)))));
        }
        SubscriptionProperties p = DescriptionReader.subscription(topic.properties().name(), name, d, null);
        List<RuleProperties> rules = DescriptionReader.defaultRules(d);
        if (topic.subscription(name) == null) {
            Forwarding.requireTargets(engine, r, p.forwardTo(), p.forwardDeadLetteredMessagesTo(), null,
                    null);
        }
        SubscriptionEntity s = Await.result(engine.createSubscription(p, rules));
        return AdminResponse.entry(201, AtomWriter.entry(r, entry(r, s, RuntimeCounts.ZERO)));
    }

    AdminResponse delete(AdminRequest r) {
        SubscriptionEntity s = require(engine, r.path());
        Await.result(engine.deleteSubscription(s.topic().properties().name(), s.properties().name()));
        return AdminResponse.okEmpty();
    }

    AdminResponse list(AdminRequest r) {
        TopicEntity topic = requireTopic(engine, r.path().entity());
        List<SubscriptionEntity> all = new ArrayList<>(topic.subscriptions());
        all.sort(Comparator.comparing(s -> s.properties().name().toLowerCase(Locale.ROOT)));
        Page<SubscriptionEntity> page = Page.of(all, r);
        List<RuntimeCounts> counts = Counts.all(engine, page.items().stream().map(SubscriptionResource::path).toList());
        List<AtomWriter.Entry> entries = new ArrayList<>();
        for (int i = 0; i < page.items().size(); i++) {
            entries.add(entry(r, page.items().get(i), counts.get(i)));
        }
        return AdminResponse.feed(AtomWriter.feed(r, "Subscriptions", entries, page.nextSkip(), page.top(),
                clock.epochMillis()));
    }

    static TopicEntity requireTopic(Engine engine, String name) {
        TopicEntity t = engine.topic(name);
        if (t == null) {
            throw BrokerException.entityNotFound(name);
        }
        return t;
    }

    /** The addressed subscription; 404 when its topic or itself is missing. */
    static SubscriptionEntity require(Engine engine, AdminPath path) {
        SubscriptionEntity s = requireTopic(engine, path.entity()).subscription(path.subscription());
        if (s == null) {
            throw BrokerException.entityNotFound(path.subscriptionPath());
        }
        return s;
    }

    private static String path(SubscriptionEntity s) {
        return s.properties().path();
    }

    private static AtomWriter.Entry entry(AdminRequest r, SubscriptionEntity s, RuntimeCounts c) {
        return new AtomWriter.Entry(path(s), s.properties().name(), s.createdAtMs(), s.updatedAtMs(),
                o -> DescriptionWriter.subscription(o, s, c, r::entityUrl));
    }
}
