package io.buslane.engine.remote;

import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * The bytes of operations and their results on the cluster channel: an operation as its code and its slots
 * ({@link OpSlots}), read back through the {@link OpCode} table; a result by the operation's {@link OpResult}.
 */
public final class OpCodec {

    private OpCodec() {
    }

    /** Writes the operation: its code, then its body. */
    public static void write(RecordWriter w, PartitionOp<?> op) {
        w.writeVarInt(op.code().code());
        OpSlots slots = new OpSlots(op.path(), op.partition());
        op.write(slots);
        slots.write(w);
    }

    /** Reads an operation {@link #write} wrote; fails with IllegalArgumentException on an unknown code. */
    public static PartitionOp<?> read(RecordReader r) {
        int code = r.readVarInt();
        OpCode c = OpCode.ofCode(code);
        if (c == null) {
            throw new IllegalArgumentException("Unknown op code " + code);
        }
        return c.read(OpSlots.read(r));
    }

    /** Writes the result of {@code op}. */
    @SuppressWarnings("unchecked")
    public static <R> void writeResult(RecordWriter w, PartitionOp<R> op, Object result) {
        op.result().write(w, (R) result);
    }

    /** Reads the result of {@code op}. */
    public static <R> R readResult(RecordReader r, PartitionOp<R> op) {
        return op.result().read(r);
    }
}
