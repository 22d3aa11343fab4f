package io.buslane.journal;

import java.util.Objects;

/**
 * One journal record: a kind, a record id, an owner-defined type and an opaque payload. Immutable.
 *
 * @param kind    what the record does to {@code id}
 * @param id      the record id; unique among live records of one journal
 * @param type    the owner's record type (the journal stores it, never interprets it)
 * @param payload the owner's bytes; empty for a DELETE. Not copied: callers must not mutate it afterwards.
 */
public record JournalRecord(RecordKind kind, long id, byte type, byte[] payload) {

    private static final byte[] EMPTY = new byte[0];

    public JournalRecord {
        Objects.requireNonNull(kind, "kind");
        payload = payload == null ? EMPTY : payload;
    }

    public static JournalRecord add(long id, byte type, byte[] payload) {
        return new JournalRecord(RecordKind.ADD, id, type, payload);
    }

    public static JournalRecord update(long id, byte type, byte[] payload) {
        return new JournalRecord(RecordKind.UPDATE, id, type, payload);
    }

    public static JournalRecord delete(long id) {
        return new JournalRecord(RecordKind.DELETE, id, (byte) 0, EMPTY);
    }
}
