/**
 * One class per record type of a shard's journal: its type code, how it is written, read, and (for the records
 * that carry a message) skipped to its message. The layouts are a file format: existing data directories and
 * databases replay them, so a field is only ever appended (readers of the older layout see nothing after it), and a
 * golden-bytes test ({@code RecordLayoutGoldenTest}) pins every one. The writers take the fields as arguments
 * (nothing is allocated on the hot path); the readers return a record of the fields.
 */
package io.buslane.engine.persist.record;
