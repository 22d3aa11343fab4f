package io.buslane.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

import io.buslane.common.time.TimeSpans;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Confined to the thread loading a file. A JSON object read the way the emulator reads Config.json: property names
 * match case-insensitively, JSON {@code null} counts as absent, and each value is type-checked as it is read, failing
 * with a {@link ConfigProblem} at the value's path. Remembers which properties were read so the rest can be reported
 * as unknown.
 */
final class JsonObjectView {

    /** A property as found: the key as written, its value and its path. */
    record Entry(String key, JsonNode value, String path) {
    }

    private final JsonNode node;
    private final String path;
    private final Map<String, String> keysByLowerCase = new LinkedHashMap<>();
    private final Set<String> read = new HashSet<>();

    private JsonObjectView(JsonNode node, String path) {
        this.node = node;
        this.path = path;
        for (String key : iterable(node.fieldNames())) {
            String previous = keysByLowerCase.putIfAbsent(lower(key), key);
            if (previous != null) {
                throw new ConfigProblem(JsonPaths.child(path, key), "duplicate property \"" + key
                        + "\": property names are case-insensitive and \"" + previous + "\" is also given");
            }
        }
    }

    /** Views {@code node}, which must be a JSON object; {@code what} names it in the error otherwise. */
    static JsonObjectView of(JsonNode node, String path, String what) {
        if (node == null || !node.isObject()) {
            throw new ConfigProblem(path, what + " must be a JSON object, was " + describe(node));
        }
        return new JsonObjectView(node, path);
    }

    String path() {
        return path;
    }

    /** The path of property {@code name} as written in the file, or as {@code name} if absent. */
    String pathOf(String name) {
        String key = keysByLowerCase.get(lower(name));
        return JsonPaths.child(path, key != null ? key : name);
    }

    /** Whether {@code name} is present (even as {@code null}); does not mark it read. */
    boolean has(String name) {
        return keysByLowerCase.containsKey(lower(name));
    }

    /** Marks {@code name} read without looking at it. */
    void ignore(String name) {
        read.add(lower(name));
    }

    /**
     * Finds a property by its name or one of its aliases, marking them read; {@code null} when absent or JSON
     * {@code null}. Giving both a name and its alias is an error.
     */
    Entry find(String name, String... aliases) {
        Entry found = null;
        List<String> names = new ArrayList<>(1 + aliases.length);
        names.add(name);
        names.addAll(List.of(aliases));
        for (String n : names) {
            read.add(lower(n));
            String key = keysByLowerCase.get(lower(n));
            if (key == null) {
                continue;
            }
            if (found != null) {
                throw new ConfigProblem(JsonPaths.child(path, key), "\"" + key + "\" and \"" + found.key()
                        + "\" mean the same property; give only one");
            }
            found = new Entry(key, node.get(key), JsonPaths.child(path, key));
        }
        return found == null || found.value().isNull() ? null : found;
    }

    Entry required(String name) {
        Entry e = find(name);
        if (e == null) {
            throw new ConfigProblem(pathOf(name), name + " is required");
        }
        return e;
    }

    String string(String name, String... aliases) {
        return asString(find(name, aliases));
    }

    String requiredString(String name) {
        return asString(required(name));
    }

    Boolean bool(String name, String... aliases) {
        Entry e = find(name, aliases);
        if (e == null) {
            return null;
        }
        if (!e.value().isBoolean()) {
            throw new ConfigProblem(e.path(), e.key() + " must be a boolean (true or false), was "
                    + describe(e.value()));
        }
        return e.value().booleanValue();
    }

    Long integer(String name, long min, long max) {
        Entry e = find(name);
        if (e == null) {
            return null;
        }
        JsonNode v = e.value();
        if (!v.isIntegralNumber()) {
            throw new ConfigProblem(e.path(), e.key() + " must be an integer, was " + describe(v));
        }
        if (!v.canConvertToLong() || v.longValue() < min || v.longValue() > max) {
            throw new ConfigProblem(e.path(), e.key() + " must be an integer between " + min + " and " + max
                    + ", was " + describe(v));
        }
        return v.longValue();
    }

    Duration duration(String name) {
        Entry e = find(name);
        if (e == null) {
            return null;
        }
        String text = asString(e);
        try {
            return TimeSpans.parse(text);
        } catch (IllegalArgumentException ex) {
            throw new ConfigProblem(e.path(), e.key() + " " + ex.getMessage(), ex);
        }
    }

    /** The object at {@code name}, or {@code null} when absent. */
    JsonObjectView object(String name) {
        Entry e = find(name);
        return e == null ? null : of(e.value(), e.path(), e.key());
    }

    JsonObjectView requiredObject(String name) {
        Entry e = required(name);
        return of(e.value(), e.path(), e.key());
    }

    /** The objects in the array at {@code name}, empty when absent; {@code what} names one element in errors. */
    List<JsonObjectView> objects(String name, String what) {
        Entry e = find(name);
        if (e == null) {
            return List.of();
        }
        if (!e.value().isArray()) {
            throw new ConfigProblem(e.path(), e.key() + " must be a JSON array, was " + describe(e.value()));
        }
        ArrayNode array = (ArrayNode) e.value();
        List<JsonObjectView> result = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            result.add(of(array.get(i), JsonPaths.index(e.path(), i), what));
        }
        return result;
    }

    /** Calls {@code onUnknown} with the path of every property not read. */
    void forEachUnread(Consumer<String> onUnknown) {
        for (String key : keysByLowerCase.values()) {
            if (!read.contains(lower(key))) {
                onUnknown.accept(JsonPaths.child(path, key));
            }
        }
    }

    private static String asString(Entry e) {
        if (e == null) {
            return null;
        }
        if (!e.value().isTextual()) {
            throw new ConfigProblem(e.path(), e.key() + " must be a string, was " + describe(e.value()));
        }
        return e.value().textValue();
    }

    /** Describes a value for messages: {@code the string "PT1M"}, {@code the number 3}, {@code an array}... */
    static String describe(JsonNode v) {
        if (v == null || v.isMissingNode()) {
            return "missing";
        }
        if (v.isNull()) {
            return "null";
        }
        if (v.isTextual()) {
            return "the string \"" + v.textValue() + "\"";
        }
        if (v.isNumber()) {
            return "the number " + v.asText();
        }
        if (v.isBoolean()) {
            return v.asText();
        }
        return v.isArray() ? "an array" : "an object";
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    private static <T> Iterable<T> iterable(Iterator<T> it) {
        return () -> it;
    }
}
