"""The functions behind the MCP rule tools (``rule_add``, ``rule_update``): Claude adds or
changes a triggered rule when the user says "always remember to …". They work on the rule
files directly (no service needed) and index the rule like the CLI does."""

from __future__ import annotations

import os

from recall.core.errors import UsageError


def _project(cwd: str | None, project: str | None) -> str:
    from indexer.project import canonical_project

    base = os.path.abspath(cwd or os.getcwd())
    raw = os.path.abspath(os.path.join(base, os.path.expanduser(project))) if project else base
    if not os.path.isdir(raw):
        raise UsageError(f"project {project!r} is not a directory: pass a folder of the project, or leave it out.")
    return canonical_project(raw)


def _fields(**given) -> dict:
    return {k: v for k, v in given.items() if v is not None}


def rule_add(text: str, *, paths=None, any_words=None, all_words=None, regex=None, tools=None,
             scope: str = "project", expires=None, project=None, cwd=None) -> dict:
    from recall.rules import index_docs, store

    if scope not in ("project", "global"):
        raise UsageError(f"scope {scope!r}: use \"project\" or \"global\".")
    root = "" if scope == "global" else _project(cwd, project)
    rule = store.add(_fields(text=text, paths=paths, any=any_words, all=all_words, regex=regex, tools=tools,
                             expires=expires), scope, root, origin="mcp")
    index_docs.sync([rule])
    return {"rule": rule.public(), "when": rule.condition()}


def rule_update(rule_id: str, *, text=None, paths=None, any_words=None, all_words=None, regex=None,
                tools=None, expires=None, remove: bool = False, project=None, cwd=None) -> dict:
    from recall.rules import index_docs, store

    root = _project(cwd, project)
    if remove:
        rule = store.remove(rule_id, root)
        index_docs.sync([], [rule.id])
        return {"rule": rule.public(), "removed": True, "when": rule.condition()}
    fields = _fields(text=text, paths=paths, any=any_words, all=all_words, regex=regex, tools=tools,
                     expires=expires)
    if not fields:
        raise UsageError("Nothing to change: pass text, paths, any_words, all_words, regex, tools or expires "
                         "(an empty value clears that condition), or remove=true.")
    rule = store.update(rule_id, fields, root, accept=False)  # accepting a rule is the user's step
    index_docs.sync([rule])
    return {"rule": rule.public(), "removed": False, "when": rule.condition()}
