package io.buslane.journal.file;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Thread-safe. Reads how many bytes are still usable on the file system that holds a directory: the file journals
 * read it when they pick a compaction group and when they decide about their disk reserve (see
 * {@link FileJournalFactory}), never per append. Tests inject a pretend disk to simulate a full one
 * deterministically.
 */
@FunctionalInterface
public interface DiskSpace {

    /**
     * Bytes this process can still write on the file system holding {@code directory}, or {@code Long.MAX_VALUE}
     * when that is unknown (the journals then behave as if space were plentiful).
     */
    long usableBytes(Path directory);

    /**
     * The real file system: {@link FileStore#getUsableSpace()} (one {@code statfs} call). Finding a directory's
     * file store reads the mount table, so each directory's store is looked up once and kept.
     */
    static DiskSpace fileSystem() {
        ConcurrentHashMap<Path, FileStore> stores = new ConcurrentHashMap<>();
        return directory -> {
            try {
                FileStore store = stores.get(directory);
                if (store == null) {
                    store = Files.getFileStore(directory);
                    stores.put(directory, store);
                }
                return store.getUsableSpace();
            } catch (IOException e) {
                return Long.MAX_VALUE;
            }
        };
    }
}
