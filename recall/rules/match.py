"""Which rules fire for one situation: a prompt, the paths it mentions and the files and
tools of the session's last turns.

A rule fires when every kind of condition it has holds (kinds are ANDed; the globs of
``paths`` and the names of ``tools`` are alternatives):

  any      one of its analyzer terms is among the prompt's (plurals and case match)
  all      every one of its analyzer terms is among the prompt's
  regex    RE2 finds the pattern in the prompt (linear time: no catastrophic backtracking;
           the prompt is cut to MAX_SUBJECT characters first)
  paths    a glob matches a path the prompt mentions or a file of the last turns, taken
           relative to the project and tried on every tail of the path
           (``migrations/**`` matches ``db/migrations/0008.sql``)
  tools    a tool of the last turns matches a name (case-insensitive, ``*`` wildcards)

A rule with none of these fires on every prompt of its project (global: of any project).
The compiled set is cached per rule file (path, mtime, size), so a warm service pays for
parsing only when a file changes.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from dataclasses import dataclass, field

MAX_SUBJECT = 20_000       # characters of the prompt a regex sees
RE2_MAX_MEM = 8 << 20      # bytes one compiled pattern may use
_PATHISH = re.compile(r"(?:~?[\w.\-@+]*/)+[\w.\-@+]*|\b[\w\-@+]+\.[A-Za-z][A-Za-z0-9]{0,9}\b")


def terms_of(text: str) -> frozenset[str]:
    """The index's analyzer terms of ``text`` minus stopwords (``migrations`` -> ``migrat``)."""
    from recall.search.query import STOPWORDS, analyze

    return frozenset(t for t in analyze(text) if t not in STOPWORDS)


def compile_regex(pattern: str):
    """An RE2 pattern object; ValueError with RE2's reason when it does not compile."""
    import re2

    options = re2.Options()
    options.max_mem = RE2_MAX_MEM
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(str(reason)) from None


def mentioned_paths(prompt: str) -> list[str]:
    """Paths a prompt mentions: ``migrations/0008_orders_index.sql``, ``src/``, ``setup.py``."""
    out = []
    for m in _PATHISH.finditer(prompt[:MAX_SUBJECT]):
        p = m.group(0).strip(".,;:!?)('\"`")
        if p and p not in out and any(c.isalnum() for c in p):
            out.append(p)
    return out[:50]


def relative(path: str, roots: list[str]) -> str:
    """``path`` relative to the first root it lies under, without a leading ./ or /."""
    p = path.strip()
    if os.path.isabs(p):
        for root in roots:
            if root:
                root = root.rstrip("/") + "/"
                if p.startswith(root):
                    p = p[len(root):]
                    break
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def tails(path: str) -> list[str]:
    """``a/b/c.sql`` -> ``a/b/c.sql``, ``b/c.sql``, ``c.sql`` (a trailing / kept)."""
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts)) if "/".join(parts[i:])]


@dataclass
class Situation:
    """What rules are tested on."""

    prompt: str = ""
    paths: list[str] = field(default_factory=list)    # relative paths: the prompt's, then the last turns'
    tools: list[str] = field(default_factory=list)    # tool names of the last turns
    terms: frozenset[str] = frozenset()

    @classmethod
    def build(cls, prompt: str, files=(), tools=(), roots=()) -> "Situation":
        roots = [r for r in roots if r]
        seen: list[str] = []
        for p in [*mentioned_paths(prompt or ""), *files]:
            r = relative(str(p), roots)
            if r and r not in seen:
                seen.append(r)
        return cls(prompt=prompt or "", paths=seen, tools=[str(t) for t in tools if t],
                   terms=terms_of(prompt or "") if prompt else frozenset())


@dataclass
class Fired:
    rule: object
    reasons: list[str]
    files: list[str]          # the paths its globs matched (empty: the rule has no paths)


class Compiled:
    """One rule, ready to test."""

    __slots__ = ("rule", "any", "all", "regex", "globs", "tools", "expires")

    def __init__(self, rule) -> None:
        self.rule = rule
        self.any = terms_of(" ".join(rule.any)) if rule.any else None
        self.all = terms_of(" ".join(rule.all)) if rule.all else None
        self.regex = compile_regex(rule.regex) if rule.regex else None
        self.globs = [(g, re.compile(fnmatch.translate(g.lstrip("/")))) for g in rule.paths]
        self.tools = [re.compile(fnmatch.translate(t.lower())) for t in rule.tools]
        self.expires = rule.expires_at()

    def test(self, s: Situation, now: float) -> Fired | None:
        if self.expires is not None and self.expires <= now:
            return None
        reasons: list[str] = []
        if self.any is not None:
            hit = self.any & s.terms
            if not hit:
                return None
            reasons.append("words " + ", ".join(sorted(hit)))
        if self.all is not None:
            if not self.all <= s.terms:
                return None
            reasons.append("all words " + ", ".join(sorted(self.all)))
        files: list[str] = []
        if self.globs:
            for p in s.paths:
                for glob, rx in self.globs:
                    if any(rx.match(t) for t in tails(p)):
                        files.append(p)
                        reasons.append(f"path {p} ~ {glob}")
                        break
            if not files:
                return None
        if self.tools:
            used = [t for t in s.tools if any(rx.match(t.lower()) for rx in self.tools)]
            if not used:
                return None
            reasons.append("tool " + ", ".join(dict.fromkeys(used)))
        if self.regex is not None:
            m = self.regex.search(s.prompt[:MAX_SUBJECT])
            if m is None:
                return None
            reasons.append(f"regex matched {m.group(0)[:40]!r}")
        if not reasons:
            reasons.append("always (no condition)")
        return Fired(self.rule, reasons, files)


_cache: dict[tuple, list[Compiled]] = {}


def _stamp(path) -> tuple:
    try:
        st = os.stat(path)
        return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return (str(path), None)


def compiled_rules(project: str | None) -> list[Compiled]:
    """The project's and the global rules, compiled (cached per file version). A file that
    cannot be read raises RuleError; a single rule that no longer compiles is skipped."""
    from recall.rules import store

    out: list[Compiled] = []
    sources = ([("project", store.project_file(project))] if project else []) + [("global", store.global_file())]
    for scope, path in sources:
        key = _stamp(path)
        if key[1] is None:
            continue
        if key not in _cache:
            if len(_cache) > 64:
                _cache.clear()
            compiled = []
            for r in store.read_file(path, scope, project or ""):
                try:
                    compiled.append(Compiled(r))
                except ValueError:  # edited by hand into something RE2 refuses
                    continue
            _cache[key] = compiled
        out.extend(_cache[key])
    return out


def fire(situation: Situation, rules: list[Compiled], now: float | None = None) -> list[Fired]:
    """The rules that fire, in order: those with a condition first, then the unconditional;
    within each, project rules before global ones, the newest first."""
    now = time.time() if now is None else now
    fired = [f for c in rules if (f := c.test(situation, now)) is not None]

    def order(f: Fired):
        r = f.rule
        conditional = bool(r.any or r.all or r.regex or r.paths or r.tools)
        return (not conditional, r.scope != "project", _neg(r.updated))

    return sorted(fired, key=order)


def _neg(iso: str) -> tuple:
    return tuple(-ord(c) for c in iso or "")
