package io.buslane.common.auth;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Lenient one-pass URL decoding: {@code %XX} sequences become bytes read as UTF-8; a {@code %} not followed by two
 * hex digits stays as it is. Never throws.
 */
final class PercentDecoding {

    private PercentDecoding() {
    }

    /**
     * Decodes {@code text} once.
     *
     * @param plusAsSpace whether {@code +} means a space (form encoding: Java {@code URLEncoder}, Python
     *                    {@code quote_plus}, .NET {@code WebUtility.UrlEncode})
     */
    static String decode(String text, boolean plusAsSpace) {
        if (text.indexOf('%') < 0 && !(plusAsSpace && text.indexOf('+') >= 0)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        ByteArrayOutputStream pending = new ByteArrayOutputStream();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '%' && i + 2 < text.length()
                    && hex(text.charAt(i + 1)) >= 0 && hex(text.charAt(i + 2)) >= 0) {
                pending.write(hex(text.charAt(i + 1)) << 4 | hex(text.charAt(i + 2)));
                i += 3;
                continue;
            }
            flush(pending, out);
            out.append(plusAsSpace && c == '+' ? ' ' : c);
            i++;
        }
        flush(pending, out);
        return out.toString();
    }

    private static void flush(ByteArrayOutputStream pending, StringBuilder out) {
        if (pending.size() > 0) {
            out.append(new String(pending.toByteArray(), StandardCharsets.UTF_8));
            pending.reset();
        }
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
