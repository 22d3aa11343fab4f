package io.buslane.management.atom;

import io.buslane.common.auth.Right;
import io.buslane.engine.entity.AuthorizationRule;
import org.w3c.dom.Element;

import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A queue's or topic's {@code AuthorizationRules} in the admin API: a list of
 * {@code <AuthorizationRule i:type="SharedAccessAuthorizationRule">} with {@code ClaimType}, {@code ClaimValue},
 * {@code Rights} (one {@code AccessRights} per right), {@code CreatedTime}, {@code ModifiedTime}, {@code KeyName},
 * {@code PrimaryKey} and {@code SecondaryKey}, in the order the service writes them.
 */
final class AuthorizationRulesXml {

    static final String TYPE = "SharedAccessAuthorizationRule";
    private static final SecureRandom RANDOM = new SecureRandom();

    private AuthorizationRulesXml() {
    }

    /**
     * The rules in an {@code AuthorizationRules} element. A rule without keys gets generated ones (256 random bits,
     * Base64, as the SDKs generate them); one without times gets {@code nowMs}.
     *
     * @throws IllegalArgumentException for another kind of rule, an unknown right or a malformed time
     */
    static List<AuthorizationRule> read(Element rulesElement, long nowMs) {
        List<AuthorizationRule> rules = new ArrayList<>();
        for (Element r : AtomReader.children(rulesElement, "AuthorizationRule")) {
            String type = r.getAttributeNS(Xmlns.XSI, "type");
            if (!type.isEmpty() && !TYPE.equals(type.substring(type.indexOf(':') + 1))) {
                throw new IllegalArgumentException("Only SharedAccessAuthorizationRule authorization rules are "
                        + "supported, found '" + type + "'.");
            }
            Fields f = new Fields(r);
            Set<Right> rights = new LinkedHashSet<>(); // kept in the order sent, as the service echoes it
            Element rightsElement = AtomReader.child(r, "Rights");
            if (rightsElement != null) {
                for (Element a : AtomReader.children(rightsElement, "AccessRights")) {
                    rights.add(right(a.getTextContent().trim()));
                }
            }
            String primary = f.text("PrimaryKey");
            String secondary = f.text("SecondaryKey");
            rules.add(new AuthorizationRule(f.text("KeyName"), primary != null ? primary : newKey(),
                    secondary != null ? secondary : newKey(), rights, f.text("ClaimType"), f.text("ClaimValue"),
                    time(f.text("CreatedTime"), nowMs), time(f.text("ModifiedTime"), nowMs)));
        }
        return rules;
    }

    private static Right right(String name) {
        for (Right right : Right.values()) {
            if (right.displayName().equalsIgnoreCase(name)) {
                return right;
            }
        }
        throw new IllegalArgumentException("Unknown access right '" + name + "': use Listen, Send or Manage.");
    }

    private static long time(String text, long nowMs) {
        if (text == null || text.isBlank() || text.startsWith("0001-01-01")) {
            return nowMs;
        }
        try {
            return OffsetDateTime.parse(text.trim()).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("The authorization rule time '" + text + "' is not an ISO-8601 "
                    + "date and time.", e);
        }
    }

    private static String newKey() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    /** Writes the element (empty when there is no rule); the {@code i} prefix is declared by the description. */
    static void write(XmlOut o, List<AuthorizationRule> rules) {
        if (rules.isEmpty()) {
            o.empty("AuthorizationRules");
            return;
        }
        o.open("AuthorizationRules");
        for (AuthorizationRule a : rules) {
            o.open("AuthorizationRule").attribute("i", Xmlns.XSI, "type", TYPE);
            o.leaf("ClaimType", a.claimType());
            o.leaf("ClaimValue", a.claimValue());
            o.open("Rights");
            for (Right right : a.rights()) {
                o.leaf("AccessRights", right.displayName());
            }
            o.close();
            o.leaf("CreatedTime", XmlTimes.format(a.createdAtMs()));
            o.leaf("ModifiedTime", XmlTimes.format(a.modifiedAtMs()));
            o.leaf("KeyName", a.keyName());
            o.leaf("PrimaryKey", a.primaryKey());
            o.leaf("SecondaryKey", a.secondaryKey());
            o.close();
        }
        o.close();
    }
}
