"""A forget's selection as a standing rule: ``recall forget --match TEXT`` and ``--secret
VALUE`` also cover the lines archived after the command (a backfill still running, the
service down, a session still writing), and every rebuild.

The rule never holds the text, nor anything that can be solved back to it: it is kept in
``archive/forgotten.json`` (``rules``) as the text's length, a keyed HMAC-SHA256 digest of it
and a 16-bit keyed tag (the prefilter), with the forget's scope (sessions, project, before).
The key is a random 32 bytes in ``$RECALL_HOME/forget.key`` (0600, created atomically by the
first such forget, never written into ``forgotten.json``). Without the key the stored values
are indistinguishable from random; with it (the whole state folder) a value can only be
found by trying candidates, one keyed digest each: a short or guessable one can be, a long
random one cannot (docs/privacy.md).

Ingest (``indexer.ledger.admit``) looks at every place in a new message in scope where a text
of a rule's length starts: the tag of every such window is computed for a whole batch at once
(a keyed polynomial hash of the window, mixed by a non-linear finaliser and cut to 16 bits:
numpy, C speed), and only the windows whose tag is a rule's are confirmed by the digest. A
``match`` rule (case-insensitive, as ``--match``) drops the message; a ``secret`` rule cuts
the value out of it (``[redacted:forgotten]``) and keeps the rest, as the forget did to what
was archived then.

Rules written before the keyed form (``legacy``: a salted BLAKE2b digest with the text's first
and last characters, or, older still, a polynomial rolling hash with its base) cannot be
converted without the text. They keep matching as they did; the rolling hash and its base,
the linear part the text can be solved back from, are dropped from every rule that has the
two characters (``strip_linear``); and each legacy rule is replaced by a keyed one as soon as
it catches a copy of its text (``Tombstones.upgrade_rules``) or the same forget is run again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets as _random
import time
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

MARK = "[redacted:forgotten]"
KEY_FILE = "forget.key"
KEY_BYTES = 32
TAG_BITS = 16
_P = (1 << 61) - 1  # the legacy rolling hash's modulus
_M64 = (1 << 64) - 1
_DOMAIN = b"recall forget rule v2\0"
SMALL = 256  # below this many windows a batch is confirmed digest by digest (no numpy)
CHUNK = 1 << 18  # characters scanned per numpy pass


# the key ------------------------------------------------------------------------------------
def key_path() -> Path:
    from recall.core import paths

    return paths.recall_home() / KEY_FILE


_KEYS: dict[str, tuple[tuple, bytes]] = {}


def load_key(create: bool = False) -> bytes | None:
    """The rules' key (``$RECALL_HOME/forget.key``); with ``create``, made on first use: 32
    random bytes written 0600 and linked into place, so two processes making it at once end up
    with the same key. None when there is none (or it is damaged) and ``create`` is False."""
    p = key_path()
    try:
        st = p.stat()
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        known = _KEYS.get(str(p))
        if known and known[0] == stamp:
            return known[1]
        data = p.read_bytes()
    except FileNotFoundError:
        data = None
    except OSError:
        return None
    if data is not None and len(data) == KEY_BYTES:
        _KEYS[str(p)] = (stamp, data)
        return data
    if not create:
        if data is not None:
            from recall.core import log

            log.get("ingest").warning(
                "%s is damaged (%d bytes): the forget rules keyed by it match nothing", p, len(data)
            )
        return None
    from recall.core import paths

    paths.ensure_dir(p.parent)
    key = _random.token_bytes(KEY_BYTES)
    if data is not None:  # damaged: it keys nothing any more, a new one loses nothing more
        paths.atomic_write(p, key)
    else:
        tmp = p.with_name(f".{p.name}.{os.getpid()}.{_random.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(key)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, p)  # never replaces a key another process made meanwhile
            except FileExistsError:
                pass
        finally:
            tmp.unlink(missing_ok=True)
    return load_key(create=False)


@dataclass
class _Keyed:
    """What the key derives: the HMAC key, and the prefilter's table and constants."""

    mac: bytes
    table: list[int]
    mult: int
    high: int
    mask: int
    _np: dict = field(default_factory=dict)

    @classmethod
    def of(cls, key: bytes) -> "_Keyed":
        mac = hmac.new(key, b"digest", hashlib.sha256).digest()
        raw = hashlib.shake_256(hmac.new(key, b"prefilter", hashlib.sha256).digest()).digest(8 * 65536 + 24)
        table = [int.from_bytes(raw[i : i + 8], "little") for i in range(0, 8 * 65536, 8)]
        c = [int.from_bytes(raw[8 * 65536 + i : 8 * 65536 + i + 8], "little") for i in (0, 8, 16)]
        return cls(mac=mac, table=table, mult=c[0] | 1, high=c[1] | 1, mask=c[2])

    def digest(self, kind: str, text: str) -> str:
        return hmac.new(self.mac, _DOMAIN + kind.encode() + b"\0" + _utf8(text), hashlib.sha256).hexdigest()

    def tag(self, text: str) -> int:
        h, t, r, hi = 0, self.table, self.mult, self.high
        for ch in text:
            c = ord(ch)
            h = (h * r + t[c & 0xFFFF] + (c >> 16) * hi) & _M64
        return _fmix(h ^ self.mask) >> (64 - TAG_BITS)


