"""The record of what the prompt hook did with each prompt: ``recall log`` reads it.

One JSON line per prompt in ``$RECALL_HOME/injections.jsonl`` (0600), appended by the hook
process once its output is out (one ``write``; never raises, never blocks the prompt;
with or without the service). When the file passes ``MAX_BYTES`` it becomes
``injections.jsonl.1`` (the previous one dropped): the log stays under twice that size.

A record: ``t`` (epoch seconds), ``project`` (the prompt's cwd), ``session``, ``outcome``
(``trivial`` | ``nothing`` | ``rules`` | ``raw`` | ``synthesized`` | ``dropped``: a briefing written
in the background after its turn had ended), ``why`` (trivial: which rule;
raw: why there was no synthesis — ``no backend``, ``deadline``, ``error``, ``cap``,
``synthesis off``; nothing: ``no hits`` or ``model found nothing relevant``),
``hits`` ([{``session``, ``score``}]), ``backend`` (``api`` | ``claude-code`` | ``off``),
``via`` (``service`` | ``in-process``), ``path`` (which path decided: ``model``, the synthesis read
the candidates above ``hook.model_min_confidence``; ``raw``, no model, the strict
``hook.min_confidence``) and ``gate`` ({``setting``, ``value``}: the gate it applied), ``best`` (the
best candidate's confidence), ``injected`` (the past sessions whose content went in: a later prompt
of the same conversation does not get them again) and ``repeated`` (sessions passed over because
they were injected earlier in it), ``chars`` and ``tokens`` (estimated, chars / 4) of the
injected text, ``latency_ms`` (process start to output), ``way`` (``nothing`` | ``raw`` | ``wait`` |
``background``: ``recall.prompt.ways``) and ``held_ms`` (how long the prompt was held: process start
to the first line out, the async marker on the ``background`` way) and ``text``: the exact text injected;
``wrong`` (and ``wrong_at``) once the user marked the injection wrong in ``recall ui``.
The prompt itself is never stored; the injected text comes from the redacted archive (and is
redacted once more where it was built).

A record is one ``InjectionRecord``: the hook writes it (``record``, ``append``) and every reader
(``recall log``, ``recall status``, ``recall stats``, the page) reads a line through it
(``InjectionRecord.of``: each field of the type the writer gives it, whatever the line holds);
its ``outcome`` is an ``Outcome``.

Stdlib only: the prompt hook imports it.
"""

from __future__ import annotations

import json
import os
import time
from enum import StrEnum

MAX_BYTES = 2 << 20


class Outcome(StrEnum):
    """What the hook did with a prompt (a record's ``outcome``; compares equal to its word)."""

    TRIVIAL = "trivial"  # not worth a search (``why``: which rule)
    NOTHING = "nothing"  # nothing injected
    RULES = "rules"  # the fired rules alone (``recall rules``), no past session
    RAW = "raw"  # the raw path's snippets (``why``: why no synthesis)
    SYNTHESIZED = "synthesized"  # the model's briefing
    DROPPED = "dropped"  # a briefing written in the background after its turn had ended
    REFUSED = "refused"  # paused, switched off or excluded: in a trace only, never logged


OUTCOMES = tuple(o.value for o in Outcome if o is not Outcome.REFUSED)  # what a record's outcome may be
INJECTED = (Outcome.RAW, Outcome.SYNTHESIZED)  # outcomes that put a past session's content in

# (field, what a reader gets when a line lacks it or holds another type): the record as the
# hook writes it, in this order
_FIELDS: tuple[tuple[str, object], ...] = (
    ("t", 0.0),
    ("project", ""),
    ("session", ""),
    ("outcome", ""),
    ("why", ""),
    ("hits", ()),
    ("backend", ""),
    ("via", ""),
    ("service", ""),
    ("path", ""),
    ("gate", None),
    ("best", None),
    ("injected", ()),
    ("chars", 0),
    ("tokens", 0),
    ("latency_ms", 0.0),
    ("way", ""),
    ("held_ms", None),
    ("text", ""),
)
# written only when set: sessions passed over (injected earlier in the conversation), and the
# user's mark (``mark_wrong``)
_OPTIONAL: tuple[tuple[str, object], ...] = (("repeated", ()), ("wrong", False), ("wrong_at", None))
FIELDS = tuple(k for k, _ in _FIELDS + _OPTIONAL)


