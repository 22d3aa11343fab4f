package io.buslane.management.rest;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.vertx.core.MultiMap;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The runtime REST API's message mapping: the {@code BrokerProperties} JSON header (or, in a batch, object), user
 * properties as individual HTTP headers, and RFC 1123 dates.
 *
 * <p>User property header values follow the service's convention: a string is enclosed in double quotes
 * ({@code Color: "Red"}), a date is a quoted RFC 1123 date ({@code "Wed, 02 Jul 2014 01:32:27 GMT"}), numbers and
 * {@code true}/{@code false} are bare. Anything else given bare is taken as a string.
 */
final class RestProperties {

    /** RFC 1123 with a two-digit day, as the service writes it. */
    static final DateTimeFormatter RFC1123_OUT = DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ENGLISH).withZone(ZoneOffset.UTC);

    /** TimeSpan.MaxValue in seconds: what the service shows for a message that never expires. */
    static final BigDecimal MAX_TIME_TO_LIVE_SECONDS = new BigDecimal("922337203685.4775807");

    /** Request headers that are HTTP's or the API's own, never user properties (lower case). */
    private static final Set<String> RESERVED_HEADERS = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);

    static {
        RESERVED_HEADERS.addAll(Set.of("Authorization", "BrokerProperties", "Content-Type", "Content-Length",
                "Content-Encoding", "Content-Language", "Content-MD5", "Host", "Accept", "Accept-Encoding",
                "Accept-Charset", "Accept-Language", "Connection", "Keep-Alive", "Expect", "Transfer-Encoding",
                "TE", "Trailer", "Upgrade", "User-Agent", "Date", "Cookie", "Origin", "Referer", "Cache-Control",
                "Pragma", "Via", "Forwarded", "Proxy-Authorization", "Proxy-Connection", "If-Match",
                "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "Range", "HTTP2-Settings",
                "ServiceBusSupplementaryAuthorization", "ServiceBusDlqSupplementaryAuthorization"));
    }

    private RestProperties() {
    }

    static String formatDate(long epochMs) {
        return RFC1123_OUT.format(Instant.ofEpochMilli(epochMs));
    }

    /** Parses an RFC 1123 date ({@code Sun, 06 Nov 1994 08:49:37 GMT}, single-digit days too). */
    static long parseDate(String text) {
        return ZonedDateTime.parse(text.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
    }

    /** Whether a request header is a user property. */
    static boolean isUserPropertyHeader(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return !RESERVED_HEADERS.contains(name) && !lower.startsWith("x-ms-") && !lower.startsWith("x-forwarded-")
                && !lower.startsWith(":") && !lower.startsWith("sec-");
    }

    /** The user properties carried by a request's headers. */
    static Map<String, Object> userProperties(MultiMap headers) {
        Map<String, Object> props = new LinkedHashMap<>();
        for (Map.Entry<String, String> h : headers) {
            if (isUserPropertyHeader(h.getKey()) && !props.containsKey(h.getKey())) {
                props.put(h.getKey(), parseHeaderValue(h.getValue()));
            }
        }
        return props;
    }

    /** A user property value from its header text. */
    static Object parseHeaderValue(String raw) {
        String v = raw.trim();
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
            String inner = v.substring(1, v.length() - 1);
            if (looksLikeRfc1123(inner)) {
                try {
                    return Instant.ofEpochMilli(parseDate(inner));
                } catch (DateTimeParseException e) {
                    return inner;
                }
            }
            return inner;
        }
        if (v.equalsIgnoreCase("true")) {
            return Boolean.TRUE;
        }
        if (v.equalsIgnoreCase("false")) {
            return Boolean.FALSE;
        }
        if (v.matches("[+-]?\\d{1,19}")) {
            try {
                long l = Long.parseLong(v);
                return l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Object) (int) l : (Object) l;
            } catch (NumberFormatException e) {
                // too long for a long: a double below
            }
        }
        if (v.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?")) {
            return Double.parseDouble(v);
        }
        return v;
    }

    private static boolean looksLikeRfc1123(String s) {
        return s.length() >= 25 && s.length() <= 31 && s.endsWith(" GMT") && s.indexOf(',') == 3;
    }

    /** A user property value as header text. */
    static String formatHeaderValue(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Boolean || value instanceof Integer || value instanceof Long || value instanceof Short
                || value instanceof Byte) {
            return value.toString();
        }
        if (value instanceof Double d) {
            return d.isNaN() || d.isInfinite() ? quote(d.toString()) : d.toString();
        }
        if (value instanceof Float f) {
            return f.isNaN() || f.isInfinite() ? quote(f.toString()) : f.toString();
        }
        if (value instanceof Decimal d) {
            return d.isFinite() ? d.toBigDecimal().toPlainString() : quote(d.toString());
        }
        if (value instanceof Instant i) {
            return quote(RFC1123_OUT.format(i));
        }
        if (value instanceof byte[] bytes) {
            return quote(Base64.getEncoder().encodeToString(bytes));
        }
        return quote(String.valueOf(value));
    }

    private static String quote(String s) {
        // a header value cannot carry line breaks
        return '"' + s.replace('\r', ' ').replace('\n', ' ') + '"';
    }

    /** A user property value from a batch's {@code UserProperties} JSON. */
    static Object fromJson(Object value) {
        if (value instanceof Number n && !(value instanceof Double) && !(value instanceof Float)
                && !(value instanceof BigDecimal)) {
            long l = n.longValue();
            return l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE ? (Object) (int) l : (Object) l;
        }
        if (value instanceof Number n) {
            return n.doubleValue();
        }
        if (value instanceof String || value instanceof Boolean) {
            return value;
        }
        throw new IllegalArgumentException("User property values must be strings, numbers or booleans.");
    }

    /** Parses a {@code BrokerProperties} header; null or blank gives an empty object. */
    static JsonObject parseBrokerProperties(String header) {
        if (header == null || header.isBlank()) {
            return new JsonObject();
        }
        try {
            return new JsonObject(header);
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException("The BrokerProperties header is not a valid JSON object.");
        }
    }

    /**
     * Applies the settable broker properties to a message builder. Unknown properties are ignored, as on the
     * service; broker-assigned ones (SequenceNumber, LockToken, ...) are ignored too.
     */
    static void apply(JsonObject bp, Message.Builder b) {
        for (String key : bp.fieldNames()) {
            Object v = bp.getValue(key);
            if (v == null) {
                continue;
            }
            switch (key) {
                case "MessageId" -> b.messageId(string(key, v));
                case "CorrelationId" -> b.correlationId(string(key, v));
                case "SessionId" -> b.sessionId(string(key, v));
                case "Label" -> b.subject(string(key, v));
                case "ReplyTo" -> b.replyTo(string(key, v));
                case "ReplyToSessionId" -> b.replyToSessionId(string(key, v));
                case "To" -> b.to(string(key, v));
                case "PartitionKey" -> b.partitionKey(string(key, v));
                case "ViaPartitionKey" -> b.viaPartitionKey(string(key, v));
                case "TimeToLive" -> b.timeToLiveMs(timeToLiveMs(v));
                case "ScheduledEnqueueTimeUtc" -> {
                    try {
                        b.scheduledEnqueueTimeMs(parseDate(string(key, v)));
                    } catch (DateTimeParseException e) {
                        throw new IllegalArgumentException("The BrokerProperties value ScheduledEnqueueTimeUtc '"
                                + v + "' is not an RFC 1123 date such as 'Sun, 06 Nov 1994 08:49:37 GMT'.");
                    }
                }
                default -> {
                    // ignored, as on the service (ForcePersistence, broker-assigned values, unknown names)
                }
            }
        }
    }

    private static String string(String key, Object v) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        throw new IllegalArgumentException("The BrokerProperties value " + key + " must be a string.");
    }

    private static long timeToLiveMs(Object v) {
        double seconds;
        if (v instanceof Number n) {
            seconds = n.doubleValue();
        } else if (v instanceof String s) {
            try {
                seconds = Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("The BrokerProperties value TimeToLive must be a number of "
                        + "seconds.");
            }
        } else {
            throw new IllegalArgumentException("The BrokerProperties value TimeToLive must be a number of seconds.");
        }
        if (!(seconds > 0) || Double.isInfinite(seconds)) {
            throw new IllegalArgumentException("The BrokerProperties value TimeToLive must be a positive number "
                    + "of seconds.");
        }
        double ms = seconds * 1000;
        return ms >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(1, Math.round(ms));
    }

    /**
     * The {@code BrokerProperties} of a received message, with the service's field names and formats.
     *
     * @param delivered whether this is a delivery (receive), which counts itself in DeliveryCount
     */
    static JsonObject brokerProperties(ReceivedMessage r, boolean delivered) {
        Message m = r.message();
        JsonObject o = new JsonObject();
        if (m.correlationId() != null) {
            o.put("CorrelationId", m.correlationId().toString());
        }
        o.put("DeliveryCount", r.deliveryCount() + (delivered ? 1 : 0));
        if (m.enqueuedSequenceNumber() != null) {
            o.put("EnqueuedSequenceNumber", m.enqueuedSequenceNumber());
        }
        o.put("EnqueuedTimeUtc", formatDate(r.enqueuedTimeMs()));
        if (m.subject() != null) {
            o.put("Label", m.subject());
        }
        if (r.lockToken() != null) {
            o.put("LockToken", r.lockToken().toString());
            o.put("LockedUntilUtc", formatDate(r.lockedUntilMs()));
        }
        if (m.messageId() != null) {
            o.put("MessageId", m.messageId().toString());
        }
        String partitionKey = m.partitionKey() != null ? m.partitionKey() : m.sessionId();
        if (partitionKey != null) {
            o.put("PartitionKey", partitionKey);
        }
        if (m.replyTo() != null) {
            o.put("ReplyTo", m.replyTo());
        }
        if (m.replyToSessionId() != null) {
            o.put("ReplyToSessionId", m.replyToSessionId());
        }
        Long scheduled = r.scheduledEnqueueTimeMs() != null ? r.scheduledEnqueueTimeMs() : m.scheduledEnqueueTimeMs();
        if (scheduled != null) {
            o.put("ScheduledEnqueueTimeUtc", formatDate(scheduled));
        }
        o.put("SequenceNumber", r.sequenceNumber());
        if (m.sessionId() != null) {
            o.put("SessionId", m.sessionId());
        }
        o.put("State", state(delivered ? r.reportedState() : r.state()));
        o.put("TimeToLive", timeToLiveSeconds(r));
        if (m.to() != null) {
            o.put("To", m.to());
        }
        if (m.viaPartitionKey() != null) {
            o.put("ViaPartitionKey", m.viaPartitionKey());
        }
        return o;
    }

    private static String state(MessageState s) {
        return s == null ? "Active" : switch (s) {
            case ACTIVE -> "Active";
            case DEFERRED -> "Deferred";
            case SCHEDULED -> "Scheduled";
        };
    }

    /** Seconds, written as the service does: a whole number without a fraction, TimeSpan.MaxValue when never. */
    private static Number timeToLiveSeconds(ReceivedMessage r) {
        long ms;
        if (r.expiresAtMs() != Long.MAX_VALUE && r.expiresAtMs() > r.enqueuedTimeMs()) {
            ms = r.expiresAtMs() - r.enqueuedTimeMs();
        } else if (r.message().timeToLiveMs() != null && r.message().timeToLiveMs() < Long.MAX_VALUE) {
            ms = r.message().timeToLiveMs();
        } else {
            return MAX_TIME_TO_LIVE_SECONDS;
        }
        return ms % 1000 == 0 ? (Number) (ms / 1000) : (Number) BigDecimal.valueOf(ms, 3);
    }

    /** Parses a lock token segment. */
    static UUID lockToken(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("The lock token '" + text + "' is not a valid GUID.");
        }
    }
}
