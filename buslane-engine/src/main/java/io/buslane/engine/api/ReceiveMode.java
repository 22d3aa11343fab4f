package io.buslane.engine.api;

/** How a receiver takes messages. */
public enum ReceiveMode {
    /** The message is locked for the receiver until settled, the lock expires or the receiver closes. */
    PEEK_LOCK,
    /** The message is removed as it is handed out. */
    RECEIVE_AND_DELETE
}
