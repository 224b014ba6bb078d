"""The functions behind the MCP rule tools (``rule_add``, ``rule_update``): Claude adds or
changes a triggered rule when the user says "always remember to …". They work on the rule
files directly (no service needed) and index the rule like the CLI does."""

from __future__ import annotations

import os
from dataclasses import dataclass

from recall.core.errors import UsageError


def _project(cwd: str | None, project: str | None) -> str:
    from indexer.project import canonical_project

    base = os.path.abspath(cwd or os.getcwd())
    raw = os.path.abspath(os.path.join(base, os.path.expanduser(project))) if project else base
    if not os.path.isdir(raw):
        raise UsageError(f"project {project!r} is not a directory: pass a folder of the project, or leave it out.")
    return canonical_project(raw)


@dataclass
class RuleFields:
    """What a rule says and when it fires, as the tools give them (None: not given; an empty
    string or list clears that condition in an update)."""

    text: str | None = None
    paths: list[str] | None = None
    any_words: str | None = None
    all_words: str | None = None
    regex: str | None = None
    tools: list[str] | None = None
    expires: str | None = None

    def given(self) -> dict:
        """The fields given, under the names ``recall.rules.store`` takes."""
        named = {
            "text": self.text,
            "paths": self.paths,
            "any": self.any_words,
            "all": self.all_words,
            "regex": self.regex,
            "tools": self.tools,
            "expires": self.expires,
        }
        return {k: v for k, v in named.items() if v is not None}


def rule_add(fields: RuleFields, *, scope: str = "project", project=None, cwd=None) -> dict:
    from recall.rules import index_docs, store

    if scope not in ("project", "global"):
        raise UsageError(f"scope {scope!r}: use \"project\" or \"global\".")
    root = "" if scope == "global" else _project(cwd, project)
    rule = store.add(fields.given(), scope, root, origin="mcp")
    index_docs.sync([rule])
    return {"rule": rule.public(), "when": rule.condition()}


def rule_update(rule_id: str, fields: RuleFields, *, remove: bool = False, project=None, cwd=None) -> dict:
    from recall.rules import index_docs, store

    root = _project(cwd, project)
    if remove:
        rule = store.remove(rule_id, root)
        index_docs.sync([], [rule.id])
        return {"rule": rule.public(), "removed": True, "when": rule.condition()}
    fields = fields.given()
    if not fields:
        raise UsageError(
            "Nothing to change: pass text, paths, any_words, all_words, regex, tools or expires "
            "(an empty value clears that condition), or remove=true."
        )
    rule = store.update(rule_id, fields, root, accept=False)  # accepting a rule is the user's step
    index_docs.sync([rule])
    return {"rule": rule.public(), "removed": False, "when": rule.condition()}
