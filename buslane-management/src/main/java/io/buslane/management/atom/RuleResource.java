package io.buslane.management.atom;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.management.Await;
import org.w3c.dom.Element;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Rules: {@code GET/PUT/DELETE /{topic}/Subscriptions/{sub}/Rules/{rule}} and {@code GET .../Rules} (in the order
 * the rules were added). The rule's name is the one in the path. An update replaces the rule (the engine has no
 * in-place rule update: it is removed and added again, and put back if the new one is refused). Rules have no
 * timestamps of their own; {@code CreatedAt} is the subscription's.
 */
final class RuleResource {

    private final Engine engine;
    private final Clock clock;

    RuleResource(Engine engine, Clock clock) {
        this.engine = engine;
        this.clock = clock;
    }

    /** A rule; a missing one is a 404 (as for subscriptions, the SDKs parse only an entry here). */
    AdminResponse get(AdminRequest r) {
        SubscriptionEntity s = SubscriptionResource.require(engine, r.path());
        return AdminResponse.entry(200, AtomWriter.entry(r, entry(s, requireRule(s, r.path()))));
    }

    AdminResponse put(AdminRequest r) {
        SubscriptionEntity s = SubscriptionResource.require(engine, r.path());
        String topic = s.topic().properties().name();
        String sub = s.properties().name();
        Element d = AtomReader.description(r.body());
        DescriptionReader.requireKind(d, "RuleDescription");
        RuleProperties rule = RuleReader.rule(d, r.path().rule());
        if (r.ifMatch() == null) {
            SubscriptionEntity updated = Await.result(engine.addRule(topic, sub, rule));
            return AdminResponse.entry(201, AtomWriter.entry(r, entry(updated, rule)));
        }
        RuleProperties old = requireRule(s, r.path());
        RuleProperties renamed = new RuleProperties(old.name(), rule.filter(), rule.sqlAction(),
                rule.actionParameters());
        Await.result(engine.removeRule(topic, sub, old.name()));
        try {
            SubscriptionEntity updated = Await.result(engine.addRule(topic, sub, renamed));
            return AdminResponse.entry(200, AtomWriter.entry(r, entry(updated, renamed)));
        } catch (RuntimeException e) {
            Await.result(engine.addRule(topic, sub, old));
            throw e;
        }
    }

    AdminResponse delete(AdminRequest r) {
        SubscriptionEntity s = SubscriptionResource.require(engine, r.path());
        RuleProperties rule = requireRule(s, r.path());
        Await.result(engine.removeRule(s.topic().properties().name(), s.properties().name(), rule.name()));
        return AdminResponse.okEmpty();
    }

    AdminResponse list(AdminRequest r) {
        SubscriptionEntity s = SubscriptionResource.require(engine, r.path());
        List<RuleProperties> all = new ArrayList<>(s.rules());
        all.sort(Comparator.comparing(rule -> rule.name().toLowerCase(Locale.ROOT)));
        Page<RuleProperties> page = Page.of(all, r); // in name order, as the service lists them (and every list)
        List<AtomWriter.Entry> entries = new ArrayList<>();
        for (RuleProperties rule : page.items()) {
            entries.add(entry(s, rule));
        }
        return AdminResponse.feed(AtomWriter.feed(r, "Rules", entries, page.nextSkip(), page.top(),
                clock.epochMillis()));
    }

    private static RuleProperties requireRule(SubscriptionEntity s, AdminPath path) {
        for (RuleProperties rule : s.rules()) {
            if (rule.name().equalsIgnoreCase(path.rule())) {
                return rule;
            }
        }
        throw new BrokerException(ErrorKind.ENTITY_NOT_FOUND, "The messaging entity '" + s.properties().path()
                + "/Rules/" + path.rule() + "' could not be found.");
    }

    private static AtomWriter.Entry entry(SubscriptionEntity s, RuleProperties rule) {
        return new AtomWriter.Entry(s.properties().path() + "/Rules/" + rule.name(), rule.name(), s.createdAtMs(),
                s.updatedAtMs(), o -> RuleWriter.rule(o, rule, s.createdAtMs()));
    }
}
