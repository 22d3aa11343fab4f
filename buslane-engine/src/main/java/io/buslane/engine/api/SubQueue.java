package io.buslane.engine.api;

/**
 * Which queue of an entity: the main queue, its dead-letter queue, or its transfer dead-letter queue. Its
 * {@link #code()} is written to the journal and the cluster channel: never change or reuse one.
 */
public enum SubQueue {
    MAIN("", 0),
    DEAD_LETTER("/$DeadLetterQueue", 1),
    TRANSFER_DEAD_LETTER("/$Transfer/$DeadLetterQueue", 2);

    private final String pathSuffix;
    private final int code;

    SubQueue(String pathSuffix, int code) {
        this.pathSuffix = pathSuffix;
        this.code = code;
    }

    /** The sub-queue's code on disk and on the wire (fixed, whatever the order of the constants). */
    public int code() {
        return code;
    }

    /** The sub-queue with this code; fails on an unknown one. */
    public static SubQueue ofCode(int code) {
        for (SubQueue q : values()) {
            if (q.code == code) {
                return q;
            }
        }
        throw new IllegalArgumentException("Unknown sub-queue code " + code);
    }

    /** The suffix this sub-queue adds to its entity's path. */
    public String pathSuffix() {
        return pathSuffix;
    }
}
