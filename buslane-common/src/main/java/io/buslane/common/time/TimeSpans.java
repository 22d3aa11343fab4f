package io.buslane.common.time;

import java.math.BigInteger;
import java.time.Duration;

/**
 * ISO-8601 / XML Schema durations as the service reads and writes its {@code TimeSpan}s (.NET's
 * {@code XmlConvert.ToTimeSpan} and {@code XmlConvert.ToString(TimeSpan)}): the one parser for the admin API's
 * descriptions and Config.json. Stateless.
 *
 * <p>Read as {@code XmlConvert} reads them: surrounding white space ignored; an optional {@code -}, {@code P}, then
 * any of {@code nY nM nD} in that order, then optionally {@code T} followed by any of {@code nH nM} and seconds
 * {@code n[.f]S} ({@code .5S} and {@code 5.S} included); at least one component, and a {@code T} needs one after it.
 * A year is 365 days and a month 30 days, twelve months making a year (so {@code P12M} is 365 days, {@code P13M}
 * 395); weeks ({@code nW}), a leading {@code +} and a {@code ,} as decimal separator are refused. Fractional seconds
 * are truncated to 100-nanosecond ticks. Buslane also accepts lower-case designators, which {@code XmlConvert}
 * refuses (Config.json is matched case-insensitively throughout).
 *
 * <p>Overflow: the value is computed exactly (no component or intermediate wraps). Where {@code XmlConvert} throws an
 * {@code OverflowException} (a component beyond Int32, a total beyond {@code TimeSpan.MaxValue}), a positive value
 * means "never": everything from one second below {@code TimeSpan.MaxValue} up reads as exactly {@link #MAX_VALUE}
 * (the Java SDK writes its "never" with millisecond precision, {@code P10675199DT2H48M5.477S}). A negative value
 * below {@code TimeSpan.MinValue} is refused as out of range.
 */
public final class TimeSpans {

    /** {@code TimeSpan.MaxValue}: 2^63 - 1 ticks of 100 ns, {@code P10675199DT2H48M5.4775807S}; "never". */
    public static final Duration MAX_VALUE = Duration.ofSeconds(922_337_203_685L, 477_580_700);

    private static final long TICKS_PER_SECOND = 10_000_000L;
    private static final int NANOS_PER_TICK = 100;
    private static final int TICK_DIGITS = 7;
    private static final long SECONDS_PER_DAY = 86_400;
    private static final BigInteger NEVER_FROM_TICKS = BigInteger.valueOf(Long.MAX_VALUE - TICKS_PER_SECOND);
    private static final BigInteger MIN_TICKS_MAGNITUDE = BigInteger.ONE.shiftLeft(63);
    private static final int MAX_DIGITS = 25;

