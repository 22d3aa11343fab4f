package io.buslane.engine.filter.sql;

import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * A node of a compiled expression. Evaluates to a Long, Double, String, Boolean, UUID, Instant or other property
 * value, or null for UNKNOWN. Predicates evaluate to Boolean.TRUE, Boolean.FALSE or null (three-valued logic).
 * Immutable and thread-safe.
 */
abstract class Expr {

    abstract Object eval(SqlMessage m);

    /** A constant value. */
    static final class Constant extends Expr {
        final Object value;

        Constant(Object value) {
            this.value = value;
        }

        @Override
        Object eval(SqlMessage m) {
            return value;
        }
    }

    /** A reference to a user (application) property, or a system property. */
    abstract static class Property extends Expr {
        /** Whether the property is present (EXISTS). */
        abstract boolean exists(SqlMessage m);
    }

    static final class UserProperty extends Property {
        final String name;

        UserProperty(String name) {
            this.name = name;
        }

        @Override
        Object eval(SqlMessage m) {
            String key = m.userKey(name);
            return key == null ? null : m.message().applicationProperties().get(key);
        }

        @Override
        boolean exists(SqlMessage m) {
            return m.userKey(name) != null;
        }
    }

    static final class SysProperty extends Property {
        final SystemProperty property;

        SysProperty(SystemProperty property) {
            this.property = property;
        }

        @Override
        Object eval(SqlMessage m) {
            return property.get(m);
        }

        @Override
        boolean exists(SqlMessage m) {
            return property.get(m) != null;
        }
    }

    /** {@code property(name)} / {@code p(name)}: a property named at evaluation time ({@code sys.}/{@code user.}). */
    static final class DynamicProperty extends Expr {
        final Expr name;

        DynamicProperty(Expr name) {
            this.name = name;
        }

