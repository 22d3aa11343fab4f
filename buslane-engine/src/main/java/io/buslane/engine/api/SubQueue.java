package io.buslane.engine.api;

/** Which queue of an entity: the main queue, its dead-letter queue, or its transfer dead-letter queue. */
public enum SubQueue {
    MAIN(""),
    DEAD_LETTER("/$DeadLetterQueue"),
    TRANSFER_DEAD_LETTER("/$Transfer/$DeadLetterQueue");

    private final String pathSuffix;

    SubQueue(String pathSuffix) {
        this.pathSuffix = pathSuffix;
    }

    /** The suffix this sub-queue adds to its entity's path. */
    public String pathSuffix() {
        return pathSuffix;
    }
}
