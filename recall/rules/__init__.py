"""Triggered rules: text the user wants in front of Claude whenever a situation comes up,
whether or not the prompt's words match it (see docs/rules.md).

A rule is declarative (no code runs): the text to inject and a condition built from
keywords (any / all, on the index's analyzer terms), a regular expression (RE2: linear
time, so no pattern can block the hook), file-path globs, tool names, the project (or
global), and an optional expiry.

Layout of the package:
  files       where rule files are, and whether there are any: all the hook imports without one
  store       the rule files: ``<project>/.memory/rules.json`` and ``$RECALL_HOME/rules.json``;
              validation (a malformed rule is refused with a one-line error naming the field)
  trust       which project rules the user made or accepted (only those fire)
  patterns    RE2 and analyzer terms, shared by the store and the matcher
  match       the compiled rule set and the test of one situation (prompt, paths, tools)
  native      Claude Code's own ``.claude/rules/*.md`` files, listed read-only
  inject      what the prompt hook adds: the situation from the payload and the transcript's
              last turns, once per session per rule (again on a new file)
  index_docs  the rules as documents of the search index (type "rule")

Import-light: nothing here imports tantivy, anthropic or mcp at module level.
"""
