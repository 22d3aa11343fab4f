package io.buslane.management.atom;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.engine.Engine;

import java.util.Objects;

/**
 * The token that sets an auto-forwarding target must manage the target too (that the target exists is the
 * engine's rule, in {@code Namespace}, refused as a bad argument): a Manage token scoped to entity A cannot make A
 * forward into an entity B it has no rights on (the service requires rights on the target; docs/security.md). A
 * target that is already set and stays the same needs no new check; Config.json, read by the operator's broker, is
 * not a request and is exempt. Every check runs before anything changes.
 */
final class Forwarding {

    private Forwarding() {
    }

    /**
     * Checks the forwarding targets a create or update writes.
     *
     * @param r        the request: its grant (null: not checked, as for a broker's own configuration) and its
     *                 supplementary tokens for the targets
     * @param previous the entity's current targets ({@code ForwardTo}, {@code ForwardDeadLetteredMessagesTo}), or
     *                 nulls on create
     */
    static void requireTargets(Engine engine, AdminRequest r, String forwardTo, String forwardDeadLetteredMessagesTo,
                               String previousForwardTo, String previousForwardDeadLetteredMessagesTo) {
        requireManaged(engine, r, r.supplementary().forwardTo(), forwardTo, previousForwardTo, "ForwardTo");
        requireManaged(engine, r, r.supplementary().forwardDeadLetter(), forwardDeadLetteredMessagesTo,
                previousForwardDeadLetteredMessagesTo, "ForwardDeadLetteredMessagesTo");
    }

    /**
     * The target must be covered, with the Manage right, by the request's own token or by the supplementary token
     * the SDK sent for it. The JavaScript SDK signs the supplementary token for the namespace's host name without a
     * scheme ({@code localhost}), which the canonical parser reads as an entity name: such a supplementary token
     * covers the namespace when it was signed with a namespace rule, its resource is the host the request addressed
     * (with or without the port), and no queue or topic bears that name (so that a token scoped to an entity never
     * reaches beyond it, whatever {@code Host} header a client sends). The request's own token is never read so.
     */
    private static void requireManaged(Engine engine, AdminRequest r, Grant supplementary, String target,
                                       String previous, String property) {
        Grant grant = r.grant();
        if (grant == null || target == null || (previous != null && previous.equalsIgnoreCase(target))) {
            return;
        }
        if (manages(grant, target) || (supplementary != null && (manages(supplementary, target)
                || managesNamespaceByHost(engine, supplementary, r)))) {
            return;
        }
        throw new AuthException("Unauthorized access. Setting " + property + " to '" + target + "' needs a "
                + "token with the 'Manage' claim that covers '" + target + "'.");
    }

    private static boolean manages(Grant g, String target) {
        return g.has(Right.MANAGE) && g.covers(Objects.requireNonNull(target));
    }

    private static boolean managesNamespaceByHost(Engine engine, Grant g, AdminRequest r) {
        String scope = g.scope();
        boolean addressedHost = scope.equalsIgnoreCase(r.hostName()) || scope.equalsIgnoreCase(r.host());
        return addressedHost && g.has(Right.MANAGE) && !g.entityRule() && engine.queue(scope) == null
                && engine.topic(scope) == null;
    }
}
