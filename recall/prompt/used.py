"""Whether the reply after an injection used it (issue 34, "Was it used"): ``recall log`` and
``recall stats`` read it from the archive.

The injection log keeps what was injected (``text``), for which conversation (``session``, the
prompt's ``project`` cwd) and when (``t``); the archive keeps that conversation as it was
indexed. The prompt the hook ran on is the conversation's user prompt nearest ``t``; its reply is
what the assistant wrote and called until the next prompt. The reply used the injection when it
cites it (an injected session's id, "from an earlier session", "recalled context"), repeats one
of its distinctive names (a path, an identifier: ``deploy/billing.yaml``, ``processed_events``,
``PriceCents``) or at least ``MIN_WORDS`` of its distinctive words. Words the prompt itself held
never count: repeating the question is no use of the answer. Until the reply is indexed, it is
not known (``None``).

Nothing is stored: the verdict is computed when asked (one read of each conversation's archive
file), so ``recall forget`` has nothing more to remove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PROMPT_SLACK = 120.0  # the prompt is at most this many seconds before the hook's record ...
AFTER_SLACK = 30.0  # ... or this many after it (clocks, a slow write)
MIN_WORDS = 3  # distinctive words of the injection a reply repeats to have used it
MIN_WORD_CHARS = 5
REPLY_CHARS = 200_000  # of one reply read at most

_STAMP = re.compile(r"\[\d{4}-\d{2}-\d{2}[^\]\n]*\]")  # "[2026-11-20 session abcdef12]"
_BOILERPLATE = re.compile(
    r"^\s*(?:</?recalled-context[^>]*>|Recalled by recall\b.*|Rules? (?:that )?appl.*)$", re.I | re.M
)
_TOKEN = re.compile(r"[\w./@:#-]+")
_WORD = re.compile(r"[a-z]+")
_HEXISH = re.compile(r"^[0-9a-f]{7,}$")
_CITES = re.compile(
    r"\b(?:recalled context|recalled-context|(?:an?|the) (?:earlier|previous|past|prior) "
    r"(?:session|conversation)|from (?:recall|memory|your notes)|as we (?:decided|discussed|agreed))\b",
    re.I,
)
# words so common in replies that sharing them says nothing (beyond the prompt stopwords)
_COMMON = frozenset(
    """about above after again added adding against almost along already although always among
    another around based became because become before being below between change changed changes check
    checked could doesn every example first found going great having instead issue later least looks
    makes means might needs never number other others place right seems should since small
    something still sure their there these thing think those though three through today under until using
    value values where which while without works would write wrote years yours""".split()
)


@dataclass
class Turn:
    """A prompt of a conversation, as archived, and the reply it got (until the next prompt)."""

    ts: float
    prompt: str
    reply: list[str] = field(default_factory=list)  # the assistant's texts and tool calls, in order
    answered: bool = False  # a later prompt came: the reply is complete


def _stops() -> frozenset[str]:
    from recall.search.words import FRAMING, PROMPT_STOPWORDS

    return frozenset(PROMPT_STOPWORDS) | frozenset(FRAMING) | _COMMON


def read_turns(project_cwd: str, session: str) -> list[Turn]:
    """The prompts of conversation ``session`` (of the project ``project_cwd`` belongs to), oldest
    first, each with its reply; [] when it is not archived (yet)."""
    import os

    from indexer.archive_files import iter_lines, session_relpath
    from indexer.project import canonical_project
    from recall.core import paths

    if not session or not project_cwd:
        return []
    path = os.path.join(paths.archive_dir(), session_relpath(canonical_project(project_cwd), session))
    turns: list[Turn] = []
    size = 0
    for _pos, rec in iter_lines(path):
        role = rec.get("role")
        if role == "user" and not rec.get("echo"):
            if turns:
                turns[-1].answered = True
            turns.append(Turn(float(rec.get("timestamp") or 0.0), str(rec.get("text") or "")))
            size = 0
        elif role in ("assistant", "tool_use") and turns and size < REPLY_CHARS:
            text = str(rec.get("text") or "")
            turns[-1].reply.append(text)
            size += len(text)
    return turns


def turn_at(turns: list[Turn], t: float) -> Turn | None:
    """The prompt the hook logged at ``t``: the one nearest it, within the slack."""
    near = [x for x in turns if t - PROMPT_SLACK <= x.ts <= t + AFTER_SLACK]
    return min(near, key=lambda x: abs(x.ts - t)) if near else None


def _injected_text(text: str) -> str:
    return _BOILERPLATE.sub("", _STAMP.sub(" ", text))


def _names(text: str) -> set[str]:
    """Paths and identifiers: ``a/b.py``, ``price_cents``, ``PriceCents``, ``eu-west-1``, ``v2.3``."""
    out = set()
    for tok in _TOKEN.findall(text):
        tok = tok.strip(".:,#@-/")
        if len(tok) < 4 or _HEXISH.match(tok.lower()) or tok.replace(".", "").isdigit():
            continue
        letters = any(c.isalpha() for c in tok)
        if not letters:
            continue
        if (
            "/" in tok
            or "_" in tok
            or re.search(r"[a-z][A-Z]", tok)
            or re.search(r"\w\.\w", tok)
            or (any(c.isdigit() for c in tok) and "-" not in tok[:1])
        ):
            out.add(tok)
    return out


def _words(text: str, stops: frozenset[str]) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= MIN_WORD_CHARS and w not in stops}


def judge(text: str, prompt: str, reply: str, sessions: list[str] = ()) -> tuple[bool, str]:
    """(used, why) for an injection ``text`` given the ``prompt`` it was for and the ``reply``."""
    for s in sessions:
        if s and s[:8] in reply:
            return True, f"cites session {s[:8]}"
    body = _injected_text(text)
    said = prompt.lower()
    for name in sorted(_names(body) - _names(prompt), key=lambda n: (-len(n), n)):
        if name.lower() in said:
            continue
        if name in reply or (len(name) >= 8 and name.lower() in reply.lower()):
            return True, f"repeats {name}"
    stops = _stops()
    shared = sorted((_words(body, stops) - _words(prompt, stops)) & _words(reply, stops))
    if len(shared) >= MIN_WORDS:
        return True, "repeats its words: " + ", ".join(shared[:5])
    m = _CITES.search(reply)
    if m:
        return True, f"cites it (\"{m.group(0)}\")"
    return False, "the reply repeats nothing distinctive of it"


def injected(rec: dict) -> bool:
    """A past session's content went into the prompt (``InjectionRecord.injected_content``)."""
    from recall.prompt.injections import INJECTED

    return rec.get("outcome") in INJECTED and bool(rec.get("text"))


