package io.buslane.engine.filter.sql;

import org.antlr.v4.runtime.BaseErrorListener;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.RecognitionException;
import org.antlr.v4.runtime.Recognizer;
import org.antlr.v4.runtime.Token;
import org.antlr.v4.runtime.tree.ParseTree;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Translates SQL text into an evaluator tree with the ANTLR grammar {@code ServiceBusSql.g4}. Used once per rule;
 * nothing of ANTLR survives compilation. Stateless.
 */
final class SqlCompiler {

    /** The service's limit on a filter's or action's text (service-bus-behaviour.md §2.1). */
    static final int MAX_EXPRESSION_LENGTH = 1024;
    /** The service's limit on the statements of one action. */
    static final int MAX_ACTION_STATEMENTS = 32;

    private SqlCompiler() {
    }

    static Expr compileFilter(String text, Map<String, Object> parameters) {
        ServiceBusSqlParser parser = parser(text, "filter");
        ServiceBusSqlParser.FilterContext tree = parser.filter();
        return new Builder(parameters).visit(tree.expression());
    }

    static List<SqlAction.Statement> compileAction(String text, Map<String, Object> parameters) {
        ServiceBusSqlParser parser = parser(text, "action");
        ServiceBusSqlParser.ActionContext tree = parser.action();
        if (tree.statement().size() > MAX_ACTION_STATEMENTS) {
            throw new SqlSyntaxException("The action has " + tree.statement().size()
                    + " statements; the maximum is " + MAX_ACTION_STATEMENTS + ".");
        }
        Builder b = new Builder(parameters);
        List<SqlAction.Statement> out = new ArrayList<>();
        for (ServiceBusSqlParser.StatementContext s : tree.statement()) {
            if (s instanceof ServiceBusSqlParser.SetStatementContext set) {
                out.add(new SqlAction.Statement(b.target(set.property()), b.visit(set.expression())));
            } else {
                out.add(new SqlAction.Statement(b.target(((ServiceBusSqlParser.RemoveStatementContext) s)
                        .property()), null));
            }
        }
        return out;
    }

