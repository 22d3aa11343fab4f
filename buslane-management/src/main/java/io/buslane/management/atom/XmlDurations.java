package io.buslane.management.atom;

import io.buslane.common.time.TimeSpans;

import java.time.Duration;

/**
 * The durations of descriptions, read and written by the one parser the broker has ({@link TimeSpans}: .NET's
 * {@code XmlConvert} rules, "never" from one second below {@code TimeSpan.MaxValue} up); this adds the element's
 * name to a refusal.
 */
final class XmlDurations {

    private XmlDurations() {
    }

    static String format(Duration d) {
        return TimeSpans.format(d);
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException naming the element when the text is not an ISO-8601 duration
     */
    static Duration parse(String text, String element) {
        try {
            return TimeSpans.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("The value '" + text + "' of " + element
                    + " is not a valid ISO-8601 duration (for example PT1M or P14D): it " + e.getMessage() + ".");
        }
    }
}
