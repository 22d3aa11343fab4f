package io.buslane.amqp.fuzz;

/**
 * Findings of the fuzz targets that are reported but not fixed yet (see {@code docs/fuzzing.md}, "Known issues"),
 * so that they do not fail every build while the fix is pending. Each predicate recognises one issue as narrowly as
 * the target can see it; its reproducers are in the target's inputs folder ({@code known-*.bin}), replayed by every
 * build. Run with {@code -Dfuzz.strict=true} to tolerate none of them (the reproducers then fail); when an issue is
 * fixed, delete its predicate.
 */
public final class KnownIssues {

    /** {@code -Dfuzz.strict=true}: tolerate no known issue. */
    public static final boolean STRICT = Boolean.getBoolean("fuzz.strict");

    private KnownIssues() {
    }

    /**
     * Issue 1: proton-j rejects some malformed or out-of-order frames that {@code FrameGuard} lets through with a
     * RuntimeException other than {@code TransportException} (a string that is not UTF-8, a field of the wrong type,
     * a described type it does not know where a delivery state belongs, a flow or transfer for a link that is not
     * attached, a transfer whose delivery-id skips, sasl-mechanisms or sasl-outcome sent to a server, ...). True
     * when {@code e} was thrown by proton-j itself.
     */
    public static boolean protonRejectsWithRuntimeException(Throwable e) {
        if (STRICT || !(e instanceof RuntimeException)) {
            return false;
        }
        StackTraceElement[] stack = e.getStackTrace();
        return stack.length > 0 && stack[0].getClassName().startsWith("org.apache.qpid.proton.");
    }

    /**
     * A known issue as {@code AmqpConnection} shows it: it contains the exception (the connection is closed), but
     * logs a WARN and closes with {@code amqp:internal-error}, a transient condition the SDKs retry on.
     * <ul>
     *   <li>Issue 1: "closed, its input could not be processed" with the exception proton-j threw;</li>
     *   <li>Issue 2: a second attach on a handle that is already attached (same session, same handle) makes proton-j
     *       raise LINK_REMOTE_OPEN without a link; {@code onLinkRemoteOpen} fails with a NullPointerException
     *       (reachable before authentication; the protocol's answer is {@code amqp:session:handle-in-use});</li>
     *   <li>Issue 3: a {@code $management} request without an {@code operation} application property: {@code
     *       RequestLink.handleManagement} asks an immutable {@code Set.of(...)} whether it contains null, which throws
     *       a NullPointerException (the processor would have answered 400 {@code com.microsoft:argument-error}); the
     *       link is detached with {@code amqp:internal-error}.</li>
     * </ul>
     */
    public static boolean loggedByConnection(String message) {
        return !STRICT && (message.contains(": closed, its input could not be processed: ")
                || message.contains(": failed to handle LINK_REMOTE_OPEN: java.lang.NullPointerException: Cannot "
                        + "invoke \"org.apache.qpid.proton.engine.Link.getLocalState()\" because \"link\" is null")
                || message.contains(": failed to handle DELIVERY: java.lang.NullPointerException: Cannot invoke "
                        + "\"Object.equals(Object)\" because \"o\" is null"));
    }
}
