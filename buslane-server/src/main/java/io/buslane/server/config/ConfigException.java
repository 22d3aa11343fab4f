package io.buslane.server.config;

/**
 * Immutable. A Config.json file that cannot be loaded: names the file, the JSON path of the offending value (e.g.
 * {@code $.UserConfig.Namespaces[0].Queues[2].Properties.LockDuration}), its line and column when known, and the
 * rule it breaks. {@link ConfigLoader} reports exactly one of these per failed load: the first problem found.
 */
public final class ConfigException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String source;
    private final String jsonPath;
    private final int line;
    private final int column;
    private final String problem;

    /**
     * @param source   the file (or resource) name
     * @param jsonPath where in the document the problem is, {@code $} for the whole document
     * @param line     1-based line, or {@code -1} when unknown
     * @param column   1-based column, or {@code -1} when unknown
     * @param problem  the rule broken, as a sentence
     * @param cause    the underlying exception, or {@code null}
     */
    public ConfigException(String source, String jsonPath, int line, int column, String problem, Throwable cause) {
        super(format(source, jsonPath, line, column, problem), cause);
        this.source = source;
        this.jsonPath = jsonPath;
        this.line = line;
        this.column = column;
        this.problem = problem;
    }

    private static String format(String source, String jsonPath, int line, int column, String problem) {
        StringBuilder sb = new StringBuilder("Invalid configuration ").append(source).append(" at ").append(jsonPath);
        if (line > 0) {
            sb.append(" (line ").append(line);
            if (column > 0) {
                sb.append(", column ").append(column);
            }
            sb.append(')');
        }
        return sb.append(": ").append(problem).toString();
    }

    /** The file (or resource) that failed to load. */
    public String source() {
        return source;
    }

    /** The JSON path of the offending value, e.g. {@code $.UserConfig.Namespaces[0].Queues[2].Name}. */
    public String jsonPath() {
        return jsonPath;
    }

    /** 1-based line of the offending value, or {@code -1} when unknown. */
    public int line() {
        return line;
    }

    /** 1-based column of the offending value, or {@code -1} when unknown. */
    public int column() {
        return column;
    }

    /** The rule broken, without the file and location prefix. */
    public String problem() {
        return problem;
    }
}
