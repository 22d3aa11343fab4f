package io.buslane.journal;

/** The journal could not append or sync: typically a full or failing disk. Nothing after it is durable. */
public final class JournalException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final boolean diskFull;

    public JournalException(String message, Throwable cause, boolean diskFull) {
        super(message, cause);
        this.diskFull = diskFull;
    }

    /** True when the failure is a lack of space, which clears once space returns. */
    public boolean diskFull() {
        return diskFull;
    }
}
