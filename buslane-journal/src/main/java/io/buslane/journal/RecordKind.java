package io.buslane.journal;

/**
 * What a record does to the record id it names. This is all the journal knows about meaning: it is enough to
 * decide which records are live, so compaction needs no knowledge of the engine.
 */
public enum RecordKind {
    /** Creates the id. Live until a {@link #DELETE} of the same id. */
    ADD((byte) 1),
    /** Replaces the previous UPDATE of the same id (updates carry full mutable state); requires a live ADD. */
    UPDATE((byte) 2),
    /** Ends the id: its ADD and UPDATE records become dead. */
    DELETE((byte) 3);

    private final byte code;

    RecordKind(byte code) {
        this.code = code;
    }

    public byte code() {
        return code;
    }

    public static RecordKind ofCode(byte code) {
        switch (code) {
            case 1: return ADD;
            case 2: return UPDATE;
            case 3: return DELETE;
            default: throw new IllegalArgumentException("unknown record kind " + code);
        }
    }
}
