"""recall/cli/ and recall/entry.py: the fast paths, python -m recall, what doctor and status say."""
