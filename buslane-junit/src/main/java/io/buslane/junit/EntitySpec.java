package io.buslane.junit;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.Objects;

/**
 * What the entity builders share: a name and the {@code Properties} object of the entity's Config.json entry, in the
 * emulator's schema (docs/usage.md). Not thread-safe; used while a broker is being configured.
 *
 * @param <S> the builder's own type, returned by each setter
 */
public abstract class EntitySpec<S extends EntitySpec<S>> {

    private final String name;
    private final ObjectNode properties = JsonNodeFactory.instance.objectNode();

    EntitySpec(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    /** The entity's name. */
    public String name() {
        return name;
    }

    /**
     * Sets any property of the entity's Config.json {@code Properties} object, for those without a typed setter
     * (e.g. {@code "Status", "SendDisabled"} or {@code "UserMetadata", "x"}).
     *
     * @param property the property's name in the emulator's schema (or one of Buslane's extensions)
     * @param value    a String, Boolean, Number or {@link Duration} (written as ISO-8601)
     */
    public S property(String property, Object value) {
        Objects.requireNonNull(property, "property");
        if (value instanceof Boolean b) {
            properties.put(property, b);
        } else if (value instanceof Integer i) {
            properties.put(property, i);
        } else if (value instanceof Long l) {
            properties.put(property, l);
        } else if (value instanceof Number n) {
            properties.put(property, n.doubleValue());
        } else if (value instanceof Duration || value instanceof String) {
            properties.put(property, value.toString());
        } else {
            throw new IllegalArgumentException("A property value is a String, Boolean, Number or Duration, was "
                    + (value == null ? "null" : value.getClass().getName()));
        }
        return self();
    }

    /** The time-to-live of a message sent without one ({@code DefaultMessageTimeToLive}). */
    public S defaultMessageTimeToLive(Duration ttl) {
        return property("DefaultMessageTimeToLive", ttl);
    }

    @SuppressWarnings("unchecked")
    final S self() {
        return (S) this;
    }

    /** The entry {@code {"Name": ..., "Properties": {...}}}, plus what a subclass adds. */
    ObjectNode toJson() {
        ObjectNode entry = JsonNodeFactory.instance.objectNode();
        entry.put("Name", name);
        if (!properties.isEmpty()) {
            entry.set("Properties", properties.deepCopy());
        }
        return entry;
    }
}
