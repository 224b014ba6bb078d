"""recall/core/: the foundation's helpers (the one clip helper, the one JSON reader)."""
