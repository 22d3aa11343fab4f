package io.buslane.engine.remote;

import io.buslane.engine.remote.PartitionOp.Settle.Disposition;

import java.util.function.Function;

/**
 * The operations' codes on the cluster channel, and the table that reads each back ({@link OpCodec}): never change
 * or reuse a code (they were the first build's ordinals; {@code RecordLayoutGoldenTest} pins them by name). A new
 * carried operation is a record in {@link PartitionOp} and a code here; unless it runs on a send target or a
 * sub-queue ({@link PartitionOp.OnSendTarget}, {@link PartitionOp.OnSubQueue}), also a method of
 * {@link PartitionOp.Runner}.
 */
public enum OpCode {
    /** {@link PartitionOp.Send}, or {@link PartitionOp.SendScheduled} when it names a reserved number. */
    SEND(0, PartitionOp.Send::read),
    SCHEDULE(1, PartitionOp.Schedule::read),
    CANCEL_SCHEDULED(2, PartitionOp.CancelScheduled::read),
    COMPLETE(3, s -> PartitionOp.Settle.read(Disposition.COMPLETE, s)),
    ABANDON(4, s -> PartitionOp.Settle.read(Disposition.ABANDON, s)),
    RELEASE(5, s -> PartitionOp.Settle.read(Disposition.RELEASE, s)),
    DEFER(6, s -> PartitionOp.Settle.read(Disposition.DEFER, s)),
    DEAD_LETTER(7, s -> PartitionOp.Settle.read(Disposition.DEAD_LETTER, s)),
    RENEW_LOCK(8, PartitionOp.RenewLock::read),
    RECEIVE_DEFERRED(9, PartitionOp.ReceiveDeferred::read),
    PEEK(10, PartitionOp.Peek::read),
    PEEK_SCHEDULED(11, PartitionOp.PeekScheduled::read),
    COUNTS(12, PartitionOp.Counts::read),
    GET_SESSION_STATE(13, PartitionOp.GetSessionState::read),
    SET_SESSION_STATE(14, PartitionOp.SetSessionState::read),
    RENEW_SESSION_LOCK(15, PartitionOp.RenewSessionLock::read),
    CHECK_SESSION_LOCKED(16, PartitionOp.CheckSessionLocked::read),
    RECEIVE(17, PartitionOp.Receive::read),
    END_RECEIVE(18, PartitionOp.EndReceive::read),
    ACCEPT_SESSION(19, PartitionOp.AcceptSession::read),
    RELEASE_SESSION(20, PartitionOp.ReleaseSession::read),
    PURGE(21, PartitionOp.Purge::read),
    DELETE_MESSAGES(22, PartitionOp.DeleteMessages::read),
    LIST_SESSIONS(23, PartitionOp.ListSessions::read),
    RESERVE_SCHEDULED(24, PartitionOp.ReserveScheduled::read),
    COMMIT(25, PartitionOp.Commit::read);

    private static final OpCode[] BY_CODE;

    static {
        int max = 0;
        for (OpCode c : values()) {
            max = Math.max(max, c.code);
        }
        BY_CODE = new OpCode[max + 1];
        for (OpCode c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    private final int code;
    private final Function<OpSlots, PartitionOp<?>> reader;

    OpCode(int code, Function<OpSlots, PartitionOp<?>> reader) {
        this.code = code;
        this.reader = reader;
    }

    /** The operation's code on the cluster channel (fixed, whatever the order of the constants). */
    public int code() {
        return code;
    }

    /** The operation with this code, or null when there is none (a peer of a newer version). */
    public static OpCode ofCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    PartitionOp<?> read(OpSlots slots) {
        return reader.apply(slots);
    }
}
