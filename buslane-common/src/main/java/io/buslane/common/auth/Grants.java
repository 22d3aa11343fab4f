package io.buslane.common.auth;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What one connection has been granted, by audience. Thread-safe (all methods synchronise on this object), though
 * normally confined to the connection's event loop.
 *
 * <p>Each accepted {@code put-token} is recorded under its normalised audience ({@link Audience#normalize}); a new
 * one for the same audience replaces the old one (the SDKs refresh tokens before they expire; JS puts the same
 * token for {@code sb://host/q} and {@code sb://host/q/$management}, which normalise to the same audience). A grant
 * authorises the entities its audience {@linkplain Audience#covers(Audience) covers}: the entity itself, its
 * {@code $management} node and its sub-entities and sub-queues ({@code q/$DeadLetterQueue},
 * {@code q/$Transfer/$DeadLetterQueue}, {@code t/Subscriptions/s}, ...), or everything for a namespace audience.
 *
 * <p>{@link #unrestricted()} (used in {@link AuthMode#ACCEPT_ALL}) allows everything from the start.
 */
public final class Grants {

    /**
     * One recorded grant.
     *
     * @param audience    the normalised audience the token was put for (the scope it authorises)
     * @param keyName     the rule that signed the token
     * @param rights      the rights, implications included
     * @param expiresAtMs when it expires (epoch ms; {@link Long#MAX_VALUE} for never)
     * @param entityRule  whether an entity's own rule signed the token: it covers exactly that entity
     *                    ({@link Audience#coversEntity})
     */
    public record Entry(Audience audience, String keyName, Set<Right> rights, long expiresAtMs, boolean entityRule) {

        public Entry {
            Objects.requireNonNull(audience, "audience");
            Objects.requireNonNull(keyName, "keyName");
            rights = Right.expand(Objects.requireNonNull(rights, "rights"));
        }

        /** Whether this entry is unexpired at {@code nowMs}. */
        public boolean isValidAt(long nowMs) {
            return expiresAtMs > nowMs;
        }

        /** Whether this entry's audience covers {@code target}, as its rule covers. */
        public boolean covers(Audience target) {
            return entityRule ? audience.coversEntity(target) : audience.covers(target);
        }
    }

    private final boolean unrestricted;
    private final Map<String, Entry> byAudience = new LinkedHashMap<>();
    private boolean acceptedToken;

    /** An empty record: nothing is allowed until a token is put. */
    public Grants() {
        this(false);
    }

    private Grants(boolean unrestricted) {
        this.unrestricted = unrestricted;
    }

    /** A record that allows every entity and right, with no token and no expiry ({@link AuthMode#ACCEPT_ALL}). */
    public static Grants unrestricted() {
        return new Grants(true);
    }

    public boolean isUnrestricted() {
        return unrestricted;
    }

    /**
     * Records {@code grant} for {@code audience} (a raw audience, URI or path; {@code ""} for the whole namespace),
     * replacing any earlier grant for the same normalised audience. The caller has checked that the grant's scope
     * covers the audience.
     */
    public synchronized void record(String audience, Grant grant) {
        Objects.requireNonNull(grant, "grant");
        Audience normalised = Audience.parse(Objects.requireNonNull(audience, "audience"));
        byAudience.put(normalised.toString(),
                new Entry(normalised, grant.keyName(), grant.rights(), grant.expiresAtMs(), grant.entityRule()));
        acceptedToken = true;
    }

    /**
     * Whether an unexpired grant covers {@code entityPath} with {@code right}.
     *
     * @param entityPath a link address in any of the SDK forms ({@code queue.1}, {@code /queue.1},
     *                   {@code amqps://host/queue.1}, {@code topic/Subscriptions/s/$DeadLetterQueue},
     *                   {@code queue.1/$management}, ...)
     */
    public synchronized boolean allows(String entityPath, Right right, long nowMs) {
        Objects.requireNonNull(right, "right");
        if (unrestricted) {
            return true;
        }
        Audience target;
        try {
            target = Audience.parse(Objects.requireNonNull(entityPath, "entityPath"));
        } catch (BrokerException notCanonical) {
            return false; // nothing is granted on what names no entity
        }
        return allows(target, right, nowMs);
    }

    /** Whether an unexpired grant covers the canonical address {@code address} with {@code right}. */
    public synchronized boolean allows(CanonicalAddress address, Right right, long nowMs) {
        Objects.requireNonNull(right, "right");
        return unrestricted || allows(Audience.of(Objects.requireNonNull(address, "address")), right, nowMs);
    }

    private boolean allows(Audience target, Right right, long nowMs) {
        if (unrestricted) {
            return true;
        }
        for (Entry entry : byAudience.values()) {
            if (entry.isValidAt(nowMs) && entry.rights().contains(right) && entry.covers(target)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Like {@link #allows} but throws, with a description for the link's detach error.
     *
     * @throws AuthException (401, {@code amqp:unauthorized-access}) saying whether no token covers the entity,
     *                       the covering tokens have expired, or the right is missing
     */
    public synchronized void check(String entityPath, Right right, long nowMs) {
        if (allows(entityPath, right, nowMs)) {
            return;
        }
        Audience target = Audience.parse(entityPath); // throws the parse's own error for a non-canonical path
        boolean covered = false;
        boolean unexpired = false;
        for (Entry entry : byAudience.values()) {
            if (entry.covers(target)) {
                covered = true;
                unexpired |= entry.isValidAt(nowMs);
            }
        }
        if (!covered) {
            throw new AuthException("Unauthorized access. No token authorises '" + entityPath
                    + "'; put a token for it on $cbs first.");
        }
        if (!unexpired) {
            throw new AuthException("ExpiredToken: The token for '" + entityPath + "' has expired.");
        }
        throw new AuthException("Unauthorized access. '" + right.displayName()
                + "' claim(s) are required to perform this operation. Resource: '" + entityPath + "'.");
    }

    /**
     * The earliest expiry among the recorded grants (epoch ms), or {@link Long#MAX_VALUE} if there is none or none
     * expires. A grant already expired but not yet {@linkplain #removeExpired removed} counts, so the link layer
     * should call {@link #removeExpired(long)} when this time is reached, then re-check its links.
     */
    public synchronized long nextExpiryMs() {
        long next = Long.MAX_VALUE;
        for (Entry entry : byAudience.values()) {
            next = Math.min(next, entry.expiresAtMs());
        }
        return next;
    }

    /** Removes the grants expired at {@code nowMs} and returns them (for logging and link detaching). */
    public synchronized List<Entry> removeExpired(long nowMs) {
        List<Entry> removed = new ArrayList<>();
        for (Iterator<Entry> it = byAudience.values().iterator(); it.hasNext(); ) {
            Entry entry = it.next();
            if (!entry.isValidAt(nowMs)) {
                removed.add(entry);
                it.remove();
            }
        }
        return removed;
    }

    /** The recorded grants, in the order their audiences were first granted. */
    public synchronized List<Entry> entries() {
        return List.copyOf(byAudience.values());
    }

    /**
     * Whether any token (or SASL credential) has ever been accepted on this connection — for the rule that a
     * connection without a valid token within 20 s is closed (wire protocol §2.6). Always true when
     * {@linkplain #unrestricted() unrestricted}.
     */
    public synchronized boolean hasAcceptedToken() {
        return unrestricted || acceptedToken;
    }
}
