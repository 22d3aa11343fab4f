package io.buslane.junit;

import java.time.Duration;

/**
 * What queue and subscription builders share: the properties of an entity receivers read from. Each setter writes
 * one property of the entity's Config.json entry; what is not set takes the cloud's default.
 *
 * @param <S> the builder's own type, returned by each setter
 */
public abstract class ReceivableSpec<S extends ReceivableSpec<S>> extends EntitySpec<S> {

    ReceivableSpec(String name) {
        super(name);
    }

    /** Whether receivers must accept a session ({@code RequiresSession}). */
    public S requiresSession(boolean required) {
        return property("RequiresSession", required);
    }

    /** Deliveries before a message is dead-lettered ({@code MaxDeliveryCount}, default 10). */
    public S maxDeliveryCount(int count) {
        return property("MaxDeliveryCount", count);
    }

    /** How long a received message stays locked ({@code LockDuration}, default one minute). */
    public S lockDuration(Duration duration) {
        return property("LockDuration", duration);
    }

    /** Whether expired messages go to the dead-letter queue ({@code DeadLetteringOnMessageExpiration}). */
    public S deadLetteringOnMessageExpiration(boolean enabled) {
        return property("DeadLetteringOnMessageExpiration", enabled);
    }

    /** Forwards every message to this queue or topic ({@code ForwardTo}); it must be defined too. */
    public S forwardTo(String entity) {
        return property("ForwardTo", entity);
    }
}
