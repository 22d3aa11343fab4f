package io.buslane.engine.api;

/** How a receiver takes messages. Its {@link #code()} is written to the cluster channel: never change one. */
public enum ReceiveMode {
    /** The message is locked for the receiver until settled, the lock expires or the receiver closes. */
    PEEK_LOCK(0),
    /** The message is removed as it is handed out. */
    RECEIVE_AND_DELETE(1);

    private final int code;

    ReceiveMode(int code) {
        this.code = code;
    }

    /** The mode's code on the wire (fixed, whatever the order of the constants). */
    public int code() {
        return code;
    }

    /** The mode with this code; fails on an unknown one. */
    public static ReceiveMode ofCode(int code) {
        for (ReceiveMode m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        throw new IllegalArgumentException("Unknown receive mode code " + code);
    }
}
