package io.buslane.common.auth;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SasTokenTest {

    @Test
    void keepsTheRawResourceAndDecodesSignatureAndKeyName() {
        SasToken token = SasToken.parse("SharedAccessSignature sr=amqp%3A%2F%2Flocalhost%2Fqueue.1"
                + "&sig=ab%2Bcd%2Fef%3D&se=1700003600&skn=Root%20Manage");

        assertThat(token.resourceRaw()).isEqualTo("amqp%3A%2F%2Flocalhost%2Fqueue.1");
        assertThat(token.resource()).isEqualTo("amqp://localhost/queue.1");
        assertThat(token.signature()).isEqualTo("ab+cd/ef=");
        assertThat(token.expiryRaw()).isEqualTo("1700003600");
        assertThat(token.expirySeconds()).isEqualTo(1_700_003_600L);
        assertThat(token.expiresAtMs()).isEqualTo(1_700_003_600_000L);
        assertThat(token.keyName()).isEqualTo("Root Manage");
        assertThat(token.stringToSign()).isEqualTo("amqp%3A%2F%2Flocalhost%2Fqueue.1\n1700003600");
    }

    @Test
    void acceptsAnyFieldOrderAndPrefixCase() {
        SasToken token = SasToken.parse("  sharedaccesssignature   skn=k&se=42&sr=sb%3a%2f%2fh%2fq&sig=xyz&&  ");

        assertThat(token.resourceRaw()).isEqualTo("sb%3a%2f%2fh%2fq");
        assertThat(token.resource()).isEqualTo("sb://h/q");
        assertThat(token.signature()).isEqualTo("xyz");
        assertThat(token.expirySeconds()).isEqualTo(42);
        assertThat(token.keyName()).isEqualTo("k");
    }

    @Test
    void formDecodesTheResourceButKeepsAPlusInTheSignature() {
        SasToken token = SasToken.parse("SharedAccessSignature sr=a+b%2Bc&sig=ab+c&se=1&skn=k");

        assertThat(token.resource()).isEqualTo("a b+c");
        assertThat(token.signature()).isEqualTo("ab+c");
    }

    @Test
    void toleratesUnknownFieldsAndAFractionalExpiry() {
        SasToken token = SasToken.parse("SharedAccessSignature sr=x&sig=y&se=1700000000.75&skn=k&foo=bar");

        assertThat(token.expirySeconds()).isEqualTo(1_700_000_000L);
        assertThat(token.expiryRaw()).isEqualTo("1700000000.75");
    }

    @Test
    void saturatesAHugeExpiry() {
        SasToken token = SasToken.parse("SharedAccessSignature sr=x&sig=y&se=99999999999999999999999&skn=k");

        assertThat(token.expirySeconds()).isEqualTo(Long.MAX_VALUE);
        assertThat(token.expiresAtMs()).isEqualTo(Long.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "   ",
        "sr=x&sig=y&se=1&skn=k",
        "Bearer sr=x&sig=y&se=1&skn=k",
        "SharedAccessSignaturesr=x&sig=y&se=1&skn=k",
        "SharedAccessSignature",
        "SharedAccessSignature sig=y&se=1&skn=k",
        "SharedAccessSignature sr=&sig=y&se=1&skn=k",
        "SharedAccessSignature sr=x&se=1&skn=k",
        "SharedAccessSignature sr=x&sig=y&skn=k",
        "SharedAccessSignature sr=x&sig=y&se=1",
        "SharedAccessSignature sr=x&sig=y&se=1&skn=",
        "SharedAccessSignature sr=x&sig=y&se=-1&skn=k",
        "SharedAccessSignature sr=x&sig=y&se=soon&skn=k",
        "SharedAccessSignature sr=x&sig=y&se=1&skn=k&sr=z",
        "SharedAccessSignature sr=x&sig=y&se=1&skn=k&garbage",
        "SharedAccessSignature sr=x&sig=y&se=1&skn=k&=v",
    })
    void rejectsMalformedTokens(String token) {
        assertThatThrownBy(() -> SasToken.parse(token))
                .isInstanceOf(AuthException.class)
                .hasMessageStartingWith("MalformedToken: The token is not a valid SAS token: ")
                .satisfies(e -> assertThat(((AuthException) e).statusCode()).isEqualTo(401));
    }

    @Test
    void rejectsNull() {
        assertThatThrownBy(() -> SasToken.parse(null)).isInstanceOf(AuthException.class);
    }

    @Test
    void namesTheMissingField() {
        assertThatThrownBy(() -> SasToken.parse("SharedAccessSignature sr=x&se=1&skn=k"))
                .hasMessageContaining("'sig'");
        assertThatThrownBy(() -> SasToken.parse("SharedAccessSignature sr=x&sig=y&se=1&skn=k&sr=z"))
                .hasMessageContaining("'sr' appears more than once");
    }

    @Test
    void toStringHidesTheSignature() {
        SasToken token = SasToken.parse("SharedAccessSignature sr=x&sig=SECRETSIG&se=1&skn=k");

        assertThat(token.toString()).doesNotContain("SECRETSIG").contains("sr=x", "skn=k");
    }
}
