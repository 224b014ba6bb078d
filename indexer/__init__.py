"""Ingest side: reading transcripts, redaction, writing the index."""
