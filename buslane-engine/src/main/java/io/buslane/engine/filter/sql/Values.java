package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Symbol;
import io.buslane.engine.message.Unsigned;

import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Instant;
import java.util.UUID;

/**
 * Value semantics of the SQL language, after C#: integral values of any width widen to 64-bit integers, floating
 * values (and integers mixed with them) to doubles; a decimal ({@link BigDecimal}, an AMQP decimal) against any
 * numeric compares and computes exactly as a decimal (a double converted by its shortest decimal form, as .NET's
 * {@code (decimal)} conversion does; results beyond .NET's decimal range overflow); an AMQP decimal property
 * ({@link Decimal}) reads as its {@link BigDecimal} (a NaN or infinity as a double). Strings compare ordinally and
 * case-sensitively; booleans, GUIDs and times compare with their own kind. No other implicit conversion exists:
 * comparing or combining values of unrelated types fails with {@code InvalidOperationException}. Null (an absent
 * property) is UNKNOWN.
 */
final class Values {

    private Values() {
    }

    /** The largest magnitude of .NET's {@code System.Decimal}: 2^96 - 1. */
    private static final BigDecimal DECIMAL_MAX = new BigDecimal("79228162514264337593543950335");

    /** The value as a Long, Double or BigDecimal when numeric, else null. */
    static Object numeric(Object v) {
        if (v instanceof Long || v instanceof Double || v instanceof BigDecimal) {
            return v;
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        if (v instanceof Decimal d) {
            return d.toNumber();
        }
        if (v instanceof Unsigned u) {
            return u.width() < 8 || u.bits() >= 0 ? (Object) u.bits()
                    : (Object) Double.parseDouble(Long.toUnsignedString(u.bits()));
        }
        if (v instanceof Character c) {
            return (long) c.charValue();
        }
        return null;
    }

    /** Strings and symbols read as text; other values as null. */
    static String text(Object v) {
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Symbol s) {
            return s.value();
        }
        return null;
    }

    /** Any value written to a string system property. */
    static String toText(Object v) {
        String t = text(v);
        return t != null ? t : String.valueOf(v);
    }

    /**
     * Compares two non-null values (negative, zero or positive). Booleans and GUIDs only support equality; any
     * other pairing of unrelated types fails.
     */
    static int compare(Object a, Object b, String op) {
        Object na = numeric(a);
        Object nb = numeric(b);
        if (na != null && nb != null) {
            if (na instanceof Long la && nb instanceof Long lb) {
                return Long.compare(la, lb);
            }
            BigDecimal da = decimal(na);
            BigDecimal db = decimal(nb);
            if ((na instanceof BigDecimal || nb instanceof BigDecimal) && da != null && db != null) {
                return da.compareTo(db);
            }
            return Double.compare(((Number) na).doubleValue(), ((Number) nb).doubleValue());
        }
        String ta = text(a);
        String tb = text(b);
        if (ta != null && tb != null) {
            return ta.compareTo(tb);
        }
        if (a instanceof Boolean ba && b instanceof Boolean bb) {
            requireEquality(op, a, b);
            return Boolean.compare(ba, bb);
        }
        if (a instanceof UUID ua && b instanceof UUID ub) {
            requireEquality(op, a, b);
            return ua.equals(ub) ? 0 : 1;
        }
        if (a instanceof Instant ia && b instanceof Instant ib) {
            return ia.compareTo(ib);
        }
        throw mismatch(op, a, b);
    }

    private static void requireEquality(String op, Object a, Object b) {
        if (!op.equals("=") && !op.equals("<>") && !op.equals("!=")) {
            throw mismatch(op, a, b);
        }
    }

    static Object arithmetic(String op, Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        Object na = numeric(a);
        Object nb = numeric(b);
        if (na instanceof Long la && nb instanceof Long lb) {
            try {
                switch (op) {
                    case "+": return Math.addExact(la, lb);
                    case "-": return Math.subtractExact(la, lb);
                    case "*": return Math.multiplyExact(la, lb);
                    case "/":
                        if (lb == 0) {
                            throw divideByZero();
                        }
                        if (la == Long.MIN_VALUE && lb == -1) {
                            throw new ArithmeticException("overflow");
                        }
                        return la / lb; // truncates toward zero, as C# does
                    default:
                        if (lb == 0) {
                            throw divideByZero();
                        }
                        return la % lb;
                }
            } catch (ArithmeticException e) {
                throw new SqlEvaluationException(SqlEvaluationException.OVERFLOW,
                        "Arithmetic operation resulted in an overflow.");
            }
        }
        if ((na instanceof BigDecimal || nb instanceof BigDecimal) && decimal(na) != null && decimal(nb) != null) {
            return decimalArithmetic(op, decimal(na), decimal(nb));
        }
        if (na != null && nb != null) {
            double x = ((Number) na).doubleValue();
            double y = ((Number) nb).doubleValue();
            switch (op) {
                case "+": return x + y;
                case "-": return x - y;
                case "*": return x * y;
                case "/": return x / y;
                default: return x % y;
            }
        }
        String ta = text(a);
        String tb = text(b);
        if (op.equals("+") && ta != null && tb != null) {
            return ta + tb;
        }
        throw mismatch(op, a, b);
    }

