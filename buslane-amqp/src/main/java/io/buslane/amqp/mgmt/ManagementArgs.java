package io.buslane.amqp.mgmt;

import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import java.lang.reflect.Array;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Stateless. How the arguments of a {@code $management} request are read: the operation name, the body map, and each
 * value coerced to the type the operation needs (the SDKs send the same field as int or long, string or symbol,
 * array or list), with the service's error ({@code com.microsoft:argument-error} and friends) for a value that is
 * missing or of the wrong type. {@link ManagementProcessor} dispatches operations; this class only reads arguments.
 */
final class ManagementArgs {

    private ManagementArgs() {
    }

    static BrokerException missing(String key) {
        return new BrokerException(ErrorKind.ARGUMENT, "The request is missing the required '" + key + "' value.");
    }

    static BrokerException illTyped(String key, Object value, String expected) {
        return new BrokerException(ErrorKind.ARGUMENT, "The '" + key + "' value must be " + expected
                + ", was " + describe(value) + ".");
    }

    static String describe(Object value) {
        return value == null ? "null" : value.getClass().getSimpleName();
    }

    /** The {@code operation} application property (a string; a symbol is tolerated). */
    static String operation(Map<String, Object> applicationProperties) {
        Object op = applicationProperties == null ? null : applicationProperties.get(ManagementProcessor.OPERATION);
        if (op == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The request has no '" + ManagementProcessor.OPERATION
                    + "' application property.");
        }
        if (op instanceof String s) {
            return s;
        }
        if (op instanceof Symbol s) {
            return s.toString();
        }
        throw illTyped(ManagementProcessor.OPERATION, op, "a string");
    }

    /** The request body as a map with String keys; no body reads as an empty map. */
    static Map<String, Object> args(Object body) {
        if (body == null) {
            return Map.of();
        }
        if (body instanceof Map<?, ?> map) {
            return stringKeys(map);
        }
        throw new BrokerException(ErrorKind.ARGUMENT, "The request body must be an AMQP map, was "
                + describe(body) + ".");
    }

    static Map<String, Object> stringKeys(Map<?, ?> map) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (e.getKey() != null) {
                out.put(e.getKey().toString(), e.getValue());
            }
        }
        return out;
    }

    static String string(Map<String, Object> args, String key, boolean required) {
        Object v = args.get(key);
        if (v == null) {
            if (required) {
                throw missing(key);
            }
            return null;
        }
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Symbol s) {
            return s.toString();
        }
        throw illTyped(key, v, "a string");
    }

    static String optionalSessionId(Map<String, Object> args) {
        String id = string(args, ManagementProcessor.SESSION_ID, false);
        return id == null || id.isEmpty() ? null : id;
    }

    static String requiredSessionId(Map<String, Object> args) {
        String id = string(args, ManagementProcessor.SESSION_ID, true);
        if (id.isEmpty()) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The '" + ManagementProcessor.SESSION_ID
                    + "' value must not be empty.");
        }
        return id;
    }

    /** Any integral Number (int, long, uint, ulong, ubyte, ...) as a long. */
    static long integral(String key, Object v) {
        if (v instanceof UnsignedLong u) {
            if (u.longValue() < 0) {
                throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The '" + key + "' value " + u
                        + " is out of range.");
            }
            return u.longValue();
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof UnsignedInteger
                || v instanceof UnsignedShort
                || v instanceof UnsignedByte
                || v instanceof BigInteger) {
            return ((Number) v).longValue();
        }
        if (v instanceof Number n) {
            double d = n.doubleValue();
            if (d == Math.rint(d) && !Double.isInfinite(d)) {
                return (long) d;
            }
        }
        throw illTyped(key, v, "an integer");
    }

    static long longValue(Map<String, Object> args, String key) {
        Object v = args.get(key);
        if (v == null) {
            throw missing(key);
        }
        return integral(key, v);
    }

    /** An int argument; {@code fallback} null makes it required. */
    static int intValue(Map<String, Object> args, String key, Integer fallback) {
        Object v = args.get(key);
        if (v == null) {
            if (fallback == null) {
                throw missing(key);
            }
            return fallback;
        }
        long l = integral(key, v);
        if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The '" + key + "' value " + l
                    + " does not fit an int.");
        }
        return (int) l;
    }

    static int nonNegativeInt(Map<String, Object> args, String key, int fallback) {
        int v = intValue(args, key, fallback);
        if (v < 0) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The '" + key + "' value must not be "
                    + "negative, was " + v + ".");
        }
        return v;
    }

    /** A timestamp (Date; a number of epoch milliseconds is tolerated) in epoch ms, or null when absent. */
    static Long timestamp(Map<String, Object> args, String key, boolean required) {
        Object v = args.get(key);
        if (v == null) {
            if (required) {
                throw missing(key);
            }
            return null;
        }
        if (v instanceof Date d) {
            return d.getTime();
        }
        if (v instanceof Instant i) {
            return i.toEpochMilli();
        }
        if (v instanceof Number) {
            return integral(key, v);
        }
        throw illTyped(key, v, "a timestamp");
    }

    /** A binary value (or null): Binary, byte[] tolerated. */
    static byte[] binary(Map<String, Object> args, String key) {
        Object v = args.get(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Binary b) {
            byte[] out = new byte[b.getLength()];
            System.arraycopy(b.getArray(), b.getArrayOffset(), out, 0, b.getLength());
            return out;
        }
        if (v instanceof byte[] bytes) {
            return bytes.clone();
        }
        if (v instanceof ByteBuffer buf) {
            byte[] out = new byte[buf.remaining()];
            buf.duplicate().get(out);
            return out;
        }
        throw illTyped(key, v, "binary or null");
    }

    /** The elements of an AMQP array or list (a single non-collection value reads as one element). */
    static List<Object> elements(Object v, String key) {
        if (v instanceof Object[] array) {
            return Arrays.asList(array);
        }
        if (v instanceof Collection<?> c) {
            return new ArrayList<>(c);
        }
        if (v.getClass().isArray()) {
            int n = Array.getLength(v);
            List<Object> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(Array.get(v, i));
            }
            return out;
        }
        if (v instanceof Map<?, ?>) {
            throw illTyped(key, v, "an array or list");
        }
        return List.of(v);
    }

    /** A long[] argument: long[], Long[], int[], an array or list of integers, or a single integer. */
    static long[] longs(Map<String, Object> args, String key) {
        Object v = args.get(key);
        if (v == null) {
            throw missing(key);
        }
        if (v instanceof long[] a) {
            return a.clone();
        }
        List<Object> elements = elements(v, key);
        long[] out = new long[elements.size()];
        for (int i = 0; i < out.length; i++) {
            Object e = elements.get(i);
            if (e == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "The '" + key + "' values must not be null.");
            }
            out[i] = integral(key, e);
        }
        return out;
    }

    /** A uuid[] argument: UUID[], an array or list of uuids (uuid strings tolerated), or a single uuid. */
    static UUID[] uuids(Map<String, Object> args, String key) {
        Object v = args.get(key);
        if (v == null) {
            throw missing(key);
        }
        List<Object> elements = elements(v, key);
        UUID[] out = new UUID[elements.size()];
        for (int i = 0; i < out.length; i++) {
            Object e = elements.get(i);
            if (e instanceof UUID u) {
                out[i] = u;
            } else if (e instanceof String s) {
                try {
                    out[i] = UUID.fromString(s);
                } catch (IllegalArgumentException ex) {
                    throw new BrokerException(ErrorKind.ARGUMENT, "The '" + key + "' value '" + s
                            + "' is not a uuid.");
                }
            } else {
                throw illTyped(key, e, "an array of uuid");
            }
        }
        return out;
    }

    static ReceiveMode receiveMode(Map<String, Object> args) {
        Object v = args.get(ManagementProcessor.RECEIVER_SETTLE_MODE);
        if (v == null) {
            return ReceiveMode.PEEK_LOCK; // the safe default: never delete what the client did not ask to delete
        }
        long mode = integral(ManagementProcessor.RECEIVER_SETTLE_MODE, v);
        if (mode == 0) {
            return ReceiveMode.RECEIVE_AND_DELETE;
        }
        if (mode == 1) {
            return ReceiveMode.PEEK_LOCK;
        }
        throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The '" + ManagementProcessor.RECEIVER_SETTLE_MODE
                + "' value must be 0 (receive-and-delete) or 1 (peek-lock), was " + mode + ".");
    }

    static Map<String, Object> propertiesToModify(Map<String, Object> args) {
        Object v = args.get(ManagementProcessor.PROPERTIES_TO_MODIFY);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Map<?, ?> map)) {
            throw illTyped(ManagementProcessor.PROPERTIES_TO_MODIFY, v, "a map");
        }
        return map.isEmpty() ? null : AmqpCodec.toEngineStringMap(map);
    }
}
