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

    /** The numeric value the SDKs read, also this state's code on the cluster channel. */
    public int code() {
        return code;
    }

    /** The state with this code; fails on an unknown one. */
    public static MessageState ofCode(int code) {
        for (MessageState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("Unknown message state code " + code);
    }
}
