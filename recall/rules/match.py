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
from functools import lru_cache

from recall.rules.patterns import compile_regex, terms_of
from recall.rules.store import MAX_REGEX_RULES

MAX_SUBJECT = 20_000  # characters of the prompt a regex sees
RE2_SET_MAX_MEM = 64 << 20  # bytes the set of all patterns may use
_PATHISH = re.compile(r"(?:~?[\w.\-@+]*/)+[\w.\-@+]*|\b[\w\-@+]+\.[A-Za-z][A-Za-z0-9]{0,9}\b")


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
                    p = p[len(root) :]
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
    paths: list[str] = field(default_factory=list)  # relative paths: the prompt's, then the last turns'
    tools: list[str] = field(default_factory=list)  # tool names of the last turns
    terms: frozenset[str] = frozenset()
    path_tails: list[tuple[str, list[str]]] = field(default_factory=list)
    tools_lower: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, prompt: str, files=(), tools=(), roots=()) -> "Situation":
        roots = [r for r in roots if r]
        seen: list[str] = []
        for p in [*mentioned_paths(prompt or ""), *files]:
            r = relative(str(p), roots)
            if r and r not in seen:
                seen.append(r)
        tools = [str(t) for t in tools if t]
        return cls(
            prompt=prompt or "",
            paths=seen,
            tools=tools,
            terms=terms_of(prompt or "") if prompt else frozenset(),
            path_tails=[(p, tails(p)) for p in seen],
            tools_lower=[t.lower() for t in tools],
        )


class Fired:
    """A rule that fires; ``reasons`` (why, in words) is worked out only when asked for."""

    __slots__ = ("rule", "files", "_why", "_reasons")

    def __init__(self, rule, files: list[str], why=None) -> None:
        self.rule = rule
        self.files = files  # the paths its globs matched (empty: the rule has no paths)
        self._why = why
        self._reasons: list[str] | None = None

    @property
    def reasons(self) -> list[str]:
        if self._reasons is None:
            self._reasons = self._why() if self._why is not None else []
        return self._reasons


@lru_cache(maxsize=4096)
def _glob(glob: str):
    return re.compile(fnmatch.translate(glob.lstrip("/")))


@lru_cache(maxsize=1024)
def _tool(name: str):
    return re.compile(fnmatch.translate(name.lower()))


@lru_cache(maxsize=4096)
def _terms(words: str) -> frozenset[str]:
    return terms_of(words)


class Compiled:
    """One rule, ready to test. Its regex is tested through the rule set's RE2 ``Set`` (one
    pass over the prompt for every pattern); the pattern alone is compiled only to say what
    matched, for a rule that fires."""

    __slots__ = ("rule", "any", "all", "regex", "regex_slot", "globs", "tools", "expires", "order")

    def __init__(self, rule) -> None:
        self.rule = rule
        self.any = _terms(" ".join(rule.any)) if rule.any else None
        self.all = _terms(" ".join(rule.all)) if rule.all else None
        self.regex = rule.regex or None
        self.regex_slot = -1
        self.globs = [(g, _glob(g)) for g in rule.paths]
        self.tools = [_tool(t) for t in rule.tools]
        self.expires = rule.expires_at()
        conditional = bool(rule.any or rule.all or rule.regex or rule.paths or rule.tools)
        self.order = (not conditional, rule.scope != "project", tuple(-ord(c) for c in rule.updated or ""))

    def test(self, s: Situation, now: float, regex_hits, glob_memo: dict) -> Fired | None:
        if self.expires is not None and self.expires <= now:
            return None
        if self.any is not None and self.any.isdisjoint(s.terms):
            return None
        if self.all is not None and not self.all <= s.terms:
            return None
        if self.tools and not any(rx.match(t) for t in s.tools_lower for rx in self.tools):
            return None
        files: list[str] = []
        matched_globs: list[tuple[str, str]] = []
        if self.globs:
            for glob, rx in self.globs:
                got = glob_memo.get(glob)
                if got is None:
                    got = glob_memo[glob] = [p for p, ts in s.path_tails if any(rx.match(t) for t in ts)]
                for p in got:
                    if p not in files:
                        files.append(p)
                        matched_globs.append((p, glob))
            if not files:
                return None
        if self.regex is not None and not regex_hits(self):
            return None
        return Fired(self.rule, files, lambda: self.reasons(s, matched_globs))

    def reasons(self, s: Situation, matched_globs) -> list[str]:
        out = []
        if self.any is not None:
            out.append("words " + ", ".join(sorted(self.any & s.terms)))
        if self.all is not None:
            out.append("all words " + ", ".join(sorted(self.all)))
        out.extend(f"path {p} ~ {g}" for p, g in matched_globs)
        if self.tools:
            used = [t for t in s.tools if any(rx.match(t.lower()) for rx in self.tools)]
            out.append("tool " + ", ".join(dict.fromkeys(used)))
        if self.regex is not None:
            try:
                m = compile_regex(self.regex).search(s.prompt[:MAX_SUBJECT])
                out.append(f"regex matched {m.group(0)[:40]!r}" if m else f"regex /{self.regex}/")
            except ValueError:
                out.append(f"regex /{self.regex}/")
        return out or ["always (no condition)"]


