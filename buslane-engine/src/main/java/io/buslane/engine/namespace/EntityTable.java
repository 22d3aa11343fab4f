package io.buslane.engine.namespace;

import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One kind of entity by name (queues, or topics): names are case-insensitive, the table is published as an
 * immutable snapshot that any thread reads without locking, and changed copy-on-write under the namespace's lock.
 */
final class EntityTable<E> {

    private volatile Map<String, E> byName = Map.of();

    static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }

    E get(String name) {
        return byName.get(key(name));
    }

    boolean contains(String name) {
        return byName.containsKey(key(name));
    }

    Collection<E> values() {
        return byName.values();
    }

    int size() {
        return byName.size();
    }

    void put(String name, E entity) {
        Map<String, E> copy = new HashMap<>(byName);
        copy.put(key(name), entity);
        byName = Map.copyOf(copy);
    }

    void remove(String name) {
        Map<String, E> copy = new HashMap<>(byName);
        copy.remove(key(name));
        byName = Map.copyOf(copy);
    }

    /** A mutable copy to change several entries at once, published by {@link #publish}. */
    Map<String, E> copy() {
        return new HashMap<>(byName);
    }

    void publish(Map<String, E> entries) {
        byName = Map.copyOf(entries);
    }

    /** Publishes the same entries again: a reader that reads the table after this sees what changed inside them. */
    void republish() {
        byName = Map.copyOf(byName);
    }
}