    private static ServiceBusSqlParser parser(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new SqlSyntaxException("The SQL " + what + " expression must not be empty.");
        }
        if (text.length() > MAX_EXPRESSION_LENGTH) {
            throw new SqlSyntaxException("The SQL " + what + " expression is " + text.length()
                    + " characters long; the maximum is " + MAX_EXPRESSION_LENGTH + ".");
        }
        BaseErrorListener fail = new BaseErrorListener() {
            @Override
            public void syntaxError(Recognizer<?, ?> recognizer, Object offending, int line, int position,
                                    String msg, RecognitionException e) {
                String near = offending instanceof Token t && t.getType() != Token.EOF ? " near '" + t.getText() + "'"
                        : offending instanceof Token ? " at the end of the expression" : "";
                throw new SqlSyntaxException("Syntax error in the SQL " + what + " expression '" + text
                        + "' at line " + line + ", position " + (position + 1) + near + ": " + msg + ".");
            }
        };
        ServiceBusSqlLexer lexer = new ServiceBusSqlLexer(CharStreams.fromString(text));
        lexer.removeErrorListeners();
        lexer.addErrorListener(fail);
        ServiceBusSqlParser parser = new ServiceBusSqlParser(new CommonTokenStream(lexer));
        parser.removeErrorListeners();
        parser.addErrorListener(fail);
        return parser;
    }

    static SqlSyntaxException error(Token at, String message) {
        return new SqlSyntaxException(message + " (line " + at.getLine() + ", position "
                + (at.getCharPositionInLine() + 1) + ").");
    }

    /** The parse tree to the evaluator tree. */
    private static final class Builder extends ServiceBusSqlBaseVisitor<Expr> {

        private final Map<String, Object> parameters;

        Builder(Map<String, Object> parameters) {
            this.parameters = parameters;
        }

        Expr expr(ParseTree t) {
            return visit(t);
        }

        @Override
        public Expr visitPrimaryExpression(ServiceBusSqlParser.PrimaryExpressionContext ctx) {
            return visit(ctx.primary());
        }

        @Override
        public Expr visitUnaryExpression(ServiceBusSqlParser.UnaryExpressionContext ctx) {
            Expr operand = expr(ctx.expression());
            if (ctx.op.getText().equals("+")) {
                return new Expr.Plus(operand);
            }
            if (operand instanceof Expr.Constant c && Values.numeric(c.value) instanceof Number) {
                return new Expr.Constant(Values.negate(c.value));
            }
            return new Expr.Negate(operand);
        }

        @Override
        public Expr visitMultiplicativeExpression(ServiceBusSqlParser.MultiplicativeExpressionContext ctx) {
            return new Expr.Arithmetic(ctx.op.getText(), expr(ctx.expression(0)), expr(ctx.expression(1)));
        }

        @Override
        public Expr visitAdditiveExpression(ServiceBusSqlParser.AdditiveExpressionContext ctx) {
            return new Expr.Arithmetic(ctx.op.getText(), expr(ctx.expression(0)), expr(ctx.expression(1)));
        }

        @Override
        public Expr visitComparisonExpression(ServiceBusSqlParser.ComparisonExpressionContext ctx) {
            return new Expr.Comparison(ctx.op.getText(), expr(ctx.expression(0)), expr(ctx.expression(1)));
        }

        @Override
        public Expr visitIsNullExpression(ServiceBusSqlParser.IsNullExpressionContext ctx) {
            return new Expr.IsNull(property(ctx.property()), ctx.NOT() != null);
        }

        @Override
        public Expr visitLikeExpression(ServiceBusSqlParser.LikeExpressionContext ctx) {
            String pattern = string(ctx.pattern.getText());
            Character escape = null;
            if (ctx.escape != null) {
                String e = string(ctx.escape.getText());
                if (e.length() != 1) {
                    throw error(ctx.escape, "The ESCAPE character must be a single character, was '" + e + "'");
                }
                escape = e.charAt(0);
            }
            return new Expr.Like(expr(ctx.expression()), likePattern(pattern, escape, ctx.pattern),
                    ctx.NOT() != null);
        }

        @Override
        public Expr visitInExpression(ServiceBusSqlParser.InExpressionContext ctx) {
            List<Expr> candidates = new ArrayList<>();
            for (int i = 1; i < ctx.expression().size(); i++) {
                candidates.add(expr(ctx.expression(i)));
            }
            return new Expr.In(expr(ctx.expression(0)), candidates, ctx.NOT() != null);
        }

        @Override
        public Expr visitNotExpression(ServiceBusSqlParser.NotExpressionContext ctx) {
            return new Expr.Not(expr(ctx.expression()));
        }

        @Override
        public Expr visitAndExpression(ServiceBusSqlParser.AndExpressionContext ctx) {
            return new Expr.And(expr(ctx.expression(0)), expr(ctx.expression(1)));
        }

        @Override
        public Expr visitOrExpression(ServiceBusSqlParser.OrExpressionContext ctx) {
            return new Expr.Or(expr(ctx.expression(0)), expr(ctx.expression(1)));
        }

        @Override
        public Expr visitParenthesized(ServiceBusSqlParser.ParenthesizedContext ctx) {
            return expr(ctx.expression());
        }

        @Override
        public Expr visitExistsPredicate(ServiceBusSqlParser.ExistsPredicateContext ctx) {
            return new Expr.Exists(property(ctx.property()));
        }

        @Override
        public Expr visitFunctionCall(ServiceBusSqlParser.FunctionCallContext ctx) {
            String name = ctx.name.getText().toLowerCase(Locale.ROOT);
            int args = ctx.expression().size();
            switch (name) {
                case "newid":
                    if (args != 0) {
                        throw error(ctx.name, "The function newid() takes no argument");
                    }
                    return new Expr.NewId();
                case "property":
                case "p":
                    if (args != 1) {
                        throw error(ctx.name, "The function " + ctx.name.getText() + "() takes one argument");
                    }
                    return new Expr.DynamicProperty(expr(ctx.expression(0)));
                default:
                    throw error(ctx.name, "Unknown function '" + ctx.name.getText()
                            + "' (supported: newid(), property(name), p(name))");
            }
        }

        @Override
        public Expr visitConstantPrimary(ServiceBusSqlParser.ConstantPrimaryContext ctx) {
            return visit(ctx.constant());
        }

        @Override
        public Expr visitIntegerConstant(ServiceBusSqlParser.IntegerConstantContext ctx) {
            try {
                return new Expr.Constant(Long.parseLong(ctx.getText()));
            } catch (NumberFormatException e) {
                throw error(ctx.getStart(), "The integer constant " + ctx.getText() + " does not fit in 64 bits");
            }
        }

        @Override
        public Expr visitDecimalConstant(ServiceBusSqlParser.DecimalConstantContext ctx) {
            double d = Double.parseDouble(ctx.getText());
            if (Double.isInfinite(d)) {
                throw error(ctx.getStart(), "The numeric constant " + ctx.getText() + " is out of range");
            }
            return new Expr.Constant(d);
        }

        @Override
        public Expr visitStringConstant(ServiceBusSqlParser.StringConstantContext ctx) {
            return new Expr.Constant(string(ctx.getText()));
        }

        @Override
        public Expr visitTrueConstant(ServiceBusSqlParser.TrueConstantContext ctx) {
            return new Expr.Constant(Boolean.TRUE);
        }

        @Override
        public Expr visitFalseConstant(ServiceBusSqlParser.FalseConstantContext ctx) {
            return new Expr.Constant(Boolean.FALSE);
        }

        /**
         * {@code @name}: the value given for it in the rule's parameters, as a constant (keys match with or without
         * their {@code @}, case-insensitively); a parameter without a value is refused when the rule is created.
         */
        @Override
        public Expr visitParameterConstant(ServiceBusSqlParser.ParameterConstantContext ctx) {
            String name = ctx.getText().substring(1);
            for (Map.Entry<String, Object> p : parameters.entrySet()) {
                String key = p.getKey().startsWith("@") ? p.getKey().substring(1) : p.getKey();
                if (key.equalsIgnoreCase(name)) {
                    return new Expr.Constant(p.getValue());
                }
            }
            throw error(ctx.getStart(), "The parameter " + ctx.getText() + " has no value; give it one in the "
                    + "Parameters of the filter or action");
        }

        @Override
        public Expr visitNullConstant(ServiceBusSqlParser.NullConstantContext ctx) {
            return new Expr.Constant(null);
        }

        @Override
        public Expr visitPropertyPrimary(ServiceBusSqlParser.PropertyPrimaryContext ctx) {
            return property(ctx.property());
        }

        Expr.Property property(ServiceBusSqlParser.PropertyContext ctx) {
            List<ServiceBusSqlParser.IdentifierContext> ids = ctx.identifier();
            if (ids.size() == 1) {
                return new Expr.UserProperty(identifier(ids.get(0)));
            }
            String scope = ids.get(0).getText();
            String name = identifier(ids.get(1));
            if (scope.equalsIgnoreCase("user")) {
                return new Expr.UserProperty(name);
            }
            if (scope.equalsIgnoreCase("sys")) {
                SystemProperty p = SystemProperty.named(name);
                if (p == null) {
                    throw error(ids.get(1).getStart(), "'" + name + "' is not a system property");
                }
                return new Expr.SysProperty(p);
            }
            throw error(ids.get(0).getStart(), "Unknown scope '" + scope + "' (the scope is sys or user)");
        }

        /** An action's SET/REMOVE target. */
        Expr.Property target(ServiceBusSqlParser.PropertyContext ctx) {
            Expr.Property p = property(ctx);
            if (p instanceof Expr.SysProperty sys && !sys.property.settable()) {
                throw error(ctx.getStart(), "The system property '" + sys.property.propertyName
                        + "' cannot be modified by an action");
            }
            return p;
        }

        private static String identifier(ServiceBusSqlParser.IdentifierContext ctx) {
            String t = ctx.getText();
            if (ctx.DELIMITED() != null) {
                return t.substring(1, t.length() - 1).replace("]]", "]");
            }
            if (ctx.QUOTED() != null) {
                return t.substring(1, t.length() - 1).replace("\"\"", "\"");
            }
            return t;
        }

        private static String string(String literal) {
            return literal.substring(1, literal.length() - 1).replace("''", "'");
        }

        private static Pattern likePattern(String pattern, Character escape, Token at) {
            StringBuilder regex = new StringBuilder();
            StringBuilder literal = new StringBuilder();
            for (int i = 0; i < pattern.length(); i++) {
                char c = pattern.charAt(i);
                if (escape != null && c == escape) {
                    if (i + 1 >= pattern.length()) {
                        throw error(at, "The LIKE pattern '" + pattern + "' ends with its escape character");
                    }
                    literal.append(pattern.charAt(++i));
                } else if (c == '%' || c == '_') {
                    if (literal.length() > 0) {
                        regex.append(Pattern.quote(literal.toString()));
                        literal.setLength(0);
                    }
                    regex.append(c == '%' ? ".*" : ".");
                } else {
                    literal.append(c);
                }
            }
            if (literal.length() > 0) {
                regex.append(Pattern.quote(literal.toString()));
            }
            return Pattern.compile(regex.toString(), Pattern.DOTALL);
        }
    }
}
