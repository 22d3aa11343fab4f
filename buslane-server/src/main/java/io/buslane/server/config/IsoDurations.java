package io.buslane.server.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Stateless. Parses the ISO-8601 / XML Schema durations Config.json uses ({@code PT1M}, {@code PT20S},
 * {@code P10675199DT2H48M5.4775807S}) the way .NET's {@code XmlConvert.ToTimeSpan} reads them, since that is what
 * the emulator and Aspire write.
 *
 * <p>Accepted form: optional {@code -}, {@code P}, then any of {@code nY nM nD}, then optionally {@code T} with any of
 * {@code nH nM n[.fff]S}; at least one component. Like .NET, a year counts 365 days and a month 30 days (twelve months
 * make a year), and fractional seconds are truncated to 100-nanosecond ticks, so the .NET maximum
 * {@code P10675199DT2H48M5.4775807S} is exactly {@code Limits.MAX_DURATION}. Designators are accepted in either case
 * and surrounding blanks are ignored. Weeks ({@code nW}) are not accepted, as in .NET.
 */
final class IsoDurations {

    private static final Pattern ISO = Pattern.compile(
            "([-+]?)P(?:(\\d+)Y)?(?:(\\d+)M)?(?:(\\d+)D)?(?:(T)(?:(\\d+)H)?(?:(\\d+)M)?(?:(\\d+)(?:\\.(\\d*))?S)?)?",
            Pattern.CASE_INSENSITIVE);

    private static final int DAYS_PER_YEAR = 365;
    private static final int DAYS_PER_MONTH = 30;
    private static final int TICK_DIGITS = 7;
    private static final int NANOS_PER_TICK = 100;

    private IsoDurations() {
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException with a message naming the expected format when {@code text} is not one
     */
    static Duration parse(String text) {
        String s = text.trim();
        Matcher m = ISO.matcher(s);
        if (!m.matches() || !hasComponent(m) || (m.group(5) != null && !hasTimeComponent(m))) {
            throw new IllegalArgumentException("must be an ISO-8601 duration such as PT30S, PT5M, PT1H, P14D or "
                    + "P10675199DT2H48M5.4775807S, was \"" + text + "\"");
        }
        try {
            long days = Math.addExact(Math.multiplyExact(number(m, 2), DAYS_PER_YEAR), monthsToDays(number(m, 3)));
            days = Math.addExact(days, number(m, 4));
            Duration d = Duration.ofDays(days)
                    .plusHours(number(m, 6))
                    .plusMinutes(number(m, 7))
                    .plusSeconds(number(m, 8))
                    .plusNanos(fractionNanos(m.group(9)));
            return "-".equals(m.group(1)) ? d.negated() : d;
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("is out of range for a duration, was \"" + text + "\"", e);
        }
    }

    private static boolean hasComponent(Matcher m) {
        for (int g : new int[] {2, 3, 4, 6, 7, 8}) {
            if (m.group(g) != null) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasTimeComponent(Matcher m) {
        return m.group(6) != null || m.group(7) != null || m.group(8) != null;
    }

    private static long number(Matcher m, int group) {
        String g = m.group(group);
        return g == null ? 0 : Long.parseLong(g);
    }

    private static long monthsToDays(long months) {
        return Math.addExact(Math.multiplyExact(months / 12, DAYS_PER_YEAR), (months % 12) * DAYS_PER_MONTH);
    }

    private static long fractionNanos(String digits) {
        if (digits == null || digits.isEmpty()) {
            return 0;
        }
        String ticks = digits.length() > TICK_DIGITS ? digits.substring(0, TICK_DIGITS) : digits;
        StringBuilder padded = new StringBuilder(ticks);
        while (padded.length() < TICK_DIGITS) {
            padded.append('0');
        }
        return Long.parseLong(padded.toString()) * NANOS_PER_TICK;
    }
}
