package io.buslane.journal.file;

import io.buslane.journal.DataDirectoryLayout;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Thread-safe. Opens {@link FileJournal}s in one data directory, one subdirectory per journal name, and holds the
 * directory's lock for as long as it is open.
 *
 * <pre>
 * &lt;data directory&gt;/
 *   lock              locked with FileChannel.tryLock() while a factory is open; never deleted
 *   meta.properties   "buslane.journal.format=1": the on-disk format version, checked when opening
 *   reserve           zeros: disk space kept for deletes and compaction (see DiskReserve); absent while released
 *   reserve.tmp       the reserve being written (deleted at open)
 *   meta/             one FileJournal per name (see FileJournal for its files)
 *   shard-0/
 * </pre>
 * The format file is {@code meta.properties} (as Kafka's log directories have), not {@code meta}, because
 * {@code meta} is the name of the namespace-metadata journal and so of its subdirectory.
 * A second factory on a locked directory, in this process or another, fails with a {@link JournalException} naming
 * the directory and the lock file.
 *
 * <p><b>A full disk.</b> {@link #usableSpaceBytes()}, which the engine compares with its threshold before it accepts
 * new messages, leaves out the space of the disk reserve ({@link FileJournalOptions#reserveBytes()}, written when the
 * factory opens if the disk has room). When the disk fills up anyway (a large batch, another process), the journals
 * release the reserve and the writes that free space go on: DELETEs, checkpoints and compaction, which may rewrite
 * into the reserve and removes all-dead segments without writing anything. The reserve is written again in the
 * background once three times its size is free.
 */
public final class FileJournalFactory implements JournalFactory {

    /** Version of the whole on-disk layout: the record format, segment naming and manifest format. */
    public static final int FORMAT_VERSION = 1;
    static final String LOCK_FILE = DataDirectoryLayout.LOCK;
    static final String META_FILE = DataDirectoryLayout.META_PROPERTIES;
    private static final String META_KEY = "buslane.journal.format=";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    private static final Logger LOG = LoggerFactory.getLogger(FileJournalFactory.class);

    private final Path dataDirectory;
    private final FileJournalOptions options;
    private final SegmentIo io;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final DiskReserve reserve;
    private final Set<String> openNames = new HashSet<>();
    private boolean closed;

    /** Locks {@code dataDirectory} (creating it if needed) with the default options. */
    public FileJournalFactory(Path dataDirectory) {
        this(dataDirectory, FileJournalOptions.defaults());
    }

    /**
     * Locks {@code dataDirectory} (creating it if needed) and checks or writes its {@code meta.properties} file.
     *
     * @param dataDirectory the broker's data directory
     * @param options       options for every journal opened
     * @throws JournalException when the directory is locked by another factory, has another format version, or
     *                          cannot be prepared
     */
    public FileJournalFactory(Path dataDirectory, FileJournalOptions options) {
        this(dataDirectory, options, SegmentIo.DIRECT);
    }

    FileJournalFactory(Path dataDirectory, FileJournalOptions options, SegmentIo io) {
        this.dataDirectory = dataDirectory.toAbsolutePath();
        this.options = Objects.requireNonNull(options, "options");
        this.io = io;
        Path lockFile = this.dataDirectory.resolve(LOCK_FILE);
        FileChannel channel = null;
        FileLock acquired = null;
        try {
            Files.createDirectories(this.dataDirectory);
            channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                acquired = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                acquired = null; // held by another factory in this process
            }
            if (acquired == null) {
                throw new JournalException("data directory " + this.dataDirectory + " is in use by another Buslane "
                        + "process (lock file " + lockFile + ")", null, false);
            }
            checkOrWriteMeta();
        } catch (IOException e) {
            closeQuietly(channel);
            throw DiskErrors.toJournalException("cannot open data directory " + this.dataDirectory, e);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
        this.lockChannel = channel;
        this.lock = acquired;
        this.reserve = new DiskReserve(this.dataDirectory, options.reserveBytes(), options.diskSpace());
        reserve.open();
    }

    private void checkOrWriteMeta() throws IOException {
        Path meta = dataDirectory.resolve(META_FILE);
        if (Files.exists(meta)) {
            String content = Files.readString(meta, StandardCharsets.UTF_8).trim();
            if (!content.startsWith(META_KEY)) {
                throw new JournalException("data directory " + dataDirectory + " has an unreadable meta file " + meta
                        + ": " + content, null, false);
            }
            String version = content.substring(META_KEY.length()).trim();
            if (!version.equals(Integer.toString(FORMAT_VERSION))) {
                throw new JournalException("data directory " + dataDirectory + " has journal format " + version
                        + "; this Buslane reads format " + FORMAT_VERSION, null, false);
            }
            return;
        }
        Path temp = dataDirectory.resolve(META_FILE + ".tmp");
        ByteBuffer bytes = ByteBuffer.wrap((META_KEY + FORMAT_VERSION + "\n").getBytes(StandardCharsets.UTF_8));
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            channel.force(true);
        }
        Files.move(temp, meta, StandardCopyOption.ATOMIC_MOVE);
        SegmentFiles.fsyncDirectory(dataDirectory);
    }

    // ops (metrics): begin
    private volatile SyncListener syncListener = SyncListener.NONE;

    /** Sets who is told about every sync of the journals opened from now on (a metrics hook). */
    public void syncListener(SyncListener listener) {
        this.syncListener = listener == null ? SyncListener.NONE : listener;
    }
    // ops (metrics): end

    /**
     * Opens the journal {@code name} in its subdirectory. The caller then calls {@link FileJournal#replay} once.
     *
     * @throws IllegalArgumentException when the name is not a plain file name ({@code [A-Za-z0-9][A-Za-z0-9._-]*})
     * @throws IllegalStateException    when the name is already open, or the factory is closed
     */
    @Override
    public synchronized FileJournal open(String name) {
        if (closed) {
            throw new IllegalStateException("journal factory for " + dataDirectory + " is closed");
        }
        if (name == null || !NAME.matcher(name).matches() || name.equals(LOCK_FILE) || name.equals(META_FILE)
                || name.equals(META_FILE + ".tmp") || name.equals(DiskReserve.FILE_NAME)
                || name.equals(DiskReserve.TEMP_NAME)) {
            throw new IllegalArgumentException("invalid journal name: " + name);
        }
        if (!openNames.add(name)) {
            throw new IllegalStateException("journal " + name + " in " + dataDirectory + " is already open");
        }
        try {
            FileJournal journal = new FileJournal(dataDirectory.resolve(name), options, io, reserve,
                    () -> forget(name));
            journal.syncListener(syncListener); // ops (metrics)
            return journal;
        } catch (RuntimeException e) {
            forget(name);
            throw e;
        }
    }

    private synchronized void forget(String name) {
        openNames.remove(name);
    }

    /**
     * The data directory's usable space ({@link FileJournalOptions#diskSpace()}) minus the part of the disk reserve
     * that is not on disk: the reserve's space is never offered to new messages, whether it is held or released.
     * A reading may release the reserve (less than half its size free) or start writing it again (three times free).
     */
    @Override
    public long usableSpaceBytes() {
        return reserve.usableBytes();
    }

    /** The data directory's disk reserve (for tests). */
    DiskReserve reserve() {
        return reserve;
    }

    @Override
    public Path cacheDirectory() {
        return dataDirectory();
    }

    public Path dataDirectory() {
        return dataDirectory;
    }

    /** Releases the directory lock. Journals should be closed first. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        reserve.close();
        if (!openNames.isEmpty()) {
            LOG.warn("Releasing the lock on {} while journals {} are still open", dataDirectory, openNames);
        }
        try {
            lock.release();
        } catch (IOException e) {
            LOG.warn("Could not release the lock on {}", dataDirectory, e);
        }
        closeQuietly(lockChannel);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel == null) {
            return;
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("Ignoring failure to close a lock channel", e);
        }
    }
}
