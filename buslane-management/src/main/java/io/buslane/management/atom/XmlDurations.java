package io.buslane.management.atom;

import io.buslane.engine.entity.Limits;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ISO-8601 durations as .NET's {@code XmlConvert} writes {@code TimeSpan}s: {@code PT1M}, {@code P14D},
 * {@code PT0S}, and {@code P10675199DT2H48M5.4775807S} for {@code TimeSpan.MaxValue}. Reading accepts what every
 * SDK writes (Java's {@code PT256204778H48M5.4775807S} included) plus years, months and weeks (365, 30 and 7 days,
 * as {@code XmlConvert} reads them). Values from a second below {@code TimeSpan.MaxValue} up mean "never" and read
 * as exactly {@code TimeSpan.MaxValue}: the Java SDK writes its "never" with millisecond precision
 * ({@code ...5.477S}), and larger values are clamped.
 */
final class XmlDurations {

    private static final long SECONDS_PER_DAY = 86_400;
    /** From here up a duration means "never". */
    private static final Duration NEVER_THRESHOLD = Limits.MAX_DURATION.minusSeconds(1);
    private static final Pattern CALENDAR = Pattern.compile(
            "(-)?P(?:(\\d+)Y)?(?:(\\d+)M)?(?:(\\d+)W)?(?:(\\d+)D)?"
                    + "(?:T(?:(\\d+)H)?(?:(\\d+)M)?(?:(\\d+(?:[.,]\\d+)?)S)?)?", Pattern.CASE_INSENSITIVE);

    private XmlDurations() {
    }

    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long seconds = d.getSeconds();
        int nanos = d.getNano();
        long days = seconds / SECONDS_PER_DAY;
        long rest = seconds % SECONDS_PER_DAY;
        long hours = rest / 3600;
        long minutes = rest % 3600 / 60;
        long secs = rest % 60;
        StringBuilder b = new StringBuilder("P");
        if (days > 0) {
            b.append(days).append('D');
        }
        if (days == 0 || hours > 0 || minutes > 0 || secs > 0 || nanos > 0) {
            b.append('T');
            if (hours > 0) {
                b.append(hours).append('H');
            }
            if (minutes > 0) {
                b.append(minutes).append('M');
            }
            if (secs > 0 || nanos > 0 || (hours == 0 && minutes == 0)) {
                b.append(secs);
                if (nanos > 0) {
                    String fraction = String.format("%09d", nanos).replaceAll("0+$", "");
                    b.append('.').append(fraction);
                }
                b.append('S');
            }
        }
        return b.toString();
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException naming the element when the text is not an ISO-8601 duration
     */
    static Duration parse(String text, String element) {
        String t = text.trim();
        Duration d;
        try {
            d = Duration.parse(t);
        } catch (DateTimeParseException e) {
            d = parseCalendar(t, text, element);
        }
        return d.compareTo(NEVER_THRESHOLD) >= 0 ? Limits.MAX_DURATION : d;
    }

    private static Duration parseCalendar(String t, String original, String element) {
        Matcher m = CALENDAR.matcher(t);
        if (!m.matches() || t.endsWith("T") || t.equalsIgnoreCase("P") || t.equalsIgnoreCase("-P")) {
            throw new IllegalArgumentException("The value '" + original + "' of " + element
                    + " is not a valid ISO-8601 duration (for example PT1M or P14D).");
        }
        try {
            long days = number(m.group(2)) * 365 + number(m.group(3)) * 30 + number(m.group(4)) * 7
                    + number(m.group(5));
            Duration d = Duration.ofDays(days).plusHours(number(m.group(6))).plusMinutes(number(m.group(7)));
            if (m.group(8) != null) {
                BigDecimal s = new BigDecimal(m.group(8).replace(',', '.'));
                d = d.plusSeconds(s.longValue()).plusNanos(s.remainder(BigDecimal.ONE).movePointRight(9).longValue());
            }
            return m.group(1) != null ? d.negated() : d;
        } catch (ArithmeticException e) {
            return Limits.MAX_DURATION;
        }
    }

    private static long number(String group) {
        return group == null ? 0 : Math.multiplyExact(Long.parseLong(group), 1L);
    }
}
