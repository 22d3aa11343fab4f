package io.buslane.journal.file;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The data directory: lock, format file, one subdirectory per journal name. */
class FileJournalFactoryTest {

    @TempDir
    Path dataDirectory;

    private String inUseMessage() {
        Path absolute = dataDirectory.toAbsolutePath();
        return "data directory " + absolute + " is in use by another Buslane process (lock file "
                + absolute.resolve("lock") + ")";
    }

    @Test
    void secondFactoryOnALockedDirectoryFailsWithAClearMessage() {
        try (FileJournalFactory first = new FileJournalFactory(dataDirectory)) {
            assertThatThrownBy(() -> new FileJournalFactory(dataDirectory))
                    .isInstanceOf(JournalException.class)
                    .hasMessage(inUseMessage());
            assertThat(first.dataDirectory()).isEqualTo(dataDirectory.toAbsolutePath());
        }
    }

    @Test
    void directoryLockedByAnotherProcessIsRefused() throws Exception {
        Path holder = dataDirectory.getParent().resolve(dataDirectory.getFileName() + "-HoldLock.java");
        Files.writeString(holder, String.join("\n",
                "import java.nio.channels.FileChannel;",
                "import java.nio.file.Path;",
                "import java.nio.file.StandardOpenOption;",
                "public class HoldLock {",
                "  public static void main(String[] args) throws Exception {",
                "    try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.CREATE,",
                "        StandardOpenOption.WRITE); var lock = channel.lock()) {",
                "      System.out.println(\"locked\");",
                "      System.out.flush();",
                "      System.in.read();",
                "    }",
                "  }",
                "}"));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), holder.toString(),
                dataDirectory.resolve("lock").toString()).redirectErrorStream(true).start();
        try {
            BufferedReader output = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            assertThat(output.readLine()).isEqualTo("locked");

            assertThatThrownBy(() -> new FileJournalFactory(dataDirectory))
                    .isInstanceOf(JournalException.class)
                    .hasMessage(inUseMessage());
        } finally {
            process.getOutputStream().close();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            Files.deleteIfExists(holder);
        }
        new FileJournalFactory(dataDirectory).close();
    }

    @Test
    void closingTheFactoryReleasesTheLock() {
        new FileJournalFactory(dataDirectory).close();
        try (FileJournalFactory second = new FileJournalFactory(dataDirectory)) {
            assertThat(Files.exists(second.dataDirectory().resolve("lock"))).isTrue();
        }
    }

    @Test
    void writesTheFormatVersionAndRefusesAnotherOne() throws IOException {
        new FileJournalFactory(dataDirectory).close();
        Path meta = dataDirectory.resolve("meta.properties");
        assertThat(Files.readString(meta)).isEqualTo("buslane.journal.format=1\n");

        Files.writeString(meta, "buslane.journal.format=2\n");
        assertThatThrownBy(() -> new FileJournalFactory(dataDirectory))
                .isInstanceOf(JournalException.class)
                .hasMessageContaining("has journal format 2; this Buslane reads format 1");
        // the failed open released the lock
        Files.writeString(meta, "buslane.journal.format=1\n");
        new FileJournalFactory(dataDirectory).close();
    }

    @Test
    void eachJournalNameIsASubdirectoryAndSurvivesARestart() {
        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory)) {
            for (String name : new String[] {"meta", "shard-0"}) {
                try (FileJournal journal = factory.open(name)) {
                    replay(journal);
                    journal.append(JournalRecord.add(1, (byte) 1, bytes(name)));
                    journal.sync();
                }
            }
        }
        assertThat(Files.isDirectory(dataDirectory.resolve("meta"))).isTrue();
        assertThat(Files.isDirectory(dataDirectory.resolve("shard-0"))).isTrue();

        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory);
             FileJournal journal = factory.open("shard-0")) {
            assertThat(JournalModel.liveOf(replay(journal)).get(1L)).contains(
                    java.util.HexFormat.of().formatHex(bytes("shard-0")));
        }
    }

    @Test
    void aNameIsOpenAtMostOnceAtATime() {
        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory)) {
            FileJournal journal = factory.open("shard-0");
            assertThatThrownBy(() -> factory.open("shard-0")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("already open");
            journal.close();
            factory.open("shard-0").close();
        }
    }

    @Test
    void namesThatAreNotPlainFileNamesAreRejected() {
        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory)) {
            for (String name : new String[] {"", "..", "../escape", "a/b", "lock", "meta.properties", ".hidden"}) {
                assertThatThrownBy(() -> factory.open(name)).as(name)
                        .isInstanceOf(IllegalArgumentException.class);
            }
        }
    }
}
