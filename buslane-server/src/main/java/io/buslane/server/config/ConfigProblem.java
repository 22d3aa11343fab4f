package io.buslane.server.config;

/**
 * Immutable. A rule broken at a JSON path, raised while reading the tree and turned into a {@link ConfigException}
 * (with the file name, line and column) by {@link ConfigLoader}.
 */
final class ConfigProblem extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String path;

    ConfigProblem(String path, String problem) {
        super(problem);
        this.path = path;
    }

    ConfigProblem(String path, String problem, Throwable cause) {
        super(problem, cause);
        this.path = path;
    }

    String path() {
        return path;
    }
}