        @Override
        Object eval(SqlMessage m) {
            Object n = name.eval(m);
            if (n == null) {
                return null;
            }
            String text = Values.text(n);
            if (text == null) {
                throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                        "The argument of property() must be a string, was '" + Values.typeName(n) + "'.");
            }
            int dot = text.indexOf('.');
            if (dot > 0 && text.substring(0, dot).equalsIgnoreCase("sys")) {
                SystemProperty p = SystemProperty.named(text.substring(dot + 1));
                if (p == null) {
                    throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                            "'" + text.substring(dot + 1) + "' is not a system property.");
                }
                return p.get(m);
            }
            if (dot > 0 && text.substring(0, dot).equalsIgnoreCase("user")) {
                text = text.substring(dot + 1);
            }
            String key = m.userKey(text);
            return key == null ? null : m.message().applicationProperties().get(key);
        }
    }

    static final class NewId extends Expr {
        @Override
        Object eval(SqlMessage m) {
            return UUID.randomUUID();
        }
    }

    static final class Exists extends Expr {
        final Property property;

        Exists(Property property) {
            this.property = property;
        }

        @Override
        Object eval(SqlMessage m) {
            return property.exists(m);
        }
    }

    static final class IsNull extends Expr {
        final Property property;
        final boolean negated;

        IsNull(Property property, boolean negated) {
            this.property = property;
            this.negated = negated;
        }

        @Override
        Object eval(SqlMessage m) {
            return (property.eval(m) == null) != negated;
        }
    }

    static final class Negate extends Expr {
        final Expr operand;

        Negate(Expr operand) {
            this.operand = operand;
        }

        @Override
        Object eval(SqlMessage m) {
            return Values.negate(operand.eval(m));
        }
    }

    /** Unary plus: the operand, which must be numeric. */
    static final class Plus extends Expr {
        final Expr operand;

        Plus(Expr operand) {
            this.operand = operand;
        }

        @Override
        Object eval(SqlMessage m) {
            Object v = operand.eval(m);
            if (v == null) {
                return null;
            }
            Object n = Values.numeric(v);
            if (n == null) {
                throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                        "Operator '+' cannot be applied to an operand of type '" + Values.typeName(v) + "'.");
            }
            return n;
        }
    }

    static final class Arithmetic extends Expr {
        final String op;
        final Expr left;
        final Expr right;

        Arithmetic(String op, Expr left, Expr right) {
            this.op = op;
            this.left = left;
            this.right = right;
        }

        @Override
        Object eval(SqlMessage m) {
            return Values.arithmetic(op, left.eval(m), right.eval(m));
        }
    }

    static final class Comparison extends Expr {
        final String op;
        final Expr left;
        final Expr right;

        Comparison(String op, Expr left, Expr right) {
            this.op = op;
            this.left = left;
            this.right = right;
        }

        @Override
        Object eval(SqlMessage m) {
            Object a = left.eval(m);
            Object b = right.eval(m);
            if (a == null || b == null) {
                return null;
            }
            int c = Values.compare(a, b, op);
            switch (op) {
                case "=": return c == 0;
                case "<>":
                case "!=": return c != 0;
                case ">": return c > 0;
                case ">=": return c >= 0;
                case "<": return c < 0;
                default: return c <= 0;
            }
        }
    }

    static final class Like extends Expr {
        final Expr operand;
        final Pattern pattern;
        final boolean negated;

        Like(Expr operand, Pattern pattern, boolean negated) {
            this.operand = operand;
            this.pattern = pattern;
            this.negated = negated;
        }

        @Override
        Object eval(SqlMessage m) {
            Object v = operand.eval(m);
            if (v == null) {
                return null;
            }
            String text = Values.text(v);
            if (text == null) {
                throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                        "Operator 'LIKE' cannot be applied to an operand of type '" + Values.typeName(v) + "'.");
            }
            return pattern.matcher(text).matches() != negated;
        }
    }

    static final class In extends Expr {
        final Expr operand;
        final List<Expr> candidates;
        final boolean negated;

        In(Expr operand, List<Expr> candidates, boolean negated) {
            this.operand = operand;
            this.candidates = List.copyOf(candidates);
            this.negated = negated;
        }

        @Override
        Object eval(SqlMessage m) {
            Object v = operand.eval(m);
            if (v == null) {
                return null;
            }
            boolean unknown = false;
            for (Expr e : candidates) {
                Object c = e.eval(m);
                if (c == null) {
                    unknown = true;
                } else if (Values.compare(v, c, "=") == 0) {
                    return !negated;
                }
            }
            return unknown ? null : negated;
        }
    }

    static final class Not extends Expr {
        final Expr operand;

        Not(Expr operand) {
            this.operand = operand;
        }

        @Override
        Object eval(SqlMessage m) {
            Boolean b = truth(operand.eval(m), "NOT");
            return b == null ? null : !b;
        }
    }

    static final class And extends Expr {
        final Expr left;
        final Expr right;

        And(Expr left, Expr right) {
            this.left = left;
            this.right = right;
        }

        @Override
        Object eval(SqlMessage m) {
            Boolean a = truth(left.eval(m), "AND");
            if (Boolean.FALSE.equals(a)) {
                return false;
            }
            Boolean b = truth(right.eval(m), "AND");
            if (Boolean.FALSE.equals(b)) {
                return false;
            }
            return a == null || b == null ? null : Boolean.TRUE;
        }
    }

    static final class Or extends Expr {
        final Expr left;
        final Expr right;

        Or(Expr left, Expr right) {
            this.left = left;
            this.right = right;
        }

        @Override
        Object eval(SqlMessage m) {
            Boolean a = truth(left.eval(m), "OR");
            if (Boolean.TRUE.equals(a)) {
                return true;
            }
            Boolean b = truth(right.eval(m), "OR");
            if (Boolean.TRUE.equals(b)) {
                return true;
            }
            return a == null || b == null ? null : Boolean.FALSE;
        }
    }

    /** A logical operand: TRUE, FALSE or UNKNOWN (null); anything else is an error. */
    static Boolean truth(Object v, String op) {
        if (v == null || v instanceof Boolean) {
            return (Boolean) v;
        }
        throw new SqlEvaluationException(SqlEvaluationException.INVALID_OPERATION,
                "Operator '" + op + "' cannot be applied to an operand of type '" + Values.typeName(v) + "'.");
    }
}
