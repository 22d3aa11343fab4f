package io.buslane.journal;

import java.util.Objects;

/**
 * The journal could not append or sync: a full or failing disk, an unreachable database, or a journal whose
 * ownership another node took over. Nothing after it is durable.
 */
public final class JournalException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why the journal failed, which decides what its owner answers and whether retrying can help. */
    public enum Reason {
        /** Out of space; clears once space returns. */
        DISK_FULL,
        /** The storage (a database) cannot be reached now; a later sync may succeed. */
        UNAVAILABLE,
        /** Another node took the journal over: this instance will never write again. */
        FENCED,
        /** Another node holds a live lease on the journal: not taken now (cluster mode: tried again later). */
        LEASED,
        /** A {@link SharedJournal}: another node wrote first; nothing was stored; read again and retry. */
        CONFLICT,
        /** Any other failure. */
        FAILED
    }

    private final Reason reason;

    public JournalException(String message, Throwable cause, boolean diskFull) {
        this(message, cause, diskFull ? Reason.DISK_FULL : Reason.FAILED);
    }

    public JournalException(String message, Throwable cause, Reason reason) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }

    /** True when the failure is a lack of space, which clears once space returns. */
    public boolean diskFull() {
        return reason == Reason.DISK_FULL;
    }
}
