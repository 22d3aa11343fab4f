package io.buslane.management.console;

import io.buslane.engine.message.Message;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Section;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Renders a message body for display: text as text, JSON pretty-printed, anything else as hex. A body stored as
 * verbatim AMQP sections (what the AMQP front end keeps) is decoded with proton-j first: a {@code data} section
 * yields its bytes, an {@code amqp-value} its value, an {@code amqp-sequence} its list.
 */
final class BodyView {

    /** Bodies above this are cut for display (the rest is reported as truncated). */
    static final int MAX_SHOWN_BYTES = 64 * 1024;

    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private BodyView() {
    }

    /**
     * Fills {@code out} with {@code section} (data, value or sequence), {@code kind} (empty, text, json or
     * binary), {@code size}, {@code text} (for text and json) or {@code hex} (for binary) and {@code truncated}.
     */
    static void render(int bodyFormat, byte[] body, String contentType, ObjectNode out) {
        String section = "data";
        byte[] bytes = body;
        if (bodyFormat == Message.BODY_AMQP_SECTIONS) {
            Section decoded = decodeBody(body);
            if (decoded instanceof Data d) {
                bytes = d.getValue() == null ? new byte[0] : d.getValue().getArray() == null ? new byte[0]
                        : copy(d.getValue());
            } else if (decoded instanceof AmqpValue v) {
                section = "value";
                Object value = v.getValue();
                if (value instanceof Binary b) {
                    bytes = copy(b);
                } else {
                    out.put("section", section);
                    out.put("size", body.length);
                    String text = String.valueOf(value);
                    if (value instanceof String s && looksLikeJson(contentType, s)) {
                        String pretty = prettyJson(s);
                        if (pretty != null) {
                            putText(out, "json", pretty);
                            return;
                        }
                    }
                    putText(out, "text", text);
                    return;
                }
            } else if (decoded instanceof AmqpSequence seq) {
                out.put("section", "sequence");
                out.put("size", body.length);
                putText(out, "text", String.valueOf(seq.getValue()));
                return;
            } else {
                section = "raw";
            }
        }
        out.put("section", section);
        out.put("size", bytes.length);
        if (bytes.length == 0) {
            out.put("kind", "empty");
            out.put("text", "");
            return;
        }
        String text = utf8(bytes);
        if (text != null && printable(text)) {
            if (looksLikeJson(contentType, text)) {
                String pretty = prettyJson(text);
                if (pretty != null) {
                    putText(out, "json", pretty);
                    return;
                }
            }
            putText(out, "text", text);
            return;
        }
        out.put("kind", "binary");
        int shown = Math.min(bytes.length, MAX_SHOWN_BYTES);
        out.put("hex", hexDump(bytes, shown));
        out.put("truncated", shown < bytes.length);
    }

    private static void putText(ObjectNode out, String kind, String text) {
        out.put("kind", kind);
        boolean cut = text.length() > MAX_SHOWN_BYTES;
        out.put("text", cut ? text.substring(0, MAX_SHOWN_BYTES) : text);
        out.put("truncated", cut);
    }

    private static byte[] copy(Binary b) {
        byte[] out = new byte[b.getLength()];
        System.arraycopy(b.getArray(), b.getArrayOffset(), out, 0, b.getLength());
        return out;
    }

    /** The single body section of verbatim AMQP sections, or null when they are not exactly one body section. */
    static Section decodeBody(byte[] sections) {
        try {
            // CHECKSTYLE:FQN the engine's Message is imported
            org.apache.qpid.proton.message.Message m = org.apache.qpid.proton.message.Message.Factory.create();
            m.decode(sections, 0, sections.length);
            return m.getBody();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
                return false;
            }
        }
        return true;
    }

    private static boolean looksLikeJson(String contentType, String text) {
        if (contentType != null && contentType.toLowerCase(Locale.ROOT).contains("json")) {
            return true;
        }
        String t = text.strip();
        return (t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"));
    }

    private static String prettyJson(String text) {
        try {
            JsonNode node = PRETTY.readTree(text);
            return node == null || node.isMissingNode() ? null : PRETTY.writeValueAsString(node);
        } catch (Exception e) {
            return null;
        }
    }

    /** Lines of 16 bytes: offset, hex bytes, printable ASCII. */
    static String hexDump(byte[] bytes, int length) {
        HexFormat hex = HexFormat.of();
        StringBuilder sb = new StringBuilder(length * 4 + 16);
        for (int off = 0; off < length; off += 16) {
            int end = Math.min(length, off + 16);
            sb.append(String.format("%08x  ", off));
            for (int i = off; i < off + 16; i++) {
                if (i < end) {
                    sb.append(hex.toHexDigits(bytes[i])).append(' ');
                } else {
                    sb.append("   ");
                }
                if (i == off + 7) {
                    sb.append(' ');
                }
            }
            sb.append(" |");
            for (int i = off; i < end; i++) {
                int c = bytes[i] & 0xff;
                sb.append(c >= 0x20 && c < 0x7f ? (char) c : '.');
            }
            sb.append("|\n");
        }
        return sb.toString();
    }
}
