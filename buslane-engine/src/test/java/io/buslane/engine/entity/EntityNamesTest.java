package io.buslane.engine.entity;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Names and sizes the service refuses are refused too: no look-alike, path-rewriting or unbounded values. */
class EntityNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"..", "a/..", "../a", "a/../b", "a..b", ".", "a/./b", "./a", "a/.",
            "a\u200Bb", "a\u200Cb", "a\u200Db", "a\uFEFFb", "a\u2060b", "a\u00ADb",
            "a\u202Ab", "a\u202Bb", "a\u202Cb", "a\u202Db", "a\u202Eb", "a\u2066b", "a\u2067b", "a\u2068b", "a\u2069b",
            "a\u0000b", "a\u0007b", "a\u001Fb", "a\u007Fb", "a\u0085b", "a\tb", "a\nb", "a\u00A0b", "a\u2028b",
            "a\u3000b", "a\uD800b", "a\uE000b", "a\uFFFFb", "a/", "/a", "a//b"})
    void lookAlikeAndPathRewritingQueueAndTopicNamesAreRefused(String name) {
        assertThatThrownBy(() -> QueueProperties.builder(name).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TopicProperties.builder(name).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SubscriptionProperties.builder(name, "s").build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"..", ".", "a..b", "a/b", "a\\b", "a\u200Bb", "a\u202Eb", "a\u2066b", "a\uFEFFb",
            "a\u0001b", "a\u00A0b"})
    void subscriptionAndRuleNamesAreSingleVisibleSegments(String name) {
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", name).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RuleProperties(name, RuleProperties.TrueFilter.INSTANCE, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a.b", "a.b.c", "app/orders~v1", "a/b.c/d-e_f~g", "x", "Übersicht", "注文",
            "a\uD83D\uDE00b", "v1.0/queue.1"})
    void ordinaryNamesStillPass(String name) {
        assertThatCode(() -> QueueProperties.builder(name).build()).doesNotThrowAnyException();
        assertThatCode(() -> TopicProperties.builder(name).build()).doesNotThrowAnyException();
        if (!name.contains("/")) {
            assertThatCode(() -> SubscriptionProperties.builder("t", name).build()).doesNotThrowAnyException();
            assertThatCode(() -> new RuleProperties(name, RuleProperties.TrueFilter.INSTANCE, null))
                    .doesNotThrowAnyException();
        }
    }

    @Test
    void invisibleCharactersAreShownAsCodePointsInTheMessage() {
        assertThatThrownBy(() -> QueueProperties.builder("pay\u202Eroll").build())
                .hasMessage("The entity path 'payU+202Eroll' contains the character U+202E, which is not allowed.");
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "a\u200Bb").build())
                .hasMessage("The subscription name 'aU+200Bb' contains the character U+200B, which is not allowed.");
        assertThatThrownBy(() -> QueueProperties.builder("my queue").build())
                .hasMessageContaining("contains the character ' ', which is not allowed");
        assertThatThrownBy(() -> QueueProperties.builder("a/../b").build())
                .hasMessage("The entity path 'a/../b' contains the sequence '..', which is not allowed.");
        assertThatThrownBy(() -> QueueProperties.builder("\u200B".repeat(300)).build())
                .hasMessageContaining("exceeds the maximum length of 260").hasMessageNotContaining("\u200B");
    }

    @Test
    void sizePropertiesHaveTheServicesUpperBounds() {
        assertThatCode(() -> QueueProperties.builder("q").maxSizeInMegabytes(Limits.MAX_SIZE_MB)
                .maxMessageSizeInKilobytes(Limits.MAX_MESSAGE_SIZE_KB).build()).doesNotThrowAnyException();
        assertThatThrownBy(() -> QueueProperties.builder("q").maxSizeInMegabytes(Limits.MAX_SIZE_MB + 1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MaxSizeInMegabytes must be at most 81920, was 81921");
        assertThatThrownBy(() -> TopicProperties.builder("t").maxSizeInMegabytes(Long.MAX_VALUE).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QueueProperties.builder("q").maxMessageSizeInKilobytes(Limits.MAX_MESSAGE_SIZE_KB + 1)
                .build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MaxMessageSizeInKilobytes must be at most 102400, was 102401");
        assertThatThrownBy(() -> TopicProperties.builder("t").maxMessageSizeInKilobytes(Integer.MAX_VALUE).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QueueProperties.builder("q").maxSizeInMegabytes(0).build())
                .hasMessage("MaxSizeInMegabytes must be positive, was 0");
    }

    @Test
    void userMetadataIsAtMost1024Characters() {
        String max = "m".repeat(Limits.MAX_USER_METADATA_LENGTH);
        assertThatCode(() -> QueueProperties.builder("q").userMetadata(max).build()).doesNotThrowAnyException();
        assertThatCode(() -> TopicProperties.builder("t").userMetadata(max).build()).doesNotThrowAnyException();
        assertThatCode(() -> SubscriptionProperties.builder("t", "s").userMetadata(max).build())
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> QueueProperties.builder("q").userMetadata(max + "m").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("UserMetadata must be at most 1024");
        assertThatThrownBy(() -> TopicProperties.builder("t").userMetadata(max + "m").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "s").userMetadata(max + "m").build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void printableLeavesOrdinaryNamesAlone() {
        assertThat(EntityNames.printable("orders/v1.2~x ü")).isEqualTo("orders/v1.2~x ü");
        assertThat(EntityNames.printable("a\u2066b\uD800")).isEqualTo("aU+2066bU+D800");
    }
}
