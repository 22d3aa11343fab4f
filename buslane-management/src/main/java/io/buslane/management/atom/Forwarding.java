package io.buslane.management.atom;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.Engine;

/**
 * Auto-forwarding targets must exist when an entity is created or updated. A missing target is a bad request
 * (400), not a 404: the entity being written exists or is being created, only its property is wrong.
 */
final class Forwarding {

    private Forwarding() {
    }

    static void requireTargets(Engine engine, String forwardTo, String forwardDeadLetteredMessagesTo) {
        requireTarget(engine, forwardTo, "ForwardTo");
        requireTarget(engine, forwardDeadLetteredMessagesTo, "ForwardDeadLetteredMessagesTo");
    }

    private static void requireTarget(Engine engine, String target, String property) {
        if (target != null && engine.queue(target) == null && engine.topic(target) == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, property + " names '" + target
                    + "', which is neither a queue nor a topic of this namespace; the target must exist first.");
        }
    }
}
