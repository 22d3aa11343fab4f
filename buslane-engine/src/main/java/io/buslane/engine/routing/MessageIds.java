package io.buslane.engine.routing;

import io.buslane.engine.message.Message;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Service Bus gives every message a MessageId: when the sender set none, the broker assigns one (a GUID as 32
 * hex digits). Clients rely on it: the JavaScript SDK keys its lock renewal by MessageId and fails to close a
 * receiver that got a message without one.
 */
public final class MessageIds {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private MessageIds() {
    }

    /** The message itself when it has a MessageId, else a copy with a new one; the encoded size is the sender's. */
    public static Message withMessageId(Message m) {
        if (m.messageId() != null) {
            return m;
        }
        return m.toBuilder().messageId(newMessageId()).encodedSize(m.encodedSize()).build();
    }

    /**
     * A random (version 4 layout) GUID as 32 lower-case hex digits. A MessageId needs uniqueness, not secrecy:
     * {@code UUID.randomUUID()} draws from {@code SecureRandom} (a synchronized read of the OS entropy source),
     * which the broker benchmark's profile showed at about 11 % of the broker's CPU on pipelined sends without
     * MessageIds; {@link ThreadLocalRandom} costs a few nanoseconds and does not contend.
     */
    public static String newMessageId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long hi = (r.nextLong() & ~0xF000L) | 0x4000L;
        long lo = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        char[] c = new char[32];
        for (int i = 0; i < 16; i++) {
            c[i] = HEX[(int) (hi >>> (60 - 4 * i)) & 0xF];
            c[16 + i] = HEX[(int) (lo >>> (60 - 4 * i)) & 0xF];
        }
        return new String(c);
    }
}
