package io.buslane.management.atom;

import io.buslane.engine.message.Decimal;
import org.w3c.dom.Element;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.UUID;

/**
 * Typed values of correlation-filter properties ({@code KeyValueOfstringanyType/Value}), typed by {@code xsi:type}
 * in the XML Schema namespace as .NET's data contracts write them ({@code d6p1:string}, {@code l28:int}, ...).
 * Read: string, int, long, short, byte, boolean, double, float, decimal, dateTime and guid become Java values the
 * engine can store; other types (duration included) are kept as their text. Written back with the same types.
 */
final class XmlValues {

    private XmlValues() {
    }

    static Object parse(Element value, String key) {
        String text = value.getTextContent();
        String type = AtomReader.xsiType(value);
        if (type == null) {
            return text;
        }
        String t = text.trim();
        try {
            return switch (type) {
                case "int" -> Integer.parseInt(t);
                case "long" -> Long.parseLong(t);
                case "short" -> Short.parseShort(t);
                case "byte" -> Byte.parseByte(t);
                case "boolean" -> Fields.parseBoolean(t, "the property '" + key + "'");
                case "double", "decimal" -> Double.parseDouble(t);
                case "float" -> Float.parseFloat(t);
                case "dateTime" -> parseDateTime(t);
                case "guid" -> UUID.fromString(t);
                default -> text;
            };
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalArgumentException("The value '" + text + "' of the correlation filter property or SQL "
                    + "parameter '" + key + "' is not a valid " + type + ".");
        }
    }

    private static Instant parseDateTime(String t) {
        try {
            return OffsetDateTime.parse(t).toInstant();
        } catch (DateTimeParseException e) {
            return LocalDateTime.parse(t).toInstant(ZoneOffset.UTC);
        }
    }

    /** Writes {@code <Value i:type="d6p1:TYPE" xmlns:d6p1="...">text</Value>} ({@code i} is declared above). */
    static void write(XmlOut out, Object value) {
        String type;
        String namespace = Xmlns.XSD;
        String text = String.valueOf(value);
        if (value instanceof Integer) {
            type = "int";
        } else if (value instanceof Long) {
            type = "long";
        } else if (value instanceof Short) {
            type = "short";
        } else if (value instanceof Byte) {
            type = "byte";
        } else if (value instanceof Boolean) {
            type = "boolean";
        } else if (value instanceof Double) {
            type = "double";
        } else if (value instanceof Float) {
            type = "float";
        } else if (value instanceof BigDecimal d) {
            type = "decimal";
            text = d.toPlainString();
        } else if (value instanceof Decimal d) {
            // an AMQP decimal (e.g. from a $management add-rule); xsd:decimal has no infinities or NaN
            type = d.isFinite() ? "decimal" : "double";
            text = d.isFinite() ? d.toBigDecimal().toPlainString()
                    : d.toNumber().doubleValue() > 0 ? "INF" : d.toNumber().doubleValue() < 0 ? "-INF" : "NaN";
        } else if (value instanceof Instant) {
            type = "dateTime";
        } else if (value instanceof UUID) {
            type = "guid";
            namespace = Xmlns.SERIALIZATION;
        } else {
            type = "string";
        }
        out.open("Value").namespace("d6p1", namespace).attribute("i", Xmlns.XSI, "type", "d6p1:" + type)
                .text(text).close();
    }
}
