package io.buslane.engine.message;

/**
 * A described value (descriptor plus value), e.g. Service Bus's {@code com.microsoft:datetime-offset} application
 * property values. Stored and forwarded unchanged.
 */
public record Described(Object descriptor, Object value) {
}
