package io.buslane.common.auth;

import io.buslane.common.address.PercentDecoding;

import java.util.Locale;
import java.util.Objects;

/**
 * A parsed Shared Access Signature token:
 * {@code SharedAccessSignature sr=<url-encoded resource>&sig=<url-encoded base64>&se=<unix seconds>&skn=<key name>}
 * (wire protocol §2.5).
 *
 * <p>The fields may come in any order; the prefix is matched case-insensitively and may be followed by any run of
 * whitespace; field names are matched case-insensitively; unknown fields and empty {@code &&} pieces are ignored.
 * {@code sr} is kept <em>exactly</em> as it appears, because the SDKs sign that text and their URL encoders differ
 * (Java {@code URLEncoder}, JS {@code encodeURIComponent}, Python {@code quote_plus}, .NET
 * {@code WebUtility.UrlEncode}): it must never be re-encoded. {@code sig} and {@code skn} are URL-decoded once.
 *
 * @param resourceRaw   the {@code sr} value exactly as in the token (the signed text)
 * @param signature     the URL-decoded {@code sig}: the base64 HMAC-SHA256 signature
 * @param expiryRaw     the {@code se} value exactly as in the token (the signed text)
 * @param expirySeconds {@code se} as Unix seconds (a fractional part, if any, is dropped)
 * @param keyName       the URL-decoded {@code skn}
 */
public record SasToken(String resourceRaw, String signature, String expiryRaw, long expirySeconds, String keyName) {

    /** The token prefix (matched case-insensitively). */
    public static final String PREFIX = "SharedAccessSignature";

    public SasToken {
        Objects.requireNonNull(resourceRaw, "resourceRaw");
        Objects.requireNonNull(signature, "signature");
        Objects.requireNonNull(expiryRaw, "expiryRaw");
        Objects.requireNonNull(keyName, "keyName");
    }

    /** The key name ({@code skn}) of {@code token}, or {@code ""} when it is not a well-formed SAS token. */
    public static String keyNameOf(String token) {
        try {
            return parse(token).keyName();
        } catch (AuthException notSas) {
            return "";
        }
    }

    /**
     * Parses a token.
     *
     * @throws AuthException (401) when the token is not a well-formed SAS token
     */
    public static SasToken parse(String token) {
        if (token == null || token.isBlank()) {
            throw malformed("the token is empty.");
        }
        String text = token.strip();
        if (text.length() <= PREFIX.length() || !text.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                || !Character.isWhitespace(text.charAt(PREFIX.length()))) {
            throw malformed("a SAS token must start with '" + PREFIX + " '.");
        }
        String fields = text.substring(PREFIX.length()).strip();
        String sr = null;
        String sig = null;
        String se = null;
        String skn = null;
        for (String piece : fields.split("&", -1)) {
            if (piece.isEmpty()) {
                continue;
            }
            int eq = piece.indexOf('=');
            if (eq <= 0) {
                throw malformed("the field '" + piece + "' is not of the form name=value.");
            }
            String name = piece.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            String value = piece.substring(eq + 1);
            switch (name) {
                case "sr" -> sr = once(sr, "sr", value);
                case "sig" -> sig = once(sig, "sig", value);
                case "se" -> se = once(se, "se", value);
                case "skn" -> skn = once(skn, "skn", value);
                default -> {
                    // Unknown fields are tolerated (and not signed).
                }
            }
        }
        requirePresent(sr, "sr", "the signed resource");
        requirePresent(sig, "sig", "the signature");
        requirePresent(se, "se", "the expiry");
        requirePresent(skn, "skn", "the key name");
        String keyName = PercentDecoding.decode(skn, true);
        if (keyName.isBlank()) {
            throw malformed("the key name 'skn' is empty.");
        }
        return new SasToken(sr, PercentDecoding.decode(sig, false), se, parseExpiry(se), keyName);
    }

    /**
     * The signed resource URL-decoded once (form decoding, {@code +} as space): normally the audience URI the
     * client signed for, e.g. {@code amqp://localhost/queue.1} or {@code amqps://localhost/}.
     */
    public String resource() {
        return PercentDecoding.decode(resourceRaw, true);
    }

    /** The text the SDKs sign: {@code sr_as_in_token + "\n" + se_as_in_token}. */
    public String stringToSign() {
        return resourceRaw + "\n" + expiryRaw;
    }

    /** The expiry in epoch milliseconds, saturated at {@link Long#MAX_VALUE}. */
    public long expiresAtMs() {
        return expirySeconds > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : expirySeconds * 1000;
    }

    /** Keeps the signature out of logs. */
    @Override
    public String toString() {
        return "SasToken[sr=" + resourceRaw + ", se=" + expiryRaw + ", skn=" + keyName + "]";
    }

    private static String once(String previous, String name, String value) {
        if (previous != null) {
            throw malformed("the field '" + name + "' appears more than once.");
        }
        return value;
    }

    private static void requirePresent(String value, String name, String what) {
        if (value == null || value.isEmpty()) {
            throw malformed("the field '" + name + "' (" + what + ") is missing or empty.");
        }
    }

    private static long parseExpiry(String se) {
        String text = PercentDecoding.decode(se, false).strip();
        int dot = text.indexOf('.');
        String whole = dot >= 0 ? text.substring(0, dot) : text;
        String fraction = dot >= 0 ? text.substring(dot + 1) : "";
        if (whole.isEmpty() || !digits(whole) || !digits(fraction)) {
            throw malformed("the expiry 'se' must be Unix time in seconds, not '" + se + "'.");
        }
        whole = whole.replaceFirst("^0+(?=.)", "");
        if (whole.length() > 18) {
            return Long.MAX_VALUE;
        }
        return Long.parseLong(whole);
    }

    private static boolean digits(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static AuthException malformed(String reason) {
        return new AuthException("MalformedToken: The token is not a valid SAS token: " + reason);
    }
}
