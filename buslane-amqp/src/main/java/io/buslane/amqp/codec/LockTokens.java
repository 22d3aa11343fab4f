package io.buslane.amqp.codec;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;

/** Lock tokens carried as delivery tags, in the byte order of .NET {@code Guid.ToByteArray()}. */
final class LockTokens {

    private LockTokens() {
    }

    /** Implements {@link AmqpCodec#lockTokenFromDeliveryTag}. */
    static UUID lockTokenFromDeliveryTag(byte[] tag) {
        if (tag == null || tag.length != 16) {
            return null;
        }
        byte[] b = dotNetOrder(tag);
        ByteBuffer bb = ByteBuffer.wrap(b);
        return new UUID(bb.getLong(), bb.getLong());
    }

    /** Implements {@link AmqpCodec#deliveryTag}. */
    static byte[] deliveryTag(UUID lockToken) {
        Objects.requireNonNull(lockToken, "lockToken");
        byte[] b = ByteBuffer.allocate(16)
                .putLong(lockToken.getMostSignificantBits())
                .putLong(lockToken.getLeastSignificantBits())
                .array();
        return dotNetOrder(b);
    }

    /** Swaps between RFC 4122 and .NET GUID byte order (the permutation is its own inverse). */
    private static byte[] dotNetOrder(byte[] b) {
        return new byte[] {
            b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6],
            b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
        };
    }
}
