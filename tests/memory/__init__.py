"""recall/memory/: typed memories (extract, consolidate, store, the CLAUDE.md block, capture hooks, session summaries, backfill)."""
