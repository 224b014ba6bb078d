"""The rule files: a project's ``<project>/.memory/rules.json`` (beside its memories,
reviewable in git) and the global ``$RECALL_HOME/rules.json``.

A rule (JSON keys as written)::

    {"id": "r3f2a1c9", "text": "Run `sqitch verify` before touching migrations/.",
     "any": ["migration"], "all": [], "regex": null, "paths": ["migrations/**"],
     "tools": [], "expires": "2026-12-31T23:59:59Z" | null,
     "created": ISO, "updated": ISO, "origin": "cli" | "mcp" | "remember"}

Files are written atomically (tmp + rename, 0600) under an exclusive ``flock`` on
``rules.lock`` beside them; readers never lock. Every field is checked on the way in
(``validate``): a malformed rule is refused with a one-line error naming the field. A file
edited by hand (or that came with a clone) is read defensively: at most MAX_FILE_BYTES and
MAX_RULES, ids of the shape recall gives (``r`` and hex; others are skipped), and a project
file's rules fire only once the user made or accepted them (``recall.rules.trust``).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from recall.core import paths
from recall.core.errors import UsageError
from recall.rules.files import global_file, project_file

SCHEMA_VERSION = 1
MAX_TEXT = 1000  # characters of a rule's text
MAX_REGEX = 500  # characters of a pattern
MAX_GLOB = 300
MAX_ITEMS = 20  # paths, tools, words per rule
MAX_RULES = 5000  # per file
MAX_FILE_BYTES = 8 << 20  # a rules file at its largest (5,000 rules of 1,000 characters) is ~6 MB
# rules with a regex tested per file: compiling 5,000 patterns costs seconds, paid on every
# prompt when the hook runs without the service (1,000 heavy ones: ~0.75 s); the rest are
# skipped, with a warning (``recall rules list``, the log: ``recall.rules.match``)
MAX_REGEX_RULES = 300
LOCK_TIMEOUT = 10.0
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")
FIELDS = ("text", "any", "all", "regex", "paths", "tools", "expires")
_TOOL = re.compile(r"^[A-Za-z0-9_.*?\-]{1,100}$")
_SPAN = re.compile(r"^\s*(\d+)\s*([hdwy])\s*$", re.I)
_SPAN_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


class RuleError(UsageError):
    """A rule that cannot be stored, found or read; the message names the field and the fix."""


class RuleNotFound(RuleError):
    """No rule has that id: an ordinary error (exit 1), not a malformed option (issue 44)."""

    exit_code = 1


@dataclass
class Rule:
    id: str
    text: str
    any: list[str] = field(default_factory=list)
    all: list[str] = field(default_factory=list)
    regex: str | None = None
    paths: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    expires: str | None = None
    created: str = ""
    updated: str = ""
    origin: str = "cli"
    scope: str = "project"  # not stored: "project" or "global", from the file it lives in
    project: str = ""  # not stored: the project root ("" for a global rule)

    def as_json(self) -> dict:
        d = asdict(self)
        d.pop("scope"), d.pop("project")
        return d

    def public(self) -> dict:
        """The rule as ``--json`` and the MCP tools show it."""
        d = self.as_json()
        d["scope"] = self.scope
        d["project"] = self.project or None
        d["expired"] = self.expired()
        return d

    def expires_at(self) -> float | None:
        return parse_iso(self.expires)

    def expired(self, now: float | None = None) -> bool:
        at = self.expires_at()
        return at is not None and at <= (time.time() if now is None else now)

    def condition(self) -> str:
        """The condition in one line, the way `recall rules add` takes it."""
        parts = []
        if self.any:
            parts.append(f'any "{" ".join(self.any)}"')
        if self.all:
            parts.append(f'all "{" ".join(self.all)}"')
        if self.regex:
            parts.append(f"regex /{self.regex}/")
        if self.paths:
            parts.append("path " + ", ".join(self.paths))
        if self.tools:
            parts.append("tool " + ", ".join(self.tools))
        return " and ".join(parts) if parts else "every prompt"


# time ----------------------------------------------------------------------------------------
def now_iso(ts: float | None = None) -> str:
    ts = time.time() if ts is None else ts
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value) -> float | None:
    if not value or not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def parse_expires(value: str | None, now: float | None = None) -> str | None:
    """``--expires``: a date (the rule lasts through that day, UTC), a date-time, or a span
    from now (``12h``, ``30d``, ``2w``, ``1y``). None or "" or "never": no expiry."""
    if value is None:
        return None
    value = str(value).strip()
    if value.lower() in ("", "never", "none"):
        return None
    now = time.time() if now is None else now
    m = _SPAN.match(value)
    if m:
        return now_iso(now + int(m.group(1)) * _SPAN_SECONDS[m.group(2).lower()])
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            dt = datetime.fromisoformat(value).replace(tzinfo=timezone.utc) + timedelta(days=1, seconds=-1)
        else:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=timezone.utc)
    except ValueError:
        raise RuleError(
            f"expires: {value!r} is not a date: use a date like 2026-12-31, or a span like 30d or 2w."
        ) from None
    if dt.timestamp() <= now:
        raise RuleError(f"expires: {value!r} is in the past: give a later date, or leave --expires out.")
    return now_iso(dt.timestamp())


# validation ----------------------------------------------------------------------------------
def _words(name: str, value) -> list[str]:
    """``--any "WORDS"``: the words as given (matched later on their analyzer terms)."""
    value = _items(name, value, 'give words as a string, e.g. "migration schema".')
    words = [w for v in value for w in str(v).replace(",", " ").split()]
    if not words:
        return []
    if len(words) > MAX_ITEMS:
        raise RuleError(f"{name}: {len(words)} words; at most {MAX_ITEMS}: keep the ones that decide.")
    from recall.rules.patterns import terms_of

    if not terms_of(" ".join(words)):
        raise RuleError(
            f"{name}: {' '.join(words)!r} has no word to match (only stopwords or punctuation): use content words."
        )
    return words


def _items(name: str, value, how: str) -> list:
    """A field's value as a list: none for None, one for a string; RuleError ``how`` to give
    it for anything else but a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise RuleError(f"{name}: {how}")
    return list(value)


