"""Which of a project's rules the user made or accepted.

A project's ``.memory/rules.json`` can come with a ``git clone`` or a ``git pull``: someone
else's text, that the hook would otherwise hand Claude as "rules the user set (follow
them)". So a project rule reaches the prompt only when this user made it (``recall rules
add``/``edit``, the MCP rule tools) or accepted it (``recall rules trust``), as Claude Code
asks before it uses a folder's settings. What was made or accepted is kept as a fingerprint
of each rule (its id, text and conditions) per project in ``$RECALL_HOME/rules/trusted.json``
(0600, written atomically under a lock): a rule changed by anyone else is a new rule, not
accepted until it is. The global rules (``$RECALL_HOME/rules.json``) are the user's own.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from recall.core import paths
from recall.core.jsonio import read_json

MAX_PER_PROJECT = 10_000
LOCK_TIMEOUT = 10.0


def trust_file() -> Path:
    return paths.recall_home() / "rules" / "trusted.json"


def fingerprint(rule) -> str:
    """What a rule says and when it fires, hashed: any change makes another rule."""
    body = {
        "id": rule.id,
        "text": rule.text,
        "any": list(rule.any),
        "all": list(rule.all),
        "regex": rule.regex,
        "paths": list(rule.paths),
        "tools": list(rule.tools),
        "expires": rule.expires,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def _read() -> dict[str, list[str]]:
    data = read_json(trust_file(), {}, dict)
    return {str(k): [str(f) for f in v if isinstance(f, str)] for k, v in data.items() if isinstance(v, list)}


def stamp() -> tuple:
    """Changes whenever the record does (for the caches of compiled rules)."""
    try:
        st = os.stat(trust_file())
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return (None,)


def accepted(project: str) -> frozenset[str]:
    """The fingerprints of the rules of ``project`` the user made or accepted."""
    return frozenset(_read().get(project, ()))


def is_trusted(rule, known: frozenset[str] | None = None) -> bool:
    if rule.scope != "project":
        return True
    return fingerprint(rule) in (accepted(rule.project) if known is None else known)


def untrusted(rules: list) -> list:
    """The project rules among ``rules`` the user has neither made nor accepted."""
    cache: dict[str, frozenset[str]] = {}
    out = []
    for r in rules:
        if r.scope == "project":
            known = cache.get(r.project)
            if known is None:
                known = cache[r.project] = accepted(r.project)
            if fingerprint(r) not in known:
                out.append(r)
    return out


def record(project: str, add: list = (), drop: list = ()) -> None:
    """Note rules of ``project`` as made or accepted by the user (``add``) and forget the
    fingerprints of versions that are gone (``drop``)."""
    if not project:
        return
    new = [fingerprint(r) for r in add]
    old = {fingerprint(r) for r in drop} - set(new)
    path = trust_file()
    paths.ensure_dir(path.parent)
    with paths.file_lock(
        path.with_name("trusted.lock"),
        LOCK_TIMEOUT,
        lambda: OSError(f"{path} is locked by another recall process: try again in a moment."),
    ):
        data = _read()
        have = [f for f in data.get(project, []) if f not in old]
        have += [f for f in new if f not in have]
        data[project] = have[-MAX_PER_PROJECT:]
        if not data[project]:
            data.pop(project)
        paths.atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
