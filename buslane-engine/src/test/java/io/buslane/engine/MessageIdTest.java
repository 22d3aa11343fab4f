package io.buslane.engine;

import io.buslane.engine.routing.MessageIds;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The MessageId the broker gives a message sent without one: a version-4 GUID as 32 lower-case hex digits. */
class MessageIdTest {

    @Test
    void generatedIdsAreVersion4GuidsIn32HexDigitsAndDistinct() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            String id = MessageIds.newMessageId();
            assertThat(id).matches("[0-9a-f]{32}");
            UUID uuid = UUID.fromString(id.replaceFirst("(.{8})(.{4})(.{4})(.{4})(.{12})", "$1-$2-$3-$4-$5"));
            assertThat(uuid.version()).isEqualTo(4);
            assertThat(uuid.variant()).isEqualTo(2);
            assertThat(seen.add(id)).isTrue();
        }
    }
}
