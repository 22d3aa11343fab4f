package io.buslane.amqp.transport;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Checks what a client sends before proton-j sees it: every frame's size and header, every performative's encoding
 * (sizes within bounds, nesting within {@link AmqpLimits#maxNestingDepth()}), and the fields proton-j trusts and a
 * hostile client can abuse:
 * <ul>
 *   <li>a channel beyond the advertised channel-max, a link handle beyond the advertised handle-max, or more links
 *       on the connection than {@link AmqpLimits#maxLinks()} (proton-j allocates handles with a scan, and a handle
 *       of 2<sup>32</sup>-1 sent it into endless recursion);</li>
 *   <li>a disposition naming more than {@link AmqpLimits#maxDispositionRange()} deliveries (proton-j walks every id
 *       from first to last, and {@code first=0, last=2^32-1} never ends);</li>
 *   <li>unfinished multi-frame deliveries holding more than {@link AmqpLimits#maxBufferedBytes()} bytes on the
 *       connection ({@link AmqpLimits#maxPreAuthBufferedBytes()} before it authenticates): checked as each transfer
 *       frame arrives, not when the last one does;</li>
 *   <li>a link credit of 2<sup>31</sup> or more, which proton-j keeps in an {@code int}: lowered in place to
 *       2<sup>31</sup>-1 (still practically unlimited) rather than wrapping to a negative credit.</li>
 * </ul>
 * Input that breaks a rule raises {@link Violation}: the connection is closed with its condition and description.
 *
 * <p>Streaming: bytes pass to the sink in order and unchanged (but for the credit clamp); a frame is held back only
 * until its performative is complete, and a transfer's payload streams through unexamined. Allocation: none per
 * frame while frames arrive whole; a frame whose head spans reads is gathered in a small buffer that grows to the
 * largest performative seen. Confined to the connection's event loop.
 */
final class FrameGuard {

    static final int OPEN = 0x10;
    static final int BEGIN = 0x11;
    static final int ATTACH = 0x12;
    static final int FLOW = 0x13;
    static final int TRANSFER = 0x14;
    static final int DISPOSITION = 0x15;
    static final int DETACH = 0x16;
    static final int END = 0x17;

    private static final String FRAMING_ERROR = "amqp:connection:framing-error";
    private static final String DECODE_ERROR = "amqp:decode-error";
    private static final String LIMIT_EXCEEDED = "amqp:resource-limit-exceeded";
    private static final String INVALID_FIELD = "amqp:invalid-field";

    /** Receives checked bytes, in order; must consume them before it returns (the array is reused). */
    interface Sink {
        void accept(byte[] bytes, int offset, int length);
    }

    /** Input that closes the connection, with the condition and description of the close frame. */
    static final class Violation extends Exception {
        private final String condition;

        Violation(String condition, String description) {
            super(description, null, false, false);
            this.condition = condition;
        }

        String condition() {
            return condition;
        }
    }

    private final AmqpLimits limits;
    private final int maxFrameSize;
    private final BooleanSupplier authenticated;
    /** The head of a frame that arrived in pieces, until its performative is complete. */
    private byte[] head = new byte[64];
    private int headLength;
    /** Bytes of the current frame still to pass through unexamined (a transfer's payload). */
    private long passRemaining;
    /** Attached links by {@code channel << 32 | handle}. */
    private final Set<Long> links = new HashSet<>();
    /** Bytes of each link's unfinished delivery, by {@code channel << 32 | handle}. */
    private final Map<Long, Long> unfinished = new HashMap<>();
    private long bufferedBytes;

    FrameGuard(AmqpLimits limits, int maxFrameSize, BooleanSupplier authenticated) {
        this.limits = limits;
        this.maxFrameSize = maxFrameSize;
        this.authenticated = authenticated;
    }

    /** Bytes of unfinished deliveries now in flight on the connection. */
    long bufferedBytes() {
        return bufferedBytes;
    }

    /** Links now attached by the client. */
    int linkCount() {
        return links.size();
    }

    /** Checks {@code length} bytes from {@code offset} and passes them on to {@code sink}, in order. */
    void feed(byte[] bytes, int offset, int length, Sink sink) throws Violation {
        int off = offset;
        int end = offset + length;
        while (off < end) {
            if (passRemaining > 0) {
                int n = (int) Math.min(passRemaining, end - off);
                sink.accept(bytes, off, n);
                off += n;
                passRemaining -= n;
                continue;
            }
            if (headLength == 0) {
                int need = prefixLength(bytes, off, end - off);
                if (need <= end - off) {
                    long unit = check(bytes, off, need);
                    sink.accept(bytes, off, need);
                    off += need;
                    passRemaining = unit - need;
                    continue;
                }
            }
            int need = prefixLength(head, 0, headLength);
            while (need > headLength && off < end) {
                int n = Math.min(need - headLength, end - off);
                if (head.length < need) {
                    head = Arrays.copyOf(head, Math.max(need, head.length * 2));
                }
                System.arraycopy(bytes, off, head, headLength, n);
                headLength += n;
                off += n;
                need = prefixLength(head, 0, headLength);
            }
            if (need <= headLength) {
                long unit = check(head, 0, need);
                sink.accept(head, 0, need);
                headLength = 0;
                passRemaining = unit - need;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ framing

    /**
     * How many bytes from {@code o} the check needs: the protocol header, an empty frame, or a frame's head up to the
     * end of its performative. Returns more than {@code avail} while the bytes so far do not tell.
     */
    private int prefixLength(byte[] b, int o, int avail) throws Violation {
        if (avail < 4) {
            return 4;
        }
        if (b[o] == 'A' && b[o + 1] == 'M' && b[o + 2] == 'Q' && b[o + 3] == 'P') {
            return 8; // a protocol header (a frame that large would be over any max-frame-size)
        }
        long size = u32(b, o);
        if (size < 8 || size > maxFrameSize) {
            throw new Violation(FRAMING_ERROR, "A frame of " + size + " bytes is outside the allowed 8.."
                    + maxFrameSize + " bytes.");
        }
        if (avail < 8) {
            return 8;
        }
        int doff = b[o + 4] & 0xff;
        int type = b[o + 5] & 0xff;
        if (doff < 2 || doff * 4L > size) {
            throw new Violation(FRAMING_ERROR, "A frame has a data offset of " + doff + " words for its "
                    + size + " bytes.");
        }
        if (type != 0 && type != 1) {
            throw new Violation(FRAMING_ERROR, "Unknown frame type " + type + ".");
        }
        int body = doff * 4;
        if (size == body) {
            return body; // an empty frame (heartbeat)
        }
        if (avail < body + 2) {
            return body + 2;
        }
        if (b[o + body] != 0x00) {
            throw new Violation(DECODE_ERROR, "A frame body does not start with a described performative.");
        }
        int p = body + 2;
        int descriptor = b[o + body + 1] & 0xff;
        switch (descriptor) {
            case 0x53 -> p += 1;
            case 0x80 -> p += 8;
            case 0xa3 -> {
                if (avail < p + 1) {
                    return p + 1;
                }
                p += 1 + (b[o + p] & 0xff);
            }
            default -> throw new Violation(DECODE_ERROR, "A performative has a descriptor of type 0x"
                    + Integer.toHexString(descriptor) + ".");
        }
        if (avail < p + 1) {
            return p + 1;
        }
        int list = b[o + p] & 0xff;
        long listEnd;
        switch (list) {
            case 0x45 -> listEnd = p + 1L;
            case 0xc0 -> {
                if (avail < p + 2) {
                    return p + 2;
                }
                listEnd = p + 2L + (b[o + p + 1] & 0xff);
            }
            case 0xd0 -> {
                if (avail < p + 5) {
                    return p + 5;
                }
                listEnd = p + 5L + u32(b, o + p + 1);
            }
            default -> throw new Violation(DECODE_ERROR, "A performative's fields are not a list (constructor 0x"
                    + Integer.toHexString(list) + ").");
        }
        if (listEnd > size) {
            throw new Violation(FRAMING_ERROR, "A performative of " + listEnd + " bytes overruns its frame of "
                    + size + " bytes.");
        }
        return (int) listEnd;
    }

    /**
     * Checks a complete prefix of {@code length} bytes at {@code o}; returns the length of the whole unit (the
     * header's 8 bytes, or the frame's size).
     */
    private long check(byte[] b, int o, int length) throws Violation {
        if (b[o] == 'A' && b[o + 1] == 'M' && b[o + 2] == 'Q' && b[o + 3] == 'P') {
            return 8;
        }
        long size = u32(b, o);
        int body = (b[o + 4] & 0xff) * 4;
        if (length == body) {
            return size; // empty frame
        }
        int end = o + length;
        int descriptorAt = o + body + 1;
        int code = (b[descriptorAt] & 0xff) == 0x53 ? b[descriptorAt + 1] & 0xff
                : (b[descriptorAt] & 0xff) == 0x80 && u32(b, descriptorAt + 1) == 0
                ? (int) Math.min(u32(b, descriptorAt + 5), Integer.MAX_VALUE) : -1;
        int listAt = skip(b, descriptorAt, end, 1);
        if (skip(b, listAt, end, 1) != end) {
            throw new Violation(DECODE_ERROR, "A performative's encoded size does not match its fields.");
        }
        if ((b[o + 5] & 0xff) != 0) {
            return size; // SASL: the structure is all there is to check
        }
        int channel = ((b[o + 6] & 0xff) << 8) | (b[o + 7] & 0xff);
        if (channel > limits.channelMax()) {
            throw new Violation(FRAMING_ERROR, "Channel " + channel + " is beyond the channel-max of "
                    + limits.channelMax() + " (at most " + limits.maxSessions() + " sessions per connection).");
        }
        switch (code) {
            case ATTACH -> onAttach(b, listAt, end, channel);
            case DETACH -> onDetach(key(channel, handleOf(b, listAt, end, 0)));
            case END -> onEnd(channel);
            case FLOW -> clampCredit(b, listAt, end);
            case DISPOSITION -> onDisposition(b, listAt, end);
            case TRANSFER -> onTransfer(b, listAt, end, channel, size - length);
            default -> {
                // other performatives need no more than the structure check
            }
        }
        return size;
    }

    private void onAttach(byte[] b, int list, int end, int channel) throws Violation {
        long handle = handleOf(b, list, end, 1);
        if (!links.add(key(channel, handle))) {
            throw new Violation("amqp:session:handle-in-use", "Link handle " + handle + " is already attached on "
                    + "channel " + channel + ".");
        }
        if (links.size() > limits.maxLinks()) {
            links.remove(key(channel, handle));
            throw new Violation(LIMIT_EXCEEDED, "A connection may have at most " + limits.maxLinks()
                    + " links attached at once.");
        }
    }

    private void onDetach(long key) {
        links.remove(key);
        Long held = unfinished.remove(key);
        if (held != null) {
            bufferedBytes -= held;
        }
    }

    private void onEnd(int channel) {
        Iterator<Long> it = links.iterator();
        while (it.hasNext()) {
            if (it.next() >>> 32 == channel) {
                it.remove();
            }
        }
        Iterator<Map.Entry<Long, Long>> u = unfinished.entrySet().iterator();
        while (u.hasNext()) {
            Map.Entry<Long, Long> e = u.next();
            if (e.getKey() >>> 32 == channel) {
                bufferedBytes -= e.getValue();
                u.remove();
            }
        }
    }

    /** The handle in field {@code index} of a performative; refuses one beyond the advertised handle-max. */
    private long handleOf(byte[] b, int list, int end, int index) throws Violation {
        int at = field(b, list, end, index);
        long handle = at < 0 ? -1 : uint(b, at);
        if (handle < 0) {
            throw new Violation(INVALID_FIELD, "A performative has no valid link handle.");
        }
        if (handle > limits.handleMax()) {
            throw new Violation(FRAMING_ERROR, "Link handle " + handle + " is beyond the handle-max of "
                    + limits.handleMax() + " (at most " + limits.maxLinksPerSession() + " links per session).");
        }
        return handle;
    }

    private void clampCredit(byte[] b, int list, int end) throws Violation {
        int at = field(b, list, end, 6); // link-credit
        if (at >= 0 && (b[at] & 0xff) == 0x70 && b[at + 1] < 0) {
            // proton-j keeps credit in an int: 2^31 or more would wrap to a negative credit (nothing delivered)
            b[at + 1] = 0x7f;
            b[at + 2] = (byte) 0xff;
            b[at + 3] = (byte) 0xff;
            b[at + 4] = (byte) 0xff;
        }
    }

    private void onDisposition(byte[] b, int list, int end) throws Violation {
        int firstAt = field(b, list, end, 1);
        long first = firstAt < 0 ? -1 : uint(b, firstAt);
        if (first < 0) {
            throw new Violation(INVALID_FIELD, "A disposition has no valid first delivery-id.");
        }
        int lastAt = field(b, list, end, 2);
        long last = lastAt < 0 || (b[lastAt] & 0xff) == 0x40 ? first : uint(b, lastAt);
        if (last < 0) {
            throw new Violation(INVALID_FIELD, "A disposition has an invalid last delivery-id.");
        }
        if (last - first >= limits.maxDispositionRange()) {
            throw new Violation(INVALID_FIELD, "A disposition may name at most " + limits.maxDispositionRange()
                    + " deliveries; this one names " + (last - first + 1) + " (first " + first + ", last " + last
                    + ").");
        }
    }

    private void onTransfer(byte[] b, int list, int end, int channel, long payload) throws Violation {
        long key = key(channel, handleOf(b, list, end, 0));
        boolean more = bool(b, field(b, list, end, 5));
        boolean aborted = bool(b, field(b, list, end, 8));
        Long before = unfinished.get(key);
        long held = before == null ? 0 : before;
        if (!more || aborted) {
            if (before != null) {
                unfinished.remove(key);
                bufferedBytes -= held;
            }
            return;
        }
        long limit = authenticated.getAsBoolean() ? limits.maxBufferedBytes() : limits.maxPreAuthBufferedBytes();
        if (bufferedBytes + payload > limit) {
            throw new Violation(LIMIT_EXCEEDED, "Unfinished deliveries on this connection would hold more than "
                    + limit + " bytes" + (authenticated.getAsBoolean() ? "." : " before it has authenticated."));
        }
        unfinished.put(key, held + payload);
        bufferedBytes += payload;
    }

    // ------------------------------------------------------------------------------------------------ encoding

    private static long key(int channel, long handle) {
        return ((long) channel << 32) | handle;
    }

    /** Position of field {@code index} of the list at {@code list}, or -1 when the list is shorter. */
    private int field(byte[] b, int list, int end, int index) throws Violation {
        int c = b[list] & 0xff;
        if (c == 0x45) {
            return -1;
        }
        int wide = c == 0xd0 ? 4 : 1;
        long count = wide == 4 ? u32(b, list + 5) : b[list + 2] & 0xff;
        if (index >= count) {
            return -1;
        }
        int p = list + 1 + 2 * wide;
        for (int i = 0; i < index; i++) {
            p = skip(b, p, end, 1);
        }
        return p;
    }

    /** An unsigned int (uint, smalluint, uint0) at {@code p}, or -1 for another type. */
    private static long uint(byte[] b, int p) {
        return switch (b[p] & 0xff) {
            case 0x43 -> 0;
            case 0x52 -> b[p + 1] & 0xff;
            case 0x70 -> u32(b, p + 1);
            default -> -1;
        };
    }

    private static boolean bool(byte[] b, int p) {
        if (p < 0) {
            return false;
        }
        int c = b[p] & 0xff;
        return c == 0x41 || (c == 0x56 && b[p + 1] != 0);
    }

    /** The position after the value at {@code p}, checking it lies within {@code end} and nests within bounds. */
    private int skip(byte[] b, int p, int end, int depth) throws Violation {
        if (depth > limits.maxNestingDepth()) {
            throw new Violation(DECODE_ERROR, "AMQP values nest deeper than " + limits.maxNestingDepth()
                    + " levels.");
        }
        if (p >= end) {
            throw truncated();
        }
        int c = b[p] & 0xff;
        if (c == 0x00) {
            int value = skip(b, p + 1, end, depth + 1);
            return skip(b, value, end, depth + 1);
        }
        return skipBody(b, c, p + 1, end, depth);
    }

    /** The position after the body, at {@code p}, of a value whose constructor is {@code c}. */
    private int skipBody(byte[] b, int c, int p, int end, int depth) throws Violation {
        long next = switch (c >> 4) {
            case 0x4 -> p;
            case 0x5 -> p + 1L;
            case 0x6 -> p + 2L;
            case 0x7 -> p + 4L;
            case 0x8 -> p + 8L;
            case 0x9 -> p + 16L;
            case 0xa -> p < end ? p + 1L + (b[p] & 0xff) : Long.MAX_VALUE;
            case 0xb -> p + 4 <= end ? p + 4L + u32(b, p) : Long.MAX_VALUE;
            case 0xc, 0xd, 0xe, 0xf -> skipCompound(b, c, p, end, depth);
            default -> throw new Violation(DECODE_ERROR, "Unknown AMQP type constructor 0x"
                    + Integer.toHexString(c) + ".");
        };
        if (next > end) {
            throw truncated();
        }
        return (int) next;
    }

    /** Lists, maps and arrays: the elements are walked one level deeper, within the declared size. */
    private long skipCompound(byte[] b, int c, int p, int end, int depth) throws Violation {
        boolean wide = (c >> 4) == 0xd || (c >> 4) == 0xf;
        int header = wide ? 8 : 2;
        if (p + header > end) {
            throw truncated();
        }
        long size = wide ? u32(b, p) : b[p] & 0xff;
        long count = wide ? u32(b, p + 4) : b[p + 1] & 0xff;
        long stop = p + (wide ? 4L : 1L) + size;
        if (stop > end || size < (wide ? 4 : 1)) {
            throw truncated();
        }
        int limit = (int) stop;
        int q = p + header;
        if ((c >> 4) <= 0xd) {
            if (count > size) {
                throw truncated();
            }
            for (long i = 0; i < count; i++) {
                q = skip(b, q, limit, depth + 1);
            }
            return q == limit ? stop : Long.MAX_VALUE;
        }
        // an array: one constructor (maybe described), then its elements without constructors
        if (q >= limit) {
            throw truncated();
        }
        int element = b[q] & 0xff;
        q++;
        if (element == 0x00) {
            q = skip(b, q, limit, depth + 1);
            if (q >= limit) {
                throw truncated();
            }
            element = b[q] & 0xff;
            q++;
        }
        if ((element >> 4) == 0x4) {
            return stop; // zero-width elements: nothing to walk, however many
        }
        if (count > limit - q) {
            throw truncated();
        }
        for (long i = 0; i < count; i++) {
            q = skipBody(b, element, q, limit, depth + 1);
        }
        return q == limit ? stop : Long.MAX_VALUE;
    }

    private static Violation truncated() {
        return new Violation(DECODE_ERROR, "An AMQP value is malformed or overruns its frame.");
    }

    private static long u32(byte[] b, int p) {
        return ((b[p] & 0xffL) << 24) | ((b[p + 1] & 0xffL) << 16) | ((b[p + 2] & 0xffL) << 8) | (b[p + 3] & 0xffL);
    }
}
