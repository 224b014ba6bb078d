"""Search: query terms, the searcher and its ranking, snippets, the hit type, and
``run_search`` (the service first, else in-process).
"""
