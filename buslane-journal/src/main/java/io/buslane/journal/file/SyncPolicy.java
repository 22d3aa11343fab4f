package io.buslane.journal.file;

/** What {@link FileJournal#sync()} does after writing the buffered records to the segment file. */
public enum SyncPolicy {

    /** Force the segment file to the device ({@code FileChannel.force(false)}) once per sync: records are durable. */
    ALWAYS,

    /**
     * Write to the operating system only, never force. Records survive a process crash but not a power cut or a
     * kernel crash. For tests and throw-away brokers; the journal logs a WARN once when opened with it.
     */
    NONE
}
