package io.buslane.journal;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Test helper: the live state {@link RecordKind} semantics give a sequence of records, as a replay handler keeps it.
 * An UPDATE or DELETE of an id that is not live is ignored, as compaction may have dropped the records before it.
 */
public final class JournalModel implements ReplayHandler {

    private final Map<Long, String> live = new TreeMap<>();

    /** The live state of a replay of {@code journal} (which must not have been replayed yet). */
    public static Map<Long, String> replayLive(Journal journal) {
        JournalModel model = new JournalModel();
        journal.replay(model);
        return model.live();
    }

    public static Map<Long, String> liveOf(List<JournalRecord> records) {
        JournalModel model = new JournalModel();
        records.forEach(model::onRecord);
        return model.live();
    }

    @Override
    public void onRecord(JournalRecord record) {
        apply(record);
    }

    public void apply(JournalRecord record) {
        switch (record.kind()) {
            case ADD:
                live.put(record.id(), "type " + record.type() + " add " + hex(record.payload()));
                break;
            case UPDATE:
                live.computeIfPresent(record.id(), (id, state) -> {
                    int at = state.indexOf(" update ");
                    String base = at < 0 ? state : state.substring(0, at);
                    return base + " update " + record.type() + ":" + hex(record.payload());
                });
                break;
            case DELETE:
                live.remove(record.id());
                break;
            default:
                throw new IllegalStateException("unknown kind " + record.kind());
        }
    }

    public boolean isLive(long id) {
        return live.containsKey(id);
    }

    /** A copy of the live state: id to a description of its ADD and latest UPDATE. */
    public Map<Long, String> live() {
        return new TreeMap<>(live);
    }

    /** A comparable description of one record (records compare byte arrays by identity). */
    public static String describe(JournalRecord record) {
        return record.kind() + " " + record.id() + " type " + record.type() + " " + hex(record.payload());
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
