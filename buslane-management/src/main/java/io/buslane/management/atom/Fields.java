package io.buslane.management.atom;

import org.w3c.dom.Element;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Typed access to the child elements of one description: each {@code ifX} method calls its consumer only when the
 * element is present (and not {@code xsi:nil}), so that absent elements keep the builder's value. A malformed value
 * fails with an IllegalArgumentException naming the element.
 */
final class Fields {

    private final Element parent;

    Fields(Element parent) {
        this.parent = parent;
    }

    /** The element's text, or null when absent or nil. */
    String text(String name) {
        Element e = AtomReader.child(parent, name);
        return e == null || AtomReader.isNil(e) ? null : e.getTextContent();
    }

    void ifText(String name, Consumer<String> to) {
        String v = text(name);
        if (v != null) {
            to.accept(v);
        }
    }

    void ifDuration(String name, Consumer<Duration> to) {
        ifText(name, v -> to.accept(XmlDurations.parse(v, name)));
    }

    void ifBoolean(String name, Consumer<Boolean> to) {
        ifText(name, v -> to.accept(parseBoolean(v, name)));
    }

    void ifLong(String name, Consumer<Long> to) {
        ifText(name, v -> to.accept(parseLong(v, name)));
    }

    void ifInt(String name, Consumer<Integer> to) {
        ifText(name, v -> {
            long l = parseLong(v, name);
            if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("The value '" + v + "' of " + name + " is out of range.");
            }
            to.accept((int) l);
        });
    }

    static boolean parseBoolean(String v, String name) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw new IllegalArgumentException("The value '" + v + "' of " + name
                    + " is not a boolean (true or false).");
        };
    }

    static long parseLong(String v, String name) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("The value '" + v + "' of " + name + " is not an integer.");
        }
    }
}