class RuleSet:
    """Compiled rules plus one RE2 ``Set`` of all their patterns."""

    def __init__(self, compiled: list[Compiled]) -> None:
        self.rules = compiled
        self.regex_set = None
        with_regex = [c for c in compiled if c.regex is not None]
        if with_regex:
            import re2

            options = re2.Options()
            options.max_mem = RE2_SET_MAX_MEM
            options.log_errors = False
            rset = re2.Set.SearchSet(options)
            try:
                for c in with_regex:
                    c.regex_slot = rset.Add(c.regex)
                rset.Compile()
                self.regex_set = rset
            except Exception:  # too big for one Set: each pattern on its own
                for c in with_regex:
                    c.regex_slot = -1

    def __len__(self) -> int:
        return len(self.rules)

    def regex_hits(self, prompt: str):
        """``hit(compiled) -> bool``, the prompt searched once for all patterns (lazily)."""
        subject = prompt[:MAX_SUBJECT]
        box: dict = {}

        def hit(c: Compiled) -> bool:
            if self.regex_set is not None and c.regex_slot >= 0:
                if "set" not in box:
                    try:
                        box["set"] = set(self.regex_set.Match(subject) or ())  # None: no match
                    except Exception:  # out of DFA memory: one by one
                        box["set"] = None
                if box["set"] is not None:
                    return c.regex_slot in box["set"]
            try:
                return compile_regex(c.regex).search(subject) is not None
            except ValueError:
                return False

        return hit


_cache: dict[tuple, list[Compiled]] = {}
_sets: dict[tuple, RuleSet] = {}


def _stamp(path) -> tuple:
    try:
        st = os.stat(path)
        return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return (str(path), None)


def _file_rules(scope: str, path, project: str | None) -> tuple[tuple, list[Compiled]]:
    """The rules of one file that may fire, compiled: a project file's only those the user
    made or accepted (``recall.rules.trust``), and at most MAX_REGEX_RULES with a regex."""
    from recall.rules import store, trust

    key = _stamp(path)
    if key[1] is None:
        return key, []
    if scope == "project":
        key = key + trust.stamp()
    if key not in _cache:
        if len(_cache) > 64:
            _cache.clear()
        rules = store.read_file(path, scope, project or "")
        if scope == "project":
            known = trust.accepted(project or "")
            waiting = [r for r in rules if not trust.is_trusted(r, known)]
            if waiting:
                _warn(
                    f"{path}: {len(waiting)} rules not made or accepted by the user are not injected "
                    "(`recall rules trust` accepts them)"
                )
                rules = [r for r in rules if trust.is_trusted(r, known)]
        compiled, with_regex = [], 0
        for r in rules:
            if r.regex:
                with_regex += 1
                if with_regex > MAX_REGEX_RULES:
                    continue
            try:
                compiled.append(Compiled(r))
            except ValueError:
                continue
        if with_regex > MAX_REGEX_RULES:
            _warn(f"{path}: {with_regex} rules with a regex; only the first {MAX_REGEX_RULES} are tested")
        _cache[key] = compiled
    return key, _cache[key]


def _warn(message: str) -> None:
    from recall.core import log

    log.get("rules").warning("%s", message)


def compiled_rules(project: str | None) -> RuleSet:
    """The project's and the global rules, compiled (cached per file version). A file that
    cannot be read raises RuleError; a single rule that no longer compiles is skipped."""
    from recall.rules import store

    sources = ([("project", store.project_file(project))] if project else []) + [("global", store.global_file())]
    keys, rules = [], []
    for scope, path in sources:
        key, compiled = _file_rules(scope, path, project)
        keys.append(key)
        rules.extend(compiled)
    set_key = tuple(keys)
    if set_key not in _sets:
        if len(_sets) > 64:
            _sets.clear()
        _sets[set_key] = RuleSet(rules)
    return _sets[set_key]


def fire(situation: Situation, rules: RuleSet, now: float | None = None) -> list[Fired]:
    """The rules that fire, in order: those with a condition first, then the unconditional;
    within each, project rules before global ones, the newest first."""
    now = time.time() if now is None else now
    hits = rules.regex_hits(situation.prompt)
    memo: dict = {}
    fired = [
        (c.order, i, f) for i, c in enumerate(rules.rules) if (f := c.test(situation, now, hits, memo)) is not None
    ]
    fired.sort(key=lambda x: (x[0], x[1]))
    return [f for _, _, f in fired]