def _list(name: str, value, check) -> list[str]:
    out = []
    for v in _items(name, value, "give a list of strings."):
        v = str(v).strip()
        if not v:
            continue
        check(v)
        if v not in out:
            out.append(v)
    if len(out) > MAX_ITEMS:
        raise RuleError(f"{name}: {len(out)} given; at most {MAX_ITEMS}: split the rule in two.")
    return out


def _check_glob(glob: str) -> None:
    if len(glob) > MAX_GLOB or "\n" in glob or "\0" in glob:
        raise RuleError(
            f"paths: {glob[:60]!r} is not a usable glob: keep it one line, at most "
            f"{MAX_GLOB} characters, like migrations/** or *.sql."
        )


def _check_tool(name: str) -> None:
    if not _TOOL.match(name):
        raise RuleError(
            f"tools: {name[:60]!r} is not a tool name: use a name like Bash, Edit or "
            "mcp__github__* (letters, digits, _ . - and * ? wildcards)."
        )


def check_regex(pattern: str | None) -> str | None:
    """The pattern if RE2 compiles it (linear time: no backtracking to blow up)."""
    if pattern is None or pattern == "":
        return None
    pattern = str(pattern)
    if len(pattern) > MAX_REGEX:
        raise RuleError(f"regex: {len(pattern)} characters; at most {MAX_REGEX}: shorten the pattern.")
    from recall.rules.patterns import compile_regex

    try:
        compile_regex(pattern)
    except ValueError as exc:
        raise RuleError(
            f"regex: {pattern[:80]!r} is not a valid pattern ({exc}): fix it "
            "(recall uses RE2: no backreferences or lookaround)."
        ) from None
    return pattern


def check_text(text) -> str:
    if not isinstance(text, str) or not text.strip():
        raise RuleError(
            "text: a rule needs the text to inject, e.g. `recall rules add \"Run make test, not pytest\" --any test`."
        )
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise RuleError(
            f"text: {len(text)} characters; at most {MAX_TEXT}: shorten it, or split it "
            "into rules with their own conditions."
        )
    return text


