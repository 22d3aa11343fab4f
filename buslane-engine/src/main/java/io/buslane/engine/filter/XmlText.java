package io.buslane.engine.filter;

/**
 * The characters XML 1.0 cannot carry, not even as character references: U+0000..U+0008, U+000B, U+000C,
 * U+000E..U+001F, U+FFFE, U+FFFF and surrogates that are not part of a pair. The service keeps rules and descriptions
 * in XML, so it refuses them in rule text at creation; the admin API's writer never lets one into a document.
 * Stateless.
 */
public final class XmlText {

    private XmlText() {
    }

    /** The index of the first character XML 1.0 does not allow, or -1 when there is none (or {@code s} is null). */
    public static int firstForbidden(String s) {
        if (s == null) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (forbidden(c)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether this UTF-16 unit, taken on its own (a surrogate counts as unpaired), is not allowed in XML 1.0. */
    public static boolean forbidden(char c) {
        return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF
                || Character.isSurrogate(c);
    }

    /** {@code U+0001}: the character at {@code index}, for messages. */
    public static String describe(String s, int index) {
        return String.format("U+%04X", (int) s.charAt(index));
    }

    /**
     * Refuses text with a character XML 1.0 does not allow.
     *
     * @param what names the text in the message ("the SqlExpression of the filter")
     * @throws IllegalArgumentException naming the text, the character and its position
     */
    public static void require(String s, String what) {
        int i = firstForbidden(s);
        if (i >= 0) {
            throw new IllegalArgumentException(what + " contains " + describe(s, i) + " at position " + i
                    + ", a character XML 1.0 does not allow (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE, "
                    + "U+FFFF or an unpaired surrogate).");
        }
    }
}