def _num(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _of_type(default, value):
    """``value`` as a reader may take it: of the type the writer gives the field, else ``default``."""
    if isinstance(default, str):
        return value if isinstance(value, str) else default
    if isinstance(default, bool):
        return value is True
    if isinstance(default, float):
        n = _num(value)
        return n if n is not None else default
    if isinstance(default, int):
        n = _num(value)
        return int(n) if n is not None and n == n and abs(n) != float("inf") else default
    if isinstance(default, tuple):
        return list(value) if isinstance(value, list) else []
    return value  # gate (a dict), best, held_ms, wrong_at (numbers): checked where read


class InjectionRecord:
    """One line of the injection log: what the hook did with one prompt (the fields above, in the
    module's docstring). The hook builds it (``record``); a reader gets one from a line (``of``),
    each field of the writer's type whatever the line holds (another version's, a damaged one)."""

    __slots__ = FIELDS

    def __init__(self, **fields) -> None:
        for key, default in _FIELDS + _OPTIONAL:
            setattr(self, key, fields.get(key, list(default) if isinstance(default, tuple) else default))

    @classmethod
    def of(cls, line: dict) -> InjectionRecord:
        """The record a parsed line holds, every field checked (a missing one: its default)."""
        rec = cls.__new__(cls)
        get = line.get if isinstance(line, dict) else {}.get
        for key, default in _FIELDS + _OPTIONAL:
            setattr(rec, key, _of_type(default, get(key, default)))
        rec.gate = rec.gate if isinstance(rec.gate, dict) else {}
        rec.best, rec.held_ms, rec.wrong_at = _num(rec.best), _num(rec.held_ms), _num(rec.wrong_at)
        rec.hits = [h for h in rec.hits if isinstance(h, dict)]
        rec.outcome = Outcome(rec.outcome) if rec.outcome in OUTCOMES else rec.outcome
        return rec

    def as_dict(self) -> dict:
        """The line as the hook writes it (the optional fields only when set)."""
        out = {k: getattr(self, k) for k, _ in _FIELDS}
        for key, _ in _OPTIONAL:
            value = getattr(self, key)
            if value:
                out[key] = value
        return out

    @property
    def injected_content(self) -> bool:
        """A past session's content went in (``raw`` or ``synthesized``, with text)."""
        return self.outcome in INJECTED and bool(self.text)

    @property
    def decided_by(self) -> str:
        """Which path decided what went in: ``path`` (``model`` or ``raw``), else the outcome's (a
        record from before the field was written)."""
        if self.path:
            return self.path
        return {Outcome.SYNTHESIZED: "model", Outcome.RAW: "raw"}.get(self.outcome, "")


def log_path():
    from recall.core import paths

    return paths.recall_home() / "injections.jsonl"


def estimate_tokens(chars: int) -> int:
    return (int(chars) + 3) // 4


def append(record: InjectionRecord | dict) -> None:
    """Append one record (an ``InjectionRecord``; a dict is written as it is: a test's line, or
    another writer's) (rotating the file when it is full). Never raises. A probe of the
    hook (``RECALL_HOOK_PROBE=1``: `recall doctor` runs it to see that it works) is not a
    prompt of the user's and is not logged."""
    if os.environ.get("RECALL_HOOK_PROBE") == "1":
        return
    try:
        if isinstance(record, InjectionRecord):
            record = record.as_dict()
        path = log_path()
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            if os.stat(path).st_size + len(line) > MAX_BYTES:
                os.replace(path, f"{path}.1")
        except FileNotFoundError:
            os.makedirs(path.parent, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except (OSError, TypeError, ValueError):
        pass


def record(payload: dict, trace: dict, output: dict | None, started: float) -> InjectionRecord:
    """The log record of one prompt from the hook payload, the pipeline's ``trace`` and the
    output that was printed."""
    text = ""
    if isinstance(output, dict):
        text = (output.get("hookSpecificOutput") or {}).get("additionalContext") or ""
    outcome = trace.get("outcome") or (Outcome.RAW if text else Outcome.NOTHING)
    hits = trace.get("hits", [])
    return InjectionRecord(
        t=round(time.time(), 3),
        project=payload.get("cwd") if isinstance(payload.get("cwd"), str) else "",
        session=payload.get("session_id") if isinstance(payload.get("session_id"), str) else "",
        outcome=outcome,
        why=trace.get("why", ""),
        hits=hits,
        backend=trace.get("backend", ""),
        via=trace.get("via", ""),
        service=trace.get("service", ""),  # "hung" / "untrusted" / "skipped: …" when it was not used
        path=trace.get("path", ""),
        gate=trace.get("gate", {}),
        best=trace.get("best"),
        injected=(
            trace.get("injected")
            or list(dict.fromkeys(h.get("session") for h in hits if isinstance(h, dict) and h.get("session")))
        )
        if text
        else [],
        chars=len(text),
        tokens=estimate_tokens(len(text)),
        latency_ms=round((time.time() - started) * 1000, 1),
        way=trace.get("way", ""),
        held_ms=trace.get("held_ms"),
        text=trace.get("text", text) if text else "",
        repeated=trace.get("repeated") or [],
    )


TAIL_BYTES = 256 << 10  # of the log read for a conversation's earlier injections


def injected_sessions(session_id: str | None) -> frozenset[str]:
    """The past sessions injected earlier in the conversation ``session_id`` (Claude Code's
    session id): the newest ``TAIL_BYTES`` of the log, only lines naming it parsed. Never
    raises (nothing known: nothing skipped)."""
    if not session_id:
        return frozenset()
    needle = json.dumps(session_id).encode("utf-8")
    out: set[str] = set()
    try:
        with open(log_path(), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return frozenset()
    for line in data.splitlines():
        if needle not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("session") == session_id and isinstance(rec.get("injected"), list):
            out.update(s for s in rec["injected"] if isinstance(s, str))
    return frozenset(out)


def read(limit: int | None = None) -> list[dict]:
    """The records, oldest first (the last ``limit`` when given); unreadable lines skipped."""
    from recall.core.jsonio import read_jsonl

    out: list[dict] = []
    path = log_path()
    for p in (f"{path}.1", str(path)):
        out.extend(read_jsonl(p))
    out.sort(key=lambda r: r.get("t", 0) if isinstance(r.get("t", 0), (int, float)) else 0)
    return out[-limit:] if limit else out


def rewrite(keep) -> int:
    """Rewrite the log through ``keep(record) -> record | None`` (None drops it): how
    ``recall forget`` removes what it forgets from here too. Returns how many records
    changed or went. Each file is replaced atomically (tmp + rename, 0600)."""
    changed = 0
    path = log_path()
    for p in (f"{path}.1", str(path)):
        try:
            with open(p, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError:
            continue
        out = []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            new = keep(dict(rec)) if isinstance(rec, dict) else rec
            if new != rec:
                changed += 1
            if new is not None:
                out.append(json.dumps(new, ensure_ascii=False, separators=(",", ":")) + "\n")
        if changed:
            tmp = f"{p}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, "".join(out).encode("utf-8"))
            finally:
                os.close(fd)
            os.replace(tmp, p)
    return changed


def mark_wrong(t: float, session: str = "", wrong: bool = True) -> int:
    """Mark the record of the prompt at time ``t`` (of ``session`` when given) as a wrong
    injection (``recall ui``): kept, shown by ``recall log``, there to calibrate the gate
    against; ``wrong=False`` takes the mark back. How many records changed."""

    def keep(rec: dict) -> dict:
        try:
            same = abs(float(rec.get("t", 0)) - float(t)) < 5e-4
        except (TypeError, ValueError):
            return rec
        if not same or (session and rec.get("session") != session):
            return rec
        if wrong:
            rec["wrong"] = True
            rec["wrong_at"] = round(time.time(), 3)
        else:
            rec.pop("wrong", None)
            rec.pop("wrong_at", None)
        return rec

    return rewrite(keep)


def rewrite_or_warn(keep, what: str, logger: str) -> int:
    """``rewrite``, with a failure to write logged to ``logger`` ("the injection log was not
    {what}") instead of raised: the caller's other stores go on. Returns how many changed."""
    try:
        return rewrite(keep)
    except OSError as exc:
        from recall.core import log

        log.get(logger).warning("the injection log was not %s: %s", what, exc)
        return 0


def day_summary(now: float | None = None, records: list[dict] | None = None) -> dict:
    """The last 24 hours: prompts per outcome, fallback reasons, injected tokens (of ``records``
    when the caller has them read already, e.g. ``recall ui``'s cache)."""
    cutoff = (now or time.time()) - 86400
    out = {"prompts": 0, "injected_tokens": 0, "outcomes": {k: 0 for k in OUTCOMES}, "raw_why": {}}
    for line in read() if records is None else records:
        t = line.get("t", 0)
        if not isinstance(t, (int, float)) or t < cutoff:
            continue
        rec = InjectionRecord.of(line)
        out["prompts"] += 1
        if rec.outcome in out["outcomes"]:
            out["outcomes"][rec.outcome] += 1
        if rec.outcome == Outcome.RAW and rec.why:
            out["raw_why"][rec.why] = out["raw_why"].get(rec.why, 0) + 1
        out["injected_tokens"] += rec.tokens
    return out