def validate(fields: dict, base: Rule | None = None) -> Rule:
    """A rule from ``fields`` (any of FIELDS) over ``base``; raises RuleError naming the field."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise RuleError(f"{sorted(unknown)[0]}: not a rule field; the fields are {', '.join(FIELDS)}.")
    rule = Rule(**base.as_json()) if base is not None else Rule(id="", text="")
    if base is not None:
        rule.scope, rule.project = base.scope, base.project
    if "text" in fields or base is None:
        rule.text = check_text(fields.get("text"))
    if "any" in fields:
        rule.any = _words("any", fields["any"])
    if "all" in fields:
        rule.all = _words("all", fields["all"])
    if "regex" in fields:
        rule.regex = check_regex(fields["regex"])
    if "paths" in fields:
        rule.paths = _list("paths", fields["paths"], _check_glob)
    if "tools" in fields:
        rule.tools = _list("tools", fields["tools"], _check_tool)
    if "expires" in fields:
        rule.expires = parse_expires(fields["expires"])
    return rule


# files ---------------------------------------------------------------------------------------
def rules_file(scope: str, project: str = "") -> Path:
    return global_file() if scope == "global" else project_file(project)


def _from_json(d, scope: str, project: str) -> Rule | None:
    if not isinstance(d, dict) or not isinstance(d.get("id"), str) or not isinstance(d.get("text"), str):
        return None
    if not _ID.match(d["id"]):
        return None  # an id recall never gives (it could say anything where the id is shown)
    lists = {k: [str(x) for x in d.get(k) or [] if isinstance(x, str) and x] for k in ("any", "all", "paths", "tools")}
    regex = d.get("regex") if isinstance(d.get("regex"), str) and d.get("regex") else None
    return Rule(
        id=d["id"],
        text=d["text"][:MAX_TEXT],
        regex=regex,
        expires=d.get("expires") if isinstance(d.get("expires"), str) else None,
        created=str(d.get("created") or ""),
        updated=str(d.get("updated") or ""),
        origin=str(d.get("origin") or "cli"),
        scope=scope,
        project=project if scope == "project" else "",
        **lists,
    )


def read_file(path: Path, scope: str, project: str = "") -> list[Rule]:
    """The rules in ``path`` ([] when there is none). A file that is not rule JSON raises
    RuleError naming it and the fix (the hook catches it and goes on without those rules)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise RuleError(
                    f"{path} is {size / (1 << 20):.1f} MB, more than the {MAX_FILE_BYTES / (1 << 20):g} MB a "
                    "rules file may hold: its rules are ignored until you remove rules from it (or "
                    "move it away)."
                )
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RuleError(f"{path} cannot be read ({exc.strerror}): fix its permissions.") from None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        raise RuleError(
            f"{path} is not valid JSON: fix it by hand, or move it away and add the rules "
            "again with `recall rules add`."
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise RuleError(f"{path} holds no \"rules\" list: fix it by hand, or move it away.")
    out = []
    for d in doc["rules"][:MAX_RULES]:
        r = _from_json(d, scope, project)
        if r is not None:
            out.append(r)
    return out


def problems(path: Path, scope: str, project: str = "") -> list[str]:
    """What is wrong with a rules file, in one line each (``recall rules list``, doctor): too
    large, not JSON, more rules than are read, rules skipped, project rules not accepted."""
    try:
        rules = read_file(path, scope, project)
    except RuleError as exc:
        return [str(exc)]
    out = []
    try:
        doc = json.loads(path.read_bytes()) if path.exists() else {"rules": []}
        listed = len(doc.get("rules") or []) if isinstance(doc, dict) else 0
    except (OSError, ValueError, RecursionError):
        listed = len(rules)
    if listed > MAX_RULES:
        out.append(f"{path} holds {listed:,} rules: only the first {MAX_RULES:,} are read.")
    elif listed > len(rules):
        out.append(
            f"{path}: {listed - len(rules)} rules are malformed (no text, or an id that is not "
            "letters, digits, _ and -) and are skipped: fix them by hand."
        )
    from recall.rules.trust import untrusted

    with_regex = sum(1 for r in rules if r.regex)
    if with_regex > MAX_REGEX_RULES:
        out.append(
            f"{path} has {with_regex:,} rules with a regex: only the first {MAX_REGEX_RULES} are tested "
            "(each prompt would pay for all of them): merge patterns, or use --any words."
        )
    if scope == "project":
        waiting = len(untrusted(rules))
        if waiting:
            out.append(
                f"{path}: {waiting} rule{'s' if waiting > 1 else ''} you have not made or accepted "
                "(a clone or a pull brought them?) never fire: review them with `recall rules list`, "
                "accept them with `recall rules trust`."
            )
    return out


def load(scope: str, project: str = "") -> list[Rule]:
    return read_file(rules_file(scope, project), scope, project)


def load_all(project: str | None) -> list[Rule]:
    """The project's rules, then the global ones."""
    rules = load("project", project) if project else []
    return rules + load("global")


def _write(path: Path, rules: list[Rule]) -> None:
    doc = {"version": SCHEMA_VERSION, "rules": [r.as_json() for r in rules]}
    paths.atomic_write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _locked(path: Path):
    return paths.file_lock(
        path.with_name("rules.lock"),
        LOCK_TIMEOUT,
        lambda: RuleError(f"{path} is locked by another recall process: try again in a moment."),
    )


def _new_id(taken: set[str]) -> str:
    import secrets

    while True:
        rid = "r" + secrets.token_hex(4)
        if rid not in taken:
            return rid


def add(fields: dict, scope: str, project: str = "", origin: str = "cli") -> Rule:
    """Store a new rule; returns it (with its id)."""
    rule = validate(fields)
    path = rules_file(scope, project)
    with _locked(path):
        rules = read_file(path, scope, project)
        if len(rules) >= MAX_RULES:
            raise RuleError(
                f"{path} holds {len(rules)} rules, the most one file takes: remove old ones "
                "with `recall rules remove ID`."
            )
        taken = {r.id for r in rules} | {r.id for r in load_all(project or None)}
        rule.id = _new_id(taken)
        rule.created = rule.updated = now_iso()
        rule.origin = origin
        rule.scope, rule.project = scope, project if scope == "project" else ""
        with_regex = sum(1 for r in rules if r.regex)
        if rule.regex and with_regex >= MAX_REGEX_RULES:
            raise RuleError(
                f"{path} has {with_regex} rules with a regex, the most that are tested on every "
                "prompt: merge patterns into one, or use --any/--all words."
            )
        _write(path, [*rules, rule])
    if scope == "project":
        from recall.rules import trust

        trust.record(project, add=[rule])  # the user made it
    return rule


def find(rule_id: str, project: str | None) -> Rule:
    """The rule whose id starts with ``rule_id`` among the project's and the global rules."""
    rule_id = (rule_id or "").strip()
    if not rule_id:
        raise RuleError("Give a rule id: `recall rules list` shows them.")
    rules = load_all(project)
    exact = [r for r in rules if r.id == rule_id]
    hits = exact or [r for r in rules if r.id.startswith(rule_id)]
    if not hits:
        where = "this project's or the global rules" if project else "the global rules"
        raise RuleNotFound(f"No rule {rule_id!r} in {where}: `recall rules list` shows the ids.")
    if len(hits) > 1:
        raise RuleError(f"Rule id {rule_id!r} is ambiguous ({', '.join(r.id for r in hits[:4])}): give more of it.")
    return hits[0]


def update(rule_id: str, fields: dict, project: str | None, accept: bool = True) -> Rule:
    """Change the given fields of a rule; returns the rule as stored. ``accept``: the user
    edits it by hand (``recall rules edit``), so the new version is theirs; otherwise (the
    MCP tool) it stays accepted only if the old one was."""
    found = find(rule_id, project)
    path = rules_file(found.scope, found.project)
    with _locked(path):
        rules = read_file(path, found.scope, found.project)
        for i, r in enumerate(rules):
            if r.id == found.id:
                new = validate(fields, r)
                new.updated = now_iso()
                rules[i] = new
                _write(path, rules)
                if new.scope == "project":
                    from recall.rules import trust

                    if accept or trust.is_trusted(r):
                        trust.record(new.project, add=[new], drop=[r])  # edited by the user: theirs now
                return new
    raise RuleError(f"Rule {found.id} was removed meanwhile: `recall rules list` shows the rules.")


def remove(rule_id: str, project: str | None) -> Rule:
    found = find(rule_id, project)
    path = rules_file(found.scope, found.project)
    with _locked(path):
        rules = read_file(path, found.scope, found.project)
        keep = [r for r in rules if r.id != found.id]
        if len(keep) != len(rules):
            _write(path, keep)
    if found.scope == "project":
        from recall.rules import trust

        trust.record(found.project, drop=[found])
    return found
