package io.buslane.engine.entity;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;

/** An entity's status, as the service names it. */
public enum EntityStatus {
    ACTIVE("Active"),
    DISABLED("Disabled"),
    SEND_DISABLED("SendDisabled"),
    RECEIVE_DISABLED("ReceiveDisabled");

    private final String serviceName;

    EntityStatus(String serviceName) {
        this.serviceName = serviceName;
    }

    /** The name used by the service's APIs ({@code Active}, {@code SendDisabled}, ...). */
    public String serviceName() {
        return serviceName;
    }

    public boolean canSend() {
        return this == ACTIVE || this == RECEIVE_DISABLED;
    }

    public boolean canReceive() {
        return this == ACTIVE || this == SEND_DISABLED;
    }

    /**
     * The error for an operation this status forbids, worded as the service words it: a send to a
     * {@code SendDisabled} entity is refused "for Send operations", anything else on a disabled entity is refused
     * as "currently disabled". Both carry {@code com.microsoft:entity-disabled}, which the SDKs map to
     * MessagingEntityDisabled (Java: {@code ServiceBusFailureReason.MESSAGING_ENTITY_DISABLED}).
     */
    public BrokerException error(String entity, boolean send) {
        String text = send && this == SEND_DISABLED
                ? "Messaging entity '" + entity + "' is currently disabled for Send operations."
                : "Messaging entity '" + entity + "' is currently disabled.";
        return new BrokerException(ErrorKind.ENTITY_DISABLED, text + " Status: " + serviceName + ".");
    }

    /** Parses a service name case-insensitively. */
    public static EntityStatus parse(String name) {
        for (EntityStatus s : values()) {
            if (s.serviceName.equalsIgnoreCase(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown entity status '" + name + "' (expected Active, Disabled, "
                + "SendDisabled or ReceiveDisabled)");
    }
}
