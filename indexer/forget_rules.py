"""A forget's selection as a standing rule: ``recall forget --match TEXT`` and ``--secret
VALUE`` also cover the lines archived after the command (a backfill still running, the
service down, a session still writing), and every rebuild.

The rule never holds the text: it is kept in ``archive/forgotten.json`` (``rules``) as the
text's length, its first and last characters, a salted BLAKE2b digest and a polynomial
rolling hash of it with a random base, with the forget's scope (sessions, project, before).
Ingest (``indexer.ledger.admit``) finds each place in a new message in scope where a text of
that length starts and ends with those characters (a regular expression: C speed), and the
digest confirms it (the rolling hash is for rules written before the two characters were). A ``match`` rule (case-insensitive, as ``--match``) drops the message; a
``secret`` rule cuts the value out of it (``[redacted:forgotten]``) and keeps the rest, as
the forget did to what was archived then.
"""

from __future__ import annotations

import hashlib
import secrets as _random
import time
from dataclasses import dataclass

MARK = "[redacted:forgotten]"
_P = (1 << 61) - 1


def _digest(salt: bytes, text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=salt, digest_size=16).hexdigest()


def _roll(text: str, base: int) -> int:
    h = 0
    for c in text:
        h = (h * base + ord(c)) % _P
    return h


@dataclass
class Rule:
    kind: str  # "match" | "secret"
    length: int
    base: int
    rolling: int
    salt: str
    digest: str
    sessions: tuple[str, ...] = ()
    project: str | None = None
    before: float | None = None
    at: float = 0.0
    ends: str = ""  # the text's first and last characters (what the search looks for)

    @classmethod
    def of(cls, kind: str, text: str, sessions=(), project: str | None = None, before: float | None = None) -> "Rule":
        text = text.casefold() if kind == "match" else text
        salt = _random.token_bytes(16)
        base = 256 + _random.randbelow(_P - 512)
        return cls(
            kind=kind,
            length=len(text),
            base=base,
            rolling=_roll(text, base),
            salt=salt.hex(),
            digest=_digest(salt, text),
            sessions=tuple(sorted(str(s) for s in sessions)),
            project=project,
            before=before,
            at=time.time(),
            ends=text[0] + text[-1],
        )

    @classmethod
    def from_json(cls, d) -> "Rule | None":
        try:
            rule = cls(
                kind=str(d["kind"]),
                length=int(d["length"]),
                base=int(d["base"]),
                rolling=int(d["rolling"]),
                salt=str(d["salt"]),
                digest=str(d["digest"]),
                sessions=tuple(str(s) for s in d.get("sessions") or ()),
                project=str(d["project"]) if d.get("project") else None,
                before=float(d["before"]) if d.get("before") is not None else None,
                at=float(d.get("at") or 0.0),
                ends=str(d.get("ends") or ""),
            )
            bytes.fromhex(rule.salt)
            if rule.ends and len(rule.ends) != 2:
                rule.ends = ""
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return rule if rule.kind in ("match", "secret") and rule.length > 0 else None

    def as_json(self) -> dict:
        return {
            "kind": self.kind,
            "length": self.length,
            "base": self.base,
            "rolling": self.rolling,
            "salt": self.salt,
            "digest": self.digest,
            "sessions": list(self.sessions),
            "project": self.project,
            "before": self.before,
            "at": self.at,
            "ends": self.ends,
        }

    def is_of(self, kind: str, text: str, sessions=(), project: str | None = None, before: float | None = None) -> bool:
        """Whether this rule stands for ``text`` with this scope (a forget run twice keeps one)."""
        text = text.casefold() if kind == "match" else text
        return (self.kind, self.length, self.sessions, self.project, self.before) == (
            kind,
            len(text),
            tuple(sorted(str(s) for s in sessions)),
            project,
            before,
        ) and _digest(bytes.fromhex(self.salt), text) == self.digest

    # matching ---------------------------------------------------------------------------------
    def in_scope(self, m) -> bool:
        if self.sessions and m.session_id not in self.sessions:
            return False
        if self.project and m.project != self.project:
            return False
        if self.before is not None and not (m.timestamp and m.timestamp < self.before):
            return False
        return True

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the rule's text occurs in ``text`` (non-overlapping, left to right)."""
        n = self.length
        if not text or len(text) < n:
            return []
        if self.ends:
            return self._spans_by_ends(text)
        return self._spans_rolling(text)

    def _spans_by_ends(self, text: str) -> list[tuple[int, int]]:
        import re

        n = self.length
        first, last = self.ends
        if first not in text or last not in text:
            return []
        pattern = _PATTERNS.get((self.ends, n))
        if pattern is None:
            body = re.escape(first) if n == 1 else re.escape(first) + f".{{{n - 2}}}" + re.escape(last)
            pattern = _PATTERNS[(self.ends, n)] = re.compile(f"(?=({body}))", re.S)
        salt = bytes.fromhex(self.salt)
        out: list[tuple[int, int]] = []
        last_end = -1
        for m in pattern.finditer(text):
            i = m.start()
            if i >= last_end and _digest(salt, m.group(1)) == self.digest:
                out.append((i, i + n))
                last_end = i + n
        return out

    def _spans_rolling(self, text: str) -> list[tuple[int, int]]:
        n = self.length
        base, target = self.base, self.rolling
        salt = bytes.fromhex(self.salt)
        top = pow(base, n - 1, _P)
        h = _roll(text[:n], base)
        out: list[tuple[int, int]] = []
        i = 0
        last = -1
        while True:
            if h == target and i >= last and _digest(salt, text[i : i + n]) == self.digest:
                out.append((i, i + n))
                last = i + n
            if i + n >= len(text):
                return out
            h = ((h - ord(text[i]) * top) * base + ord(text[i + n])) % _P
            i += 1

    def holds(self, text: str) -> bool:
        return bool(self.spans(text.casefold() if self.kind == "match" else text))

    def cut(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        parts, pos = [], 0
        for a, b in spans:
            parts += [text[pos:a], MARK]
            pos = b
        parts.append(text[pos:])
        return "".join(parts)


_PATTERNS: dict = {}


def load(data: dict) -> list[Rule]:
    return [r for r in (Rule.from_json(d) for d in (data.get("rules") or []) if isinstance(d, dict)) if r is not None]


def apply(rules: list[Rule], m):
    """``m`` as the rules leave it: None when a match rule drops it, a copy with every secret
    rule's value cut out, or ``m`` itself when no rule touches it."""
    import dataclasses

    out = m
    for rule in rules:
        if not rule.in_scope(m):
            continue
        if rule.kind == "match":
            if rule.holds(m.text):
                return None
            continue
        fields = [out.text, out.cwd, out.branch, *out.files, *(x for t in out.touched for x in t)]
        if not any(rule.spans(f) for f in fields if f):
            continue
        out = dataclasses.replace(
            out,
            cwd=rule.cut(out.cwd),
            branch=rule.cut(out.branch),
            text=rule.cut(out.text),
            files=[rule.cut(f) for f in out.files],
            touched=[[rule.cut(x) for x in t] for t in out.touched],
        )
    return out
