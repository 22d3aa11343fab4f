package io.buslane.common.auth;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Builds SAS tokens exactly as each official SDK does (wire protocol §2.4–2.5), independently of the main code's
 * signing, so the tests check interoperability rather than agreement with themselves.
 */
final class SdkTokens {

    static final String KEY_NAME = "RootManageSharedAccessKey";
    static final String KEY = "SAS_KEY_VALUE";

    private SdkTokens() {
    }

    /**
     * Java {@code ServiceBusSharedKeyCredential}: {@code URLEncoder.encode(audience, UTF_8)} ({@code +} for space,
     * {@code %2F}), sig and skn URL-encoded the same way; order sr, sig, se, skn.
     */
    static String java(String audience, String keyName, String key, long expirySeconds) {
        String sr = URLEncoder.encode(audience, StandardCharsets.UTF_8);
        String se = Long.toString(expirySeconds);
        String sig = hmac(key, sr + "\n" + se);
        return "SharedAccessSignature sr=" + sr + "&sig=" + URLEncoder.encode(sig, StandardCharsets.UTF_8)
                + "&se=" + URLEncoder.encode(se, StandardCharsets.UTF_8)
                + "&skn=" + URLEncoder.encode(keyName, StandardCharsets.UTF_8);
    }

    /** JS core-amqp {@code createToken}: {@code encodeURIComponent} on audience, key name and signature. */
    static String js(String audience, String keyName, String key, long expirySeconds) {
        String sr = encodeUriComponent(audience);
        String sig = encodeUriComponent(hmac(key, sr + "\n" + expirySeconds));
        return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + expirySeconds + "&skn="
                + encodeUriComponent(keyName);
    }

    /**
     * Python pyamqp {@code generate_sas_token}: signs {@code quote_plus(audience)}, then
     * {@code urlencode({'sr': audience, 'sig': signature, 'se': str(ttl), 'skn': quote_plus(policy)})}.
     */
    static String python(String audience, String keyName, String key, long expirySeconds) {
        String encodedUri = quotePlus(audience);
        String se = Long.toString(expirySeconds);
        String sig = hmac(key, encodedUri + "\n" + se);
        return "SharedAccessSignature sr=" + quotePlus(audience) + "&sig=" + quotePlus(sig) + "&se=" + quotePlus(se)
                + "&skn=" + quotePlus(quotePlus(keyName));
    }

    /**
     * .NET {@code SharedAccessSignature}: the connection-level resource lower-cased (e.g. {@code amqps://localhost/}),
     * {@code WebUtility.UrlEncode} (upper-case hex, {@code +} for space, {@code -_.!*()} unescaped); order sr, sig,
     * se, skn.
     */
    static String dotnet(String resource, String keyName, String key, long expirySeconds) {
        String sr = webUtilityUrlEncode(resource.toLowerCase(Locale.ROOT));
        String se = Long.toString(expirySeconds);
        String sig = hmac(key, sr + "\n" + se);
        return "SharedAccessSignature sr=" + sr + "&sig=" + webUtilityUrlEncode(sig) + "&se="
                + webUtilityUrlEncode(se) + "&skn=" + webUtilityUrlEncode(keyName);
    }

    /** Signs {@code sr=<srRaw>} as given, for tokens with a hand-made encoding. */
    static String raw(String srRaw, String keyName, String key, long expirySeconds) {
        String sig = hmac(key, srRaw + "\n" + expirySeconds);
        return "SharedAccessSignature sr=" + srRaw + "&sig=" + encodeUriComponent(sig) + "&se=" + expirySeconds
                + "&skn=" + keyName;
    }

    static String hmac(String key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return Base64.getEncoder().encodeToString(mac.doFinal(data.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** JavaScript {@code encodeURIComponent}: keeps {@code A-Z a-z 0-9 - _ . ! ~ * ' ( )}. */
    static String encodeUriComponent(String text) {
        return percentEncode(text, "-_.!~*'()", false, false);
    }

    /** Python {@code urllib.parse.quote_plus} (safe=''): keeps {@code A-Z a-z 0-9 _ . - ~}, space as {@code +}. */
    static String quotePlus(String text) {
        return percentEncode(text, "_.-~", true, false);
    }

    /** .NET {@code WebUtility.UrlEncode}: keeps {@code A-Z a-z 0-9 - _ . ! * ( )}, space as {@code +}. */
    static String webUtilityUrlEncode(String text) {
        return percentEncode(text, "-_.!*()", true, false);
    }

    static String percentEncode(String text, String safe, boolean spaceAsPlus, boolean lowerHex) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || (c < 128 && safe.indexOf(c) >= 0)) {
                out.append((char) c);
            } else if (c == ' ' && spaceAsPlus) {
                out.append('+');
            } else {
                String hex = String.format(Locale.ROOT, "%%%02X", c);
                out.append(lowerHex ? hex.toLowerCase(Locale.ROOT) : hex);
            }
        }
        return out.toString();
    }
}