    static Object negate(Object v) {
        if (v == null) {
            return null;
        }
        Object n = numeric(v);
        if (n instanceof Long l) {
            if (l == Long.MIN_VALUE) {
                throw new SqlEvaluationException(SqlEvaluationException.OVERFLOW,
                        "Arithmetic operation resulted in an overflow.");
            }
            return -l;
        }
        if (n instanceof Double d) {
            return -d;
        }
        if (n instanceof BigDecimal d) {
            return d.negate();
        }
        throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                "Operator '-' cannot be applied to an operand of type '" + typeName(v) + "'.");
    }

    /** A numeric (Long, Double or BigDecimal) as a decimal; null for a double that is not finite. */
    private static BigDecimal decimal(Object n) {
        if (n instanceof BigDecimal d) {
            return d;
        }
        if (n instanceof Long l) {
            return BigDecimal.valueOf(l);
        }
        if (n instanceof Double d && Double.isFinite(d)) {
            return BigDecimal.valueOf(d);
        }
        return null;
    }

    /** Exact for + - * and %; a quotient that does not terminate is rounded to 34 significant digits. */
    private static BigDecimal decimalArithmetic(String op, BigDecimal x, BigDecimal y) {
        if ((op.equals("/") || op.equals("%")) && y.signum() == 0) {
            throw divideByZero();
        }
        BigDecimal r = switch (op) {
            case "+" -> x.add(y);
            case "-" -> x.subtract(y);
            case "*" -> x.multiply(y);
            case "/" -> divide(x, y);
            default -> x.remainder(y);
        };
        if (r.abs().compareTo(DECIMAL_MAX) > 0) {
            throw new SqlEvaluationException(SqlEvaluationException.OVERFLOW,
                    "Value was either too large or too small for a Decimal.");
        }
        return r;
    }

    private static BigDecimal divide(BigDecimal x, BigDecimal y) {
        try {
            return x.divide(y);
        } catch (ArithmeticException nonTerminating) {
            return x.divide(y, MathContext.DECIMAL128);
        }
    }

    private static SqlEvaluationException divideByZero() {
        return new SqlEvaluationException(SqlEvaluationException.DIVIDE_BY_ZERO, "Attempted to divide by zero.");
    }

    static SqlEvaluationException mismatch(String op, Object a, Object b) {
        return new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION, "Operator '" + op
                + "' cannot be applied to operands of type '" + typeName(a) + "' and '" + typeName(b) + "'.");
    }

    /** The .NET type name of a value, for error descriptions. */
    static String typeName(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String || v instanceof Symbol) {
            return "System.String";
        }
        if (v instanceof Long) {
            return "System.Int64";
        }
        if (v instanceof Integer) {
            return "System.Int32";
        }
        if (v instanceof Short) {
            return "System.Int16";
        }
        if (v instanceof Byte) {
            return "System.SByte";
        }
        if (v instanceof Double) {
            return "System.Double";
        }
        if (v instanceof BigDecimal || v instanceof Decimal) {
            return "System.Decimal";
        }
        if (v instanceof Float) {
            return "System.Single";
        }
        if (v instanceof Boolean) {
            return "System.Boolean";
        }
        if (v instanceof UUID) {
            return "System.Guid";
        }
        if (v instanceof Instant) {
            return "System.DateTime";
        }
        if (v instanceof Unsigned u) {
            return switch (u.width()) {
                case 1 -> "System.Byte";
                case 2 -> "System.UInt16";
                case 4 -> "System.UInt32";
                default -> "System.UInt64";
            };
        }
        if (v instanceof byte[]) {
            return "System.Byte[]";
        }
        return v.getClass().getSimpleName();
    }
}
