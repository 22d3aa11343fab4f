package io.buslane.engine.message;

/** A message's state as browsing reports it ({@code x-opt-message-state}). */
public enum MessageState {
    ACTIVE(0),
    DEFERRED(1),
    SCHEDULED(2);

    private final int code;

    MessageState(int code) {
        this.code = code;
    }

    /** The numeric value the SDKs read. */
    public int code() {
        return code;
    }
}
