package io.buslane.journal;

/**
 * Stateless. Every file and folder of a broker's data directory, named once. The journal module writes most of them;
 * the engine names its journals and the duplicate-detection runs through the constants here.
 *
 * <pre>
 * &lt;data dir&gt;/
 *   lock                        {@link #LOCK}: held (file lock) by the one broker using the directory
 *   meta.properties             {@link #META_PROPERTIES}: the format version and the shard count, fixed at creation
 *                               (written as meta.properties.tmp, then renamed)
 *   reserve                     {@link #RESERVE}: disk space kept back from sends for deletes and compaction
 *                               (written as reserve.tmp, then renamed; released when the disk runs out)
 *   meta/                       {@link #META_JOURNAL}: the namespace journal (entities, rules, SAS rules)
 *   shard-0/ .. shard-N/        {@link #shardJournal(int)}: one journal per shard (messages, locks, sessions,
 *                               schedules, dedup ids)
 *     00000000000000000001.seg  {@link #SEGMENT_SUFFIX}: a segment, numbered in append order (20 digits); the
 *                               highest is the active one. Record framing: {@code RecordFormat}
 *     ….seg.compacted           {@link #COMPACTED_SUFFIX}: compaction output not yet swapped in (after a crash)
 *     ….seg.obsolete            {@link #OBSOLETE_SUFFIX}: a segment a swap replaced, deleted in the background
 *     compaction.manifest       {@link #COMPACTION_MANIFEST}: the control file of an unfinished compaction
 *   dedup-runs/                 {@link #DEDUP_RUNS}: the duplicate-detection window's sorted run files, a cache
 *                               rebuilt from the journals at start (nothing to back up)
 * </pre>
 */
public final class DataDirectoryLayout {

    public static final String LOCK = "lock";
    public static final String META_PROPERTIES = "meta.properties";
    public static final String RESERVE = "reserve";
    /** A file written under this suffix, then renamed over its final name. */
    public static final String TEMP_SUFFIX = ".tmp";
    public static final String META_JOURNAL = "meta";
    public static final String SEGMENT_SUFFIX = ".seg";
    public static final String COMPACTED_SUFFIX = ".seg.compacted";
    public static final String OBSOLETE_SUFFIX = ".seg.obsolete";
    public static final String COMPACTION_MANIFEST = "compaction.manifest";
    public static final String DEDUP_RUNS = "dedup-runs";
    private static final String SHARD_PREFIX = "shard-";

    private DataDirectoryLayout() {
    }

    /** The journal (a folder) of shard {@code index}. */
    public static String shardJournal(int index) {
        return SHARD_PREFIX + index;
    }
}