def annotate(records: list[dict], cache: dict | None = None) -> None:
    """Set ``used`` (True, False, or None: not known yet) and ``used_why`` on every injected
    record, reading each conversation's archive once (``cache``: session key -> turns, shared
    with ``recall stats``). Never raises: what cannot be read is not known."""
    cache = cache if cache is not None else {}
    for rec in records:
        if not injected(rec):
            continue
        try:
            rec["used"], rec["used_why"] = verdict(rec, cache)
        except Exception as exc:  # noqa: BLE001 - a damaged archive line must not break `recall log`
            rec["used"], rec["used_why"] = None, f"could not be read ({type(exc).__name__})"


def label(rec: dict) -> str:
    """What ``recall log`` and the page say of an annotated record: ``yes (repeats
    deploy/billing.yaml)`` / ``no (…)`` / ``not known yet (…)``."""
    word = {True: "yes", False: "no"}.get(rec.get("used"), "not known yet")
    return f"{word} ({rec.get('used_why')})" if rec.get("used_why") else word


def final(rec: dict, cache: dict) -> bool:
    """Whether an annotated record's verdict can no longer change: a yes (the reply only grows),
    or a no once a later prompt came (the reply is complete). Not known yet never is."""
    if rec.get("used") is True:
        return True
    if rec.get("used") is not False or not isinstance(rec.get("t"), (int, float)):
        return False
    try:
        turn = turn_at(turns_for(rec, cache), float(rec["t"]))
    except Exception:  # noqa: BLE001 - unreadable: not final
        return False
    return turn is not None and turn.answered


def conversation(rec: dict) -> tuple[str, str]:
    """The key of a record's conversation in the cache of ``turns_for``: (project cwd, session)."""
    return (str(rec.get("project") or ""), str(rec.get("session") or ""))


def turns_for(rec: dict, cache: dict) -> list[Turn]:
    key = conversation(rec)
    if key not in cache:
        cache[key] = read_turns(*key)
    return cache[key]


def verdict(rec: dict, cache: dict) -> tuple[bool | None, str]:
    t = rec.get("t")
    if not isinstance(t, (int, float)):
        return None, "the record has no time"
    turn = turn_at(turns_for(rec, cache), float(t))
    if turn is None:
        return None, "its prompt is not in the archive (yet)"
    reply = "\n".join(turn.reply)
    if not reply.strip():
        return (False, "no reply") if turn.answered else (None, "no reply indexed yet")
    sessions = [
        s
        for s in (rec.get("injected") or [h.get("session") for h in rec.get("hits") or [] if isinstance(h, dict)])
        if isinstance(s, str)
    ]
    return judge(str(rec.get("text") or ""), turn.prompt, reply, sessions)
