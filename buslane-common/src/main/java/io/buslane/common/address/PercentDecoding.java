package io.buslane.common.address;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;

/**
 * One-pass URL decoding, {@code %XX} sequences as bytes read as UTF-8, for the readers of addresses and tokens: the
 * lenient form ({@link #decode}) for SAS token fields, the strict one ({@link #decodeStrict}) for HTTP paths.
 */
public final class PercentDecoding {

    private PercentDecoding() {
    }

    /**
     * Decodes {@code text} once, leniently: a {@code %} not followed by two hex digits stays as it is, and bytes that
     * are not UTF-8 become replacement characters. Never throws.
     *
     * @param plusAsSpace whether {@code +} means a space (form encoding: Java {@code URLEncoder}, Python
     *                    {@code quote_plus}, .NET {@code WebUtility.UrlEncode})
     */
    public static String decode(String text, boolean plusAsSpace) {
        return decode(text, plusAsSpace, false);
    }

    /**
     * Decodes {@code text} once, strictly; {@code +} stays {@code +}.
     *
     * @throws IllegalArgumentException saying what is wrong: a {@code %} without two hex digits, or bytes that are
     *                                  not UTF-8
     */
    public static String decodeStrict(String text) {
        return decode(text, false, true);
    }

    private static String decode(String text, boolean plusAsSpace, boolean strict) {
        if (text.indexOf('%') < 0 && !(plusAsSpace && text.indexOf('+') >= 0)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        ByteArrayOutputStream pending = new ByteArrayOutputStream();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '%') {
                if (i + 2 < text.length() && hex(text.charAt(i + 1)) >= 0 && hex(text.charAt(i + 2)) >= 0) {
                    pending.write(hex(text.charAt(i + 1)) << 4 | hex(text.charAt(i + 2)));
                    i += 3;
                    continue;
                }
                if (strict) {
                    throw new IllegalArgumentException("it has an invalid percent-encoding");
                }
            }
            flush(pending, out, strict);
            out.append(plusAsSpace && c == '+' ? ' ' : c);
            i++;
        }
        flush(pending, out, strict);
        return out.toString();
    }

    private static void flush(ByteArrayOutputStream pending, StringBuilder out, boolean strict) {
        if (pending.size() == 0) {
            return;
        }
        if (strict) {
            try {
                out.append(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(pending.toByteArray())));
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("it has percent-encoded bytes that are not UTF-8");
            }
        } else {
            out.append(new String(pending.toByteArray(), StandardCharsets.UTF_8));
        }
        pending.reset();
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
