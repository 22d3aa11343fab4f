package io.buslane.management.atom;

import java.time.Instant;

/** Timestamps as the service writes them: ISO-8601 in UTC with a {@code Z}. */
final class XmlTimes {

    /** What the service reports for "never" (e.g. an entity that was never accessed). */
    static final String NEVER = "0001-01-01T00:00:00Z";

    private XmlTimes() {
    }

    static String format(long epochMillis) {
        return Instant.ofEpochMilli(epochMillis).toString();
    }
}
