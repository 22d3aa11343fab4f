package io.buslane.engine.entity;

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