    private TimeSpans() {
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException whose message reads after the name of the value ("must be an ISO-8601
     *                                  duration ..., was ...", "is out of range ...")
     */
    public static Duration parse(String text) {
        BigInteger ticks = new Parser(text).ticks();
        boolean negative = ticks.signum() < 0;
        BigInteger magnitude = ticks.abs();
        if (!negative && magnitude.compareTo(NEVER_FROM_TICKS) >= 0) {
            return MAX_VALUE;
        }
        if (negative && magnitude.compareTo(MIN_TICKS_MAGNITUDE) > 0) {
            throw new IllegalArgumentException("is out of range for a duration (below TimeSpan.MinValue), was \""
                    + text + "\"");
        }
        BigInteger[] secondsAndTicks = magnitude.divideAndRemainder(BigInteger.valueOf(TICKS_PER_SECOND));
        Duration d = Duration.ofSeconds(secondsAndTicks[0].longValueExact(),
                secondsAndTicks[1].longValueExact() * NANOS_PER_TICK);
        return negative ? d.negated() : d;
    }

    /**
     * Writes a duration as {@code XmlConvert.ToString(TimeSpan)} does: {@code PT1M}, {@code P14D}, {@code PT0S},
     * {@code PT1.5S}, {@code P10675199DT2H48M5.4775807S}; a negative one with a leading {@code -}.
     */
    public static String format(Duration d) {
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
                    b.append('.').append(String.format("%09d", nanos).replaceAll("0+$", ""));
                }
                b.append('S');
            }
        }
        return b.toString();
    }

    /** One pass over the text in {@code XsdDuration}'s order; the value in ticks, exact. */
    private static final class Parser {

        private final String original;
        private final String s;
        private int pos;
        private BigInteger value = BigInteger.ZERO;
        private int digits;
        private boolean any;

        Parser(String text) {
            this.original = text;
            this.s = text.strip();
        }

        BigInteger ticks() {
            boolean negative = next('-');
            require(next('P'));
            BigInteger[] date = {BigInteger.ZERO, BigInteger.ZERO, BigInteger.ZERO};
            BigInteger[] time = {BigInteger.ZERO, BigInteger.ZERO, BigInteger.ZERO};
            long fraction = 0;
            readDigits();
            date[0] = component('Y');
            date[1] = component('M');
            date[2] = component('D');
            if (pos < s.length() && upper(s.charAt(pos)) == 'T') {
                require(digits == 0);
                pos++;
                readDigits();
                require(pos < s.length());
                time[0] = component('H');
                time[1] = component('M');
                if (pos < s.length() && s.charAt(pos) == '.') {
                    pos++;
                    any = true;
                    time[2] = value;
                    fraction = fractionTicks();
                    require(pos < s.length() && upper(s.charAt(pos)) == 'S');
                    pos++;
                    digits = 0;
                } else {
                    time[2] = component('S');
                }
            }
            require(digits == 0 && pos == s.length() && any);
            BigInteger twelve = BigInteger.valueOf(12);
            BigInteger days = date[0].add(date[1].divide(twelve)).multiply(BigInteger.valueOf(365))
                    .add(date[1].mod(twelve).multiply(BigInteger.valueOf(30))).add(date[2]);
            BigInteger seconds = days.multiply(BigInteger.valueOf(24)).add(time[0]).multiply(BigInteger.valueOf(60))
                    .add(time[1]).multiply(BigInteger.valueOf(60)).add(time[2]);
            BigInteger ticks = seconds.multiply(BigInteger.valueOf(TICKS_PER_SECOND)).add(BigInteger.valueOf(fraction));
            return negative ? ticks.negate() : ticks;
        }

        /** The pending number when the designator follows, then the next number; zero when it does not. */
        private BigInteger component(char designator) {
            if (pos >= s.length() || upper(s.charAt(pos)) != designator) {
                return BigInteger.ZERO;
            }
            require(digits > 0);
            BigInteger v = value;
            any = true;
            pos++;
            readDigits();
            return v;
        }

        private void readDigits() {
            int start = pos;
            while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
                pos++;
            }
            digits = pos - start;
            int significant = start;
            while (significant < pos - 1 && s.charAt(significant) == '0') {
                significant++;
            }
            // any component of more than 25 digits is far beyond TimeSpan.MaxValue; not parsed (a long run of digits
            // would cost quadratic time), it reads as 10^25
            value = digits == 0 ? BigInteger.ZERO : pos - significant > MAX_DIGITS ? BigInteger.TEN.pow(MAX_DIGITS)
                    : new BigInteger(s.substring(significant, pos));
        }

        /** The digits after the decimal point, truncated to ticks (any number of digits, none meaning zero). */
        private long fractionTicks() {
            int start = pos;
            while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
                pos++;
            }
            String f = s.substring(start, Math.min(pos, start + TICK_DIGITS));
            StringBuilder padded = new StringBuilder(f);
            while (padded.length() < TICK_DIGITS) {
                padded.append('0');
            }
            return Long.parseLong(padded.toString());
        }

        private boolean next(char c) {
            if (pos < s.length() && upper(s.charAt(pos)) == c) {
                pos++;
                return true;
            }
            return false;
        }

        private static char upper(char c) {
            return c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
        }

        private void require(boolean ok) {
            if (!ok) {
                throw new IllegalArgumentException("must be an ISO-8601 duration such as PT30S, PT5M, PT1H, P14D or "
                        + "P10675199DT2H48M5.4775807S, was \"" + original + "\"");
            }
        }
    }
}
