"""``recall stats``: how the prompt hook did, week by week, on this machine (issue 34).

Per week (Monday to Sunday, local time), from the injection log and the archive:

* ``prompts``: the prompts the hook ran on (trivial ones included);
* ``injections``: prompts that got past sessions injected (``raw`` or ``synthesized``);
* ``used_share``: of the injections whose reply is known, the share the reply used
  (``recall.prompt.used``); ``used`` and ``unknown`` count them;
* ``silent_share``: the share of the prompts that were not ``trivial`` (``ok thanks``: the hook
  does not search for them) that got nothing from the history;
* ``misses``: prompts that ``repeated`` a question an earlier session answered while the hook
  stayed silent, or that ``told`` recall it forgot ("I already told you", "as we discussed").

A prompt's words come from the archive (the log never stores them); a prompt not indexed yet
counts in ``prompts`` but cannot be a miss.
"""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta

from recall.prompt.used import annotate, conversation, injected, turn_at, turns_for

# what a user types when the assistant forgot what they said before
TOLD = re.compile(
    r"\b(?:i(?:'ve| have)? (?:already |just )?(?:told|said|mentioned|explained|showed) (?:you|this|that|it)"
    r"|as (?:we|i|you) (?:already )?(?:discussed|said|mentioned|agreed|decided|talked about|established)"
    r"|(?:like|as) i (?:already )?(?:said|told you|mentioned)"
    r"|we(?:'ve| have)? (?:already )?(?:discussed|talked about|been over|been through|went over|covered|decided) "
    r"(?:this|that|it)"
    r"|(?:did|do)(?:n't| not)? you (?:not )?remember|you forgot|you(?:'ve| have)? forgotten"
    r"|(?:remember|recall) (?:what|when) (?:we|i) (?:said|decided|discussed|talked))\b",
    re.I,
)
REPEAT_OVERLAP = 0.6  # share of the two questions' informative words they have in common
MIN_SHARED = 2


def week_of(t: float) -> date:
    """The Monday (local time) of the week ``t`` falls in."""
    d = datetime.fromtimestamp(t).date()
    return d - timedelta(days=d.weekday())


def told(prompt: str) -> bool:
    """Whether a prompt says recall forgot what it was told ("I already told you", "as we discussed")."""
    return bool(TOLD.search(prompt))


def _terms(text: str) -> set[str]:
    from recall.search.words import FRAMING, PROMPT_STOPWORDS

    stops = set(PROMPT_STOPWORDS) | set(FRAMING)
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) > 2 and w not in stops}


def repeats(prompt: str, earlier: str) -> bool:
    """Whether ``prompt`` asks ``earlier``'s question again (near-verbatim: most informative words shared)."""
    a, b = _terms(prompt), _terms(earlier)
    shared = a & b
    return len(shared) >= MIN_SHARED and len(shared) >= REPEAT_OVERLAP * len(a | b)


def answered_before(searcher, prompt: str, rec: dict, ts: float) -> str | None:
    """The session, before ``ts`` and not the prompt's own, where the same question was asked
    and got an answer (a reply that is not an echo nor an "OK."), or None."""
    from indexer.project import canonical_project
    from recall.search.exchange import is_question

    if not is_question(prompt):
        return None
    project = canonical_project(str(rec.get("project") or "")) or None
    try:
        hits = searcher.search(
            prompt,
            messages=True,
            limit=10,
            project=project,
            until=ts - 1,
            exclude_session=str(rec.get("session") or "") or None,
            roles=("user",),
        )
    except Exception:  # noqa: BLE001 - a query the engine refuses is no miss
        return None
    for h in hits:
        if h.role == "user" and not h.echo and h.reply and repeats(prompt, h.text):
            return h.session_id
    return None


def weekly(records: list[dict], weeks: int = 8, now: float | None = None, searcher=None) -> list[dict]:
    """The last ``weeks`` weeks (this one included) that have prompts, newest first."""
    now = time.time() if now is None else now
    first = week_of(now) - timedelta(weeks=max(1, weeks) - 1)
    rows: dict[date, dict] = {}
    cache: dict = {}
    mine = [r for r in records if isinstance(r.get("t"), (int, float)) and week_of(r["t"]) >= first]
    last = {conversation(rec): i for i, rec in enumerate(mine)}
    for i, rec in enumerate(mine):
        annotate([rec], cache)
        w = week_of(rec["t"])
        row = rows.setdefault(
            w,
            {
                "week": w.isoformat(),
                "prompts": 0,
                "trivial": 0,
                "injections": 0,
                "used": 0,
                "unknown": 0,
                "silent": 0,
                "misses": 0,
                "repeated": 0,
                "told": 0,
                "miss_examples": [],
            },
        )
        row["prompts"] += 1
        if injected(rec):
            row["injections"] += 1
            row["used"] += rec.get("used") is True
            row["unknown"] += rec.get("used") is None
        elif rec.get("outcome") == "trivial":
            row["trivial"] += 1
        else:
            row["silent"] += 1
        _misses(rec, row, cache, searcher)
        if last[conversation(rec)] == i:  # its conversation's last record: its turns are not held any longer
            cache.pop(conversation(rec), None)
    out = []
    for w in sorted(rows, reverse=True):
        row = rows[w]
        known = row["injections"] - row["unknown"]
        row["used_share"] = round(row["used"] / known, 3) if known else None
        searched = row["prompts"] - row["trivial"]
        row["silent_share"] = round(row["silent"] / searched, 3) if searched else None
        out.append(row)
    return out


def _misses(rec: dict, row: dict, cache: dict, searcher) -> None:
    if rec.get("outcome") == "trivial":
        return
    try:
        turn = turn_at(turns_for(rec, cache), float(rec["t"]))
    except Exception:  # noqa: BLE001 - an unreadable archive: not known, not a miss
        return
    if turn is None:
        return
    why = None
    said = TOLD.search(turn.prompt)
    if said:
        row["told"] += 1
        why = f'said it was told before ("{said.group(0)}")'
    elif not injected(rec) and searcher is not None:
        earlier = answered_before(searcher, turn.prompt, rec, turn.ts)
        if earlier:
            row["repeated"] += 1
            why = f"asked again; session {earlier[:8]} answered it"
    if why:
        row["misses"] += 1
        if len(row["miss_examples"]) < 5:
            row["miss_examples"].append({"t": rec["t"], "session": rec.get("session", ""), "why": why})
