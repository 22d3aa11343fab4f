package io.buslane.journal.postgres;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.SharedJournal;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A journal every node writes (cluster mode's metadata): optimistic writes, conflicts, reading again. */
class PostgresSharedJournalTest {

    private static List<String> replay(SharedJournal j) {
        List<String> out = new ArrayList<>();
        j.replay(r -> out.add(r.kind() + ":" + r.id() + ":" + new String(r.payload(), StandardCharsets.UTF_8)));
        return out;
    }

    private static JournalRecord add(long id, String text) {
        return JournalRecord.add(id, (byte) 1, text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aWriteBasedOnAStaleReadIsRefusedUntilTheWriterReadsAgain() {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = new PostgresJournalFactory(
                PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresJournalFactory b = new PostgresJournalFactory(
                     PostgresTestDatabase.options(url, "node-b", Duration.ofSeconds(5)))) {
            SharedJournal ja = a.openShared("meta");
            SharedJournal jb = b.openShared("meta");
            assertThat(replay(ja)).isEmpty();
            assertThat(replay(jb)).isEmpty();

            ja.append(add(1, "queue-1 by a"));
            ja.sync();
            assertThat(ja.changedElsewhere()).isFalse();
            assertThat(jb.changedElsewhere()).isTrue();

            jb.append(add(1, "queue-1 by b"));
            assertThatThrownBy(jb::sync).isInstanceOf(JournalException.class)
                    .satisfies(e -> assertThat(((JournalException) e).reason())
                            .isEqualTo(JournalException.Reason.CONFLICT));
            assertThat(replay(jb)).containsExactly("ADD:1:queue-1 by a");
            jb.append(add(2, "queue-2 by b"));
            jb.append(JournalRecord.delete(1));
            jb.sync();

            assertThat(ja.changedElsewhere()).isTrue();
            assertThat(replay(ja)).containsExactly("ADD:2:queue-2 by b");
            ja.append(add(3, "queue-3 by a"));
            ja.sync();
            // neither node's records were lost or written twice; a node that opens it now reads the same
            try (PostgresJournalFactory c = new PostgresJournalFactory(
                    PostgresTestDatabase.options(url, "node-c", Duration.ofSeconds(5)))) {
                assertThat(replay(c.openShared("meta"))).containsExactly("ADD:2:queue-2 by b", "ADD:3:queue-3 by a");
                // a shared journal holds no lease: nobody "owns" the metadata
                assertThat(c.membership("c", Duration.ofSeconds(5)).leases().get("meta").owner()).isNull();
            }
        }
    }
}
