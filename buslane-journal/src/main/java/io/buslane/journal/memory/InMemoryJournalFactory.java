package io.buslane.journal.memory;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalFactory;
import io.buslane.journal.SharedJournal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hands out {@link InMemoryJournal}s by name and keeps them, so a second broker built on the same factory sees
 * what the first one synced: the in-memory analogue of restarting on the same data directory. Thread-safe.
 */
public final class InMemoryJournalFactory implements JournalFactory {

    private final Map<String, InMemoryJournal> journals = new ConcurrentHashMap<>();
    private final Map<String, long[]> versions = new ConcurrentHashMap<>();

    @Override
    public Journal open(String name) {
        return journals.computeIfAbsent(name, n -> new InMemoryJournal());
    }

    /** A view of the named journal for one node of several sharing it (a new view per call). */
    @Override
    public SharedJournal openShared(String name) {
        return new InMemorySharedJournal(journal(name), versions.computeIfAbsent(name, n -> new long[1]));
    }

    /** The journal with this name, for tests that inspect or crash it. */
    public InMemoryJournal journal(String name) {
        return journals.computeIfAbsent(name, n -> new InMemoryJournal());
    }

    /** Drops every un-synced record in every journal, as a power cut would. */
    public void crashAll() {
        journals.values().forEach(InMemoryJournal::crash);
    }

    @Override
    public void close() {
        // nothing held
    }
}