_KEYED: dict[bytes, _Keyed] = {}
_WARNED: list = []  # the missing key said once per process


def keyed(key: bytes) -> _Keyed:
    k = _KEYED.get(key)
    if k is None:
        k = _KEYED[key] = _Keyed.of(key)
    return k


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _fmix(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & _M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & _M64
    return x ^ (x >> 33)


# legacy rules (before the key) ---------------------------------------------------------------
def _legacy_digest(salt: bytes, text: str) -> str:
    return hashlib.blake2b(_utf8(text), key=salt, digest_size=16).hexdigest()


def _roll(text: str, base: int) -> int:
    h = 0
    for c in text:
        h = (h * base + ord(c)) % _P
    return h


@dataclass
class Legacy:
    """A rule's old, unkeyed form: salted digest, the text's ends, or the rolling hash."""

    salt: str
    digest: str
    ends: str = ""
    base: int = 0
    rolling: int = 0

    def same(self, text: str) -> bool:
        return _legacy_digest(bytes.fromhex(self.salt), text) == self.digest

    def spans(self, text: str, n: int) -> list[tuple[int, int]]:
        if not text or len(text) < n:
            return []
        if self.ends:
            return self._by_ends(text, n)
        if self.base:
            return self._by_rolling(text, n)
        return []

    def _by_ends(self, text: str, n: int) -> list[tuple[int, int]]:
        import re

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
            if i >= last_end and _legacy_digest(salt, m.group(1)) == self.digest:
                out.append((i, i + n))
                last_end = i + n
        return out

    def _by_rolling(self, text: str, n: int) -> list[tuple[int, int]]:
        base, target = self.base, self.rolling
        salt = bytes.fromhex(self.salt)
        top = pow(base, n - 1, _P)
        h = _roll(text[:n], base)
        out: list[tuple[int, int]] = []
        i = 0
        last = -1
        while True:
            if h == target and i >= last and _legacy_digest(salt, text[i : i + n]) == self.digest:
                out.append((i, i + n))
                last = i + n
            if i + n >= len(text):
                return out
            h = ((h - ord(text[i]) * top) * base + ord(text[i + n])) % _P
            i += 1


_PATTERNS: dict = {}


# rules --------------------------------------------------------------------------------------
@dataclass
class Rule:
    kind: str  # "match" | "secret"
    length: int
    digest: str = ""  # HMAC-SHA256 under forget.key (hex); "" for a legacy rule
    tag: int = 0  # the keyed 16-bit prefilter
    sessions: tuple[str, ...] = ()
    project: str | None = None
    before: float | None = None
    at: float = 0.0
    legacy: Legacy | None = None

    @classmethod
    def of(cls, kind: str, text: str, sessions=(), project: str | None = None, before: float | None = None) -> "Rule":
        text = text.casefold() if kind == "match" else text
        key = load_key(create=True)
        if key is None:
            raise OSError(f"cannot read {key_path()}")
        k = keyed(key)
        return cls(
            kind=kind,
            length=len(text),
            digest=k.digest(kind, text),
            tag=k.tag(text),
            sessions=tuple(sorted(str(s) for s in sessions)),
            project=project,
            before=before,
            at=time.time(),
        )

    @classmethod
    def from_json(cls, d) -> "Rule | None":
        try:
            common = dict(
                kind=str(d["kind"]),
                length=int(d["length"]),
                sessions=tuple(str(s) for s in d.get("sessions") or ()),
                project=str(d["project"]) if d.get("project") else None,
                before=float(d["before"]) if d.get("before") is not None else None,
                at=float(d.get("at") or 0.0),
            )
            if "salt" in d:  # written before the key
                old = Legacy(
                    salt=str(d["salt"]),
                    digest=str(d["digest"]),
                    ends=str(d.get("ends") or ""),
                    base=int(d.get("base") or 0),
                    rolling=int(d.get("rolling") or 0),
                )
                bytes.fromhex(old.salt)
                if old.ends and len(old.ends) != 2:
                    old.ends = ""
                if old.ends:
                    old.base = old.rolling = 0  # not needed, never written again
                if not old.ends and not old.base:
                    return None  # nothing left to match it by
                rule = cls(legacy=old, **common)
            else:
                rule = cls(digest=str(d["digest"]), tag=int(d["tag"]), **common)
                bytes.fromhex(rule.digest)
                if len(rule.digest) != 64 or not 0 <= rule.tag < (1 << TAG_BITS):
                    return None
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return rule if rule.kind in ("match", "secret") and rule.length > 0 else None

    def as_json(self) -> dict:
        scope = {"sessions": list(self.sessions), "project": self.project, "before": self.before, "at": self.at}
        if self.legacy is None:
            return {"kind": self.kind, "length": self.length, "tag": self.tag, "digest": self.digest, **scope}
        old = self.legacy
        out = {"kind": self.kind, "length": self.length, "salt": old.salt, "digest": old.digest}
        if old.ends:
            out["ends"] = old.ends  # the rolling hash and its base are not written again
        else:
            out.update(base=old.base, rolling=old.rolling)
        return {**out, **scope}

    def is_of(self, kind: str, text: str, sessions=(), project: str | None = None, before: float | None = None) -> bool:
        """Whether this rule stands for ``text`` with this scope (a forget run twice keeps one)."""
        text = text.casefold() if kind == "match" else text
        if (self.kind, self.length, self.sessions, self.project, self.before) != (
            kind,
            len(text),
            tuple(sorted(str(s) for s in sessions)),
            project,
            before,
        ):
            return False
        if self.legacy is not None:
            return self.legacy.same(text)
        key = load_key()
        return key is not None and hmac.compare_digest(keyed(key).digest(kind, text), self.digest)

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
        if self.legacy is not None:
            return self.legacy.spans(text, self.length)
        return _Scan([self]).spans([text])[0].get(id(self), [])

    def holds(self, text: str) -> bool:
        return bool(self.spans(text.casefold() if self.kind == "match" else text))

    def cut(self, text: str) -> str:
        return _cut(text, self.spans(text))


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, pos = [], 0
    for a, b in spans:
        parts += [text[pos:a], MARK]
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def _greedy(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Non-overlapping, left to right (the longer first at the same place)."""
    out: list[tuple[int, int]] = []
    end = -1
    for a, b in sorted(spans, key=lambda s: (s[0], -s[1])):
        if a >= end:
            out.append((a, b))
            end = b
    return out


class _Scan:
    """The keyed rules of one kind, looked for in many texts at once."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = [r for r in rules if r.legacy is None]
        self.by_digest: dict[str, list[Rule]] = {}
        for r in self.rules:
            self.by_digest.setdefault(r.digest, []).append(r)
        self.lengths: dict[int, set[int]] = {}
        for r in self.rules:
            self.lengths.setdefault(r.length, set()).add(r.tag)
        key = load_key() if self.rules else None
        self.k = keyed(key) if key is not None else None
        if self.rules and key is None and not _WARNED:
            from recall.core import log
            from recall.core.text import counted

            _WARNED.append(True)
            log.get("ingest").warning(
                "%s is missing: the %s keyed by it %s nothing more",
                key_path(),
                counted(len(self.rules), "forget rule"),
                "catches" if len(self.rules) == 1 else "catch",
            )

    def spans(self, texts: list[str]) -> list[dict[int, list[tuple[int, int]]]]:
        """For each text, {id(rule): its spans} of the rules found in it (each rule's spans
        non-overlapping, left to right)."""
        out: list[dict[int, list[tuple[int, int]]]] = [{} for _ in texts]
        if self.k is None or not texts:
            return out
        chars = sum(map(len, texts))
        if chars < min(self.lengths):
            return out
        hits: list[tuple[int, int, int]] = []  # (text, start, length)
        if chars * len(self.lengths) <= SMALL:
            for ti, t in enumerate(texts):
                for n in self.lengths:
                    hits += ((ti, i, n) for i in range(len(t) - n + 1))
        else:
            hits = self._candidates(texts)
        found: dict[tuple[int, int], list[tuple[int, int]]] = {}
        kinds = {r.kind for r in self.rules}
        for ti, i, n in hits:
            window = texts[ti][i : i + n]
            for kind in kinds:
                for r in self.by_digest.get(self.k.digest(kind, window), ()):
                    if r.kind == kind and r.length == n:
                        found.setdefault((ti, id(r)), []).append((i, i + n))
        for (ti, rid), spans in found.items():
            out[ti][rid] = _greedy(spans)
        return out

    def _candidates(self, texts: list[str]) -> list[tuple[int, int, int]]:
        """The windows whose keyed tag is a rule's of that length, every text at once (numpy)."""
        import numpy as np

        k = self.k
        arrays = k._np
        if "table" not in arrays:
            arrays["table"] = np.array(k.table, dtype=np.uint64)
        table = arrays["table"]
        out: list[tuple[int, int, int]] = []
        luts: dict = {}
        longest = max(self.lengths)
        # chunks of whole texts (a text longer than a chunk is a chunk of its own)
        chunk: list[int] = []
        size = 0
        groups: list[list[int]] = []
        for ti, t in enumerate(texts):
            if len(t) < min(self.lengths):
                continue
            if chunk and size + len(t) + 1 > CHUNK:
                groups.append(chunk)
                chunk, size = [], 0
            chunk.append(ti)
            size += len(t) + 1
        if chunk:
            groups.append(chunk)
        with np.errstate(over="ignore"):
            for group in groups:
                starts: list[int] = []
                pos = 0
                for ti in group:
                    starts.append(pos)
                    pos += len(texts[ti]) + 1
                joined = "\0".join(texts[ti] for ti in group)
                a = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
                total = len(a)
                v = table[a & np.uint64(0xFFFF)] + (a >> np.uint64(16)) * np.uint64(k.high)
                up, down = self._powers(np, total + longest)
                q = np.zeros(total + 1, dtype=np.uint64)
                np.cumsum(v * down[:total], out=q[1:])
                for n, tags in self.lengths.items():
                    if total < n:
                        continue
                    w = up[n - 1 : total] * (q[n : total + 1] - q[: total - n + 1])
                    w ^= np.uint64(k.mask)
                    w ^= w >> np.uint64(33)
                    w *= np.uint64(0xFF51AFD7ED558CCD)
                    w ^= w >> np.uint64(33)
                    w *= np.uint64(0xC4CEB9FE1A85EC53)
                    w ^= w >> np.uint64(33)
                    w >>= np.uint64(64 - TAG_BITS)
                    lut = luts.get(n)
                    if lut is None:
                        lut = luts[n] = np.zeros(1 << TAG_BITS, dtype=bool)
                        lut[sorted(tags)] = True
                    hit = np.flatnonzero(lut[w])
                    for i in hit.tolist():
                        g = bisect_right(starts, i) - 1
                        local = i - starts[g]
                        if local + n <= len(texts[group[g]]):  # within one text
                            out.append((group[g], local, n))
        return out

    def _powers(self, np, size: int):
        """mult**i and mult**-i (mod 2**64) for i < size, kept and grown as needed."""
        arrays = self.k._np
        have = arrays.get("up")
        if have is None or len(have) < size:
            size = max(size, 2 * len(have) if have is not None else 0, 4096)
            inv = pow(self.k.mult, -1, 1 << 64)
            up = np.full(size, self.k.mult, dtype=np.uint64)
            up[0] = 1
            down = np.full(size, inv, dtype=np.uint64)
            down[0] = 1
            with np.errstate(over="ignore"):
                arrays["up"] = np.cumprod(up, dtype=np.uint64)
                arrays["down"] = np.cumprod(down, dtype=np.uint64)
        return arrays["up"], arrays["down"]


def load(data: dict) -> list[Rule]:
    return [r for r in (Rule.from_json(d) for d in (data.get("rules") or []) if isinstance(d, dict)) if r is not None]


def _fields(m) -> list[str]:
    return [m.text, m.cwd, m.branch, *m.files, *(x for t in m.touched for x in t)]


def apply(rules: list[Rule], m, found: list | None = None):
    """``m`` as the rules leave it: None when a match rule drops it, a copy with every secret
    rule's value cut out, or ``m`` itself when no rule touches it."""
    return apply_many(rules, [m], found)[0]


def apply_many(rules: list[Rule], messages: list, found: list | None = None) -> list:
    """``apply`` to each of ``messages``, the keyed rules looked for in all of them at once.
    ``found`` collects (legacy rule, the text it caught) for ``Tombstones.upgrade_rules``."""
    import dataclasses

    out = list(messages)
    if not rules or not messages:
        return out
    matches = [r for r in rules if r.kind == "match"]
    secrets = [r for r in rules if r.kind == "secret"]
    if matches:
        scan = _Scan(matches)
        todo = [i for i, m in enumerate(messages) if any(r.in_scope(m) for r in matches)]
        folded = [messages[i].text.casefold() for i in todo]
        keyed_hits = scan.spans(folded) if scan.rules else [{} for _ in todo]
        for j, i in enumerate(todo):
            m = messages[i]
            for r in matches:
                if not r.in_scope(m):
                    continue
                spans = keyed_hits[j].get(id(r)) if r.legacy is None else r.legacy.spans(folded[j], r.length)
                if spans:
                    if r.legacy is not None and found is not None:
                        found.append((r, folded[j][spans[0][0] : spans[0][1]]))
                    out[i] = None
                    break
    if secrets:
        scan = _Scan(secrets)
        todo = [i for i, m in enumerate(out) if m is not None and any(r.in_scope(m) for r in secrets)]
        fields = [_fields(out[i]) for i in todo]
        flat = [f for fs in fields for f in fs]
        hits = scan.spans(flat) if scan.rules else [{} for _ in flat]
        at = 0
        for j, i in enumerate(todo):
            m, fs = out[i], fields[j]
            mine = hits[at : at + len(fs)]
            at += len(fs)
            cut: list[list[tuple[int, int]]] = [[] for _ in fs]
            for r in secrets:
                if not r.in_scope(m):
                    continue
                for fi, f in enumerate(fs):
                    if not f:
                        continue
                    spans = mine[fi].get(id(r)) if r.legacy is None else r.legacy.spans(f, r.length)
                    if spans:
                        cut[fi] += spans
                        if r.legacy is not None and found is not None:
                            found.append((r, f[spans[0][0] : spans[0][1]]))
            if not any(cut):
                continue
            new = [_cut(f, _greedy(c)) for f, c in zip(fs, cut)]
            nf = len(m.files)
            it = iter(new[3 + nf :])
            out[i] = dataclasses.replace(
                m,
                text=new[0],
                cwd=new[1],
                branch=new[2],
                files=new[3 : 3 + nf],
                touched=[[next(it) for _ in t] for t in m.touched],
            )
    return out
