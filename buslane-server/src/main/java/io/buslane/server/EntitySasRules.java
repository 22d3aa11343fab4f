package io.buslane.server;

import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.engine.Engine;
import io.buslane.engine.entity.AuthorizationRule;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;

import java.util.ArrayList;
import java.util.List;

/**
 * The shared access rules queues and topics carry (set through the admin API), as the SAS validator looks them up:
 * a token signed with one of them grants its rights on that entity only.
 */
final class EntitySasRules implements SasValidator.EntityRules {

    private final Engine engine;

    EntitySasRules(Engine engine) {
        this.engine = engine;
    }

    @Override
    public List<SasRule> find(String entityName, String keyName) {
        QueueEntity queue = engine.queue(entityName);
        List<AuthorizationRule> rules;
        if (queue != null) {
            rules = queue.properties().authorizationRules();
        } else {
            TopicEntity topic = engine.topic(entityName);
            rules = topic != null ? topic.properties().authorizationRules() : List.of();
        }
        List<SasRule> out = new ArrayList<>(2);
        for (AuthorizationRule r : rules) {
            if (r.keyName().equalsIgnoreCase(keyName)) {
                out.add(new SasRule(r.keyName(), r.primaryKey(), r.rights()));
                if (r.secondaryKey() != null) {
                    out.add(new SasRule(r.keyName(), r.secondaryKey(), r.rights()));
                }
            }
        }
        return out;
    }
}
