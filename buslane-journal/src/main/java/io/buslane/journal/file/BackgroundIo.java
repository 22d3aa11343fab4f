package io.buslane.journal.file;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Thread-safe. The slow file-system work of compaction, on one daemon thread shared by every journal of the
 * process, so that a journal's writer thread (holding acknowledgements) never waits for it: forcing a compaction
 * output (megabytes of writeback) and deleting segment files that a finished compaction replaced
 * ({@code *.seg.obsolete}; unlinking a large file and dropping its cached pages costs the file system tens of
 * milliseconds). Nothing depends on when a replaced file goes: no reader ever opens one, and the next open of the
 * journal deletes any that a crash left behind.
 */
final class BackgroundIo {

    private static final Logger LOG = LoggerFactory.getLogger(BackgroundIo.class);

    /** Created on first use; its thread ends after a minute without work. */
    private static final ExecutorService EXECUTOR = newExecutor();

    private BackgroundIo() {
    }

    private static ExecutorService newExecutor() {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "buslane-journal-io");
                    t.setDaemon(true);
                    return t;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Runs {@code work} on the shared thread. */
    static Future<?> submit(Callable<?> work) {
        return EXECUTOR.submit(work);
    }

    /** Deletes the files on the shared thread; the future completes when they are gone (or failed to go). */
    static Future<?> deleteLater(List<Path> files) {
        return EXECUTOR.submit(() -> deleteNow(files));
    }

    static void deleteNow(List<Path> files) {
        for (Path file : files) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                LOG.warn("Could not delete {}, which compaction replaced; the next open of its journal deletes it",
                        file, e);
            }
        }
    }
}
