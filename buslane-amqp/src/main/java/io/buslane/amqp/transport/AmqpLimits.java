package io.buslane.amqp.transport;

/**
 * What one AMQP connection may hold or take, before and after it authenticates. Every limit here bounds a resource
 * a client could otherwise claim without end (heap, event-loop time, connection slots); docs/limits.md lists them with
 * their flags. Immutable.
 *
 * @param handshakeTimeoutMs       a connection must have sent its protocol header(s), finished SASL and opened
 *                                 within this time, or it is closed
 * @param authTimeoutMs            a connection must have put an accepted token (or authenticated with SASL PLAIN)
 *                                 within this time, or it is closed with {@code amqp:unauthorized-access}
 * @param maxSessions              sessions one connection may have open at once (the advertised channel-max is
 *                                 one less)
 * @param maxLinksPerSession       links one session may have attached at once (the advertised handle-max is one
 *                                 less)
 * @param maxLinks                 links one connection may have attached at once, over all its sessions
 * @param maxBufferedBytes         bytes of unfinished (multi-frame) deliveries one authenticated connection may
 *                                 have in flight at once
 * @param maxPreAuthBufferedBytes  the same for a connection that has not authenticated yet
 * @param maxDispositionRange      deliveries one disposition frame may name ({@code last - first + 1})
 * @param maxNestingDepth          how deeply the AMQP values of one performative or request may nest
 */
public record AmqpLimits(long handshakeTimeoutMs, long authTimeoutMs, int maxSessions, int maxLinksPerSession,
                         int maxLinks, long maxBufferedBytes, long maxPreAuthBufferedBytes, long maxDispositionRange,
                         int maxNestingDepth) {

    public AmqpLimits {
        if (maxSessions < 1 || maxSessions > 65_536) {
            throw new IllegalArgumentException("maxSessions must be within 1..65536, was " + maxSessions);
        }
        if (maxLinksPerSession < 1 || maxLinks < 1) {
            throw new IllegalArgumentException("link limits must be positive");
        }
        if (handshakeTimeoutMs < 1 || authTimeoutMs < 1 || maxBufferedBytes < 1 || maxPreAuthBufferedBytes < 1
                || maxDispositionRange < 1 || maxNestingDepth < 4) {
            throw new IllegalArgumentException("AMQP limits must be positive (nesting at least 4): " + this);
        }
    }

    /**
     * Ten seconds to open, twenty to authenticate (the service closes a connection without a valid token after 20 s);
     * 1,024 sessions and 4,096 links; 128 MiB of unfinished deliveries (64 KiB before authenticating).
     */
    public static AmqpLimits defaults() {
        return new AmqpLimits(10_000, 20_000, 1_024, 1_024, 4_096, 128L << 20, 64L << 10, 65_536, 32);
    }

    /** The highest channel number a client may use: advertised in the broker's open. */
    public int channelMax() {
        return maxSessions - 1;
    }

    /** The highest link handle a client may use on a session: advertised in the broker's begin. */
    public long handleMax() {
        return maxLinksPerSession - 1L;
    }
}
