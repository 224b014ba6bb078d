"""recall/search/: indexing then searching, ranking, confidence, exchanges, stale marks."""
