"""A hit is an exchange: the reply a recalled question got, the question a recalled reply
answered.

Users ask recall *why*, *how* and *what did we decide*; what they want is almost always in
the reply to an old question like theirs, and a question rarely repeats the words of its
answer. So a hit on a user prompt carries ``reply``: the assistant's text that followed in
the same session, with the tool calls between as one short line each, bounded in length;
a hit on an assistant message (or a tool call or result) carries ``question``: the prompt
it answered, one line.

Both are read from the session's archive file next to the hit's own line (one ``pread``
each, ``indexer.archive_files``): messages are archived in the order they were written,
so what followed a prompt is the lines after it, up to the next prompt. Lines of another
transcript of the same session (a subagent's) are skipped.
"""

from __future__ import annotations

from pathlib import Path

from indexer.archive_files import read_after, read_before

REPLY_CHARS = 700        # of the assistant's text in a reply (the last, concluding text first)
TOOL_LINES = 5           # tool calls shown in a reply, one line each ...
TOOL_LINE_CHARS = 100    # ... of at most this many characters
QUESTION_CHARS = 200
MIN_PIECE = 60           # an earlier text with less room than this is left out ("…")
_ENDS_TURN = ("user", "summary")  # a new prompt, or a compaction: the reply is over


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters at a word boundary."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:max(0, limit - 1)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"


def reply_from(records, source: str = "") -> str | None:
    """The reply made of the ``records`` that followed a prompt (in order), or None when
    the assistant said nothing and called no tool before the next prompt."""
    items: list[tuple[str, str]] = []  # ("text" | "tool", text), in order
    tools = 0
    for rec in records:
        if source and str(rec.get("source") or "") != source:
            continue  # a subagent's transcript, archived in the same session file
        role = rec.get("role")
        if role in _ENDS_TURN:
            break
        text = str(rec.get("text") or "").strip()
        if not text:
            continue
        if role == "assistant":
            items.append(("text", text))
        elif role == "tool_use":
            for line in text.splitlines():
                if line.strip():
                    tools += 1
                    if tools <= TOOL_LINES:
                        items.append(("tool", clip(line, TOOL_LINE_CHARS)))
    if not items:
        return None
    # the assistant's texts within REPLY_CHARS, the last (the conclusion) served first
    room = REPLY_CHARS
    kept: dict[int, str] = {}
    for i in reversed([i for i, (kind, _) in enumerate(items) if kind == "text"]):
        if room < MIN_PIECE and kept:
            kept[i] = "…"
            continue
        piece = clip(items[i][1], room)
        kept[i] = piece
        room -= len(piece)
    lines = []
    for i, (kind, text) in enumerate(items):
        line = kept.get(i, text) if kind == "text" else text
        if not (line == "…" and lines and lines[-1] == "…"):
            lines.append(line)
    if tools > TOOL_LINES:
        lines.append(f"(+{tools - TOOL_LINES} more tool calls)")
    return "\n".join(lines)


def question_from(records, source: str = "") -> str | None:
    """The prompt among the ``records`` before a message (nearest first), one line."""
    for rec in records:
        if source and str(rec.get("source") or "") != source:
            continue
        role = rec.get("role")
        if role == "user":
            text = clip(str(rec.get("text") or ""), QUESTION_CHARS)
            return text or None
        if role == "summary":
            return None
    return None


def exchange(root: Path, project: str, session_id: str, pos: int, role: str,
             source: str = "") -> tuple[str | None, str | None]:
    """``(reply, question)`` for the message at ``pos`` in its session's archive file: the
    reply when it is a user prompt, the question when it is anything the assistant did."""
    if role == "user":
        return reply_from(read_after(root, project, session_id, pos), source), None
    if role in ("assistant", "tool_use", "tool_result"):
        return None, question_from(read_before(root, project, session_id, pos), source)
    return None, None
