"""indexer/: the ingest side (transcripts and sources, redaction, the archive, the schema, the writer, backfill, storage faults)."""
