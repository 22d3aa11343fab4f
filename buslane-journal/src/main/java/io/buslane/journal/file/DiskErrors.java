package io.buslane.journal.file;

import io.buslane.journal.JournalException;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.util.Locale;

/** Stateless. Turns I/O failures into {@link JournalException}s, telling a full disk from other failures. */
final class DiskErrors {

    /** Lower-case fragments of the messages that mean "no space": ENOSPC, EDQUOT and the Windows wording. */
    private static final String[] NO_SPACE_MESSAGES = {
        "no space left on device", "disk quota exceeded", "not enough space on the disk",
    };

    private DiskErrors() {
    }

    /** True when {@code failure} or one of its causes says the device or the quota is full. */
    static boolean isNoSpace(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (mentionsNoSpace(t.getMessage())
                    || (t instanceof FileSystemException fse && mentionsNoSpace(fse.getReason()))) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    static JournalException toJournalException(String what, IOException failure) {
        boolean diskFull = isNoSpace(failure);
        String message = diskFull ? what + ": the disk is full (" + failure.getMessage() + ")"
                : what + ": " + failure;
        return new JournalException(message, failure, diskFull);
    }

    private static boolean mentionsNoSpace(String message) {
        if (message == null) {
            return false;
        }
        String lower = message.toLowerCase(Locale.ROOT);
        for (String fragment : NO_SPACE_MESSAGES) {
            if (lower.contains(fragment)) {
                return true;
            }
        }
        return false;
    }
}
