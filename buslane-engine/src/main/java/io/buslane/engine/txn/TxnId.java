package io.buslane.engine.txn;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A transaction's id as the engine knows it: the bytes a front end hands back to name the transaction (in AMQP,
 * the binary {@code txn-id} of {@code declared}, {@code discharge} and {@code transactional-state}). The engine
 * hands ids out at {@link Transactions#declare}; a front end converts them to and from its own wire type. Ids are
 * equal when their bytes are; {@link #name()} reads the bytes as UTF-8 (how error descriptions show the id).
 */
public final class TxnId {

    private final byte[] bytes;

    private TxnId(byte[] bytes) {
        this.bytes = bytes;
    }

    /** An id from {@code length} bytes of {@code array} from {@code offset} (copied). */
    public static TxnId of(byte[] array, int offset, int length) {
        return new TxnId(Arrays.copyOfRange(array, offset, offset + length));
    }

    /** An id from all of {@code bytes} (copied). */
    public static TxnId of(byte[] bytes) {
        return of(bytes, 0, bytes.length);
    }

    /** An id whose bytes are {@code name} in UTF-8. */
    public static TxnId ofName(String name) {
        return new TxnId(name.getBytes(StandardCharsets.UTF_8));
    }

    /** A copy of the id's bytes. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The bytes read as UTF-8. */
    public String name() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TxnId other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return name();
    }
}
