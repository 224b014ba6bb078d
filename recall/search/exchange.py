"""A hit is an exchange: the reply a recalled question got, the question a recalled reply
answered.

Users ask recall *why*, *how* and *what did we decide*; what they want is almost always in
the reply to an old question like theirs, and a question rarely repeats the words of its
answer. So a hit on a user prompt carries ``reply``: the assistant's text that followed in
the same session, with the tool calls between as one short line each, bounded in length;
a hit on an assistant message carries ``question``: the prompt it answered, one line.

Both are read from the session's archive file next to the hit's own line (one ``pread``
each, ``indexer.archive_files``): messages are archived in the order they were written,
so what followed a prompt is the lines after it, up to the next prompt. Lines of another
transcript of the same session (a subagent's) are skipped.

A question whose reply adds nothing ("OK.", "Sure.", "Got it": a bare acknowledgement, no tool
call), and that reply itself, are no answer: ``flags["echo"]`` (and ``flags["hollow"]``) is set
for them as for a reply that restated recall's own output, so the session that holds the answer
ranks above the earlier asking (``recall.search.confidence.ECHO_FACTOR``) and the hook never
injects them. A statement that got "OK." ("the deploy key lives in vault at secret/deploy") is
what the user said: it keeps its standing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from indexer.archive_files import last_line_before, lines_after, parse_record, record_at
from recall.core.lazy_re import lazy
from recall.core.text import clip

REPLY_CHARS = 700  # of the assistant's text in a reply (the last, concluding text first)
TOOL_LINES = 5  # tool calls shown in a reply, one line each ...
TOOL_LINE_CHARS = 100  # ... of at most this many characters
QUESTION_CHARS = 200
MIN_PIECE = 60  # an earlier text with less room than this is left out ("…")
MAX_ITEMS = 60  # texts and tool calls read into one reply at most


# the words of a bare acknowledgement: a reply made only of these says nothing
# ("yes" and "no" are left out: to "should we keep redis?" they are an answer)
ACK_WORDS = frozenset(
    """ok okay k kk okey sure alright right noted understood done got it will do thanks thank
    you great perfect cool fine roger sounds good np of course certainly absolutely acknowledged gotcha 👍 ✅""".split()
)
MAX_ACK_WORDS = 6
ACK_CHARS = 120  # a longer text is never a bare acknowledgement (not even scanned)
ACK_LINE_BYTES = 2048  # an archived line holding one (paths and ids included) is shorter than this
_WORD = re.compile(r"[^\W_]+|[\U0001F300-\U0001FAFF\u2705\u2714]", re.UNICODE)


def adds_nothing(text: str) -> bool:
    """Whether a reply's text is a bare acknowledgement ("OK.", "Sure!", "Got it, thanks.")."""
    if len(text) > ACK_CHARS:
        return False
    words = _WORD.findall(text.lower())
    return 0 < len(words) <= MAX_ACK_WORDS and all(w in ACK_WORDS for w in words)


_ASKS = re.compile(
    r"^\W*(?:what|why|how|which|where|when|who|whose|did|do|does|is|are|was|were|can|could|"
    r"should|would|will|shall|have|has|remind me|tell me|explain)\b",
    re.I,
)


def is_question(text: str) -> bool:
    """Whether a prompt asks something (a question mark, or it opens as a question)."""
    return "?" in text or bool(_ASKS.match(text))


def _role(raw: bytes) -> bytes:
    """A raw archive line's role, read without parsing the line (``"role":"x"`` cannot occur
    inside a JSON string, where its quotes are escaped)."""
    i = raw.find(b'"role":"')
    if i < 0:
        return b""
    j = raw.find(b'"', i + 8)
    return raw[i + 8 : j] if j > 0 else b""


def _source_ok(rec: dict, source: str) -> bool:
    return not source or str(rec.get("source") or "") == source


@lru_cache(maxsize=256)
def _source_tag(source: str) -> bytes:
    """How ``"source": source`` is written in an archive line (orjson, no spaces)."""
    import json

    return b'"source":' + json.dumps(source, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _records(lines, source: str, roles: tuple[bytes, ...], unread=None):
    """``(role, record)`` of the archive ``lines`` (raw JSON, or already parsed records) of
    ``source``, in order. A raw line is parsed only when its role is one of ``roles`` and it
    carries ``source``'s tag (a subagent's transcript is archived in the same session file);
    one whose role ``unread(role)`` refuses at that moment gives ``(role, None)``."""
    tag = _source_tag(source) if source else b""
    for raw in lines:
        if isinstance(raw, dict):
            if _source_ok(raw, source):
                yield str(raw.get("role") or "").encode(), raw
            continue
        role = _role(raw)
        if role not in roles or (tag and tag not in raw):
            continue
        if unread is not None and unread(role):
            yield role, None
            continue
        rec = parse_record(raw)
        if rec is not None:
            yield role, rec


def reply_from(lines, source: str = "", flags: dict | None = None) -> str | None:
    """The reply made of the archive ``lines`` (raw JSON, or already parsed records) that
    followed a prompt, in order; None when the assistant said nothing and called no tool
    before the next prompt. Tool results are skipped unread, and tool calls past the first
    TOOL_LINES are only counted. ``flags["echo"]`` is set when the reply restated what
    recall injected into that prompt (its records are marked ``echo`` at ingest), and
    ``flags["ack"]`` when it adds nothing (``adds_nothing``: no tool call, an acknowledgement)."""
    items: list[tuple[str, str]] = []  # ("text" | "tool", text), in order
    tools = 0

    def unread(role: bytes) -> bool:
        return role == b"tool_use" and tools >= TOOL_LINES

    # a tool result is never part of the reply (and has the longest lines): never parsed
    for role, rec in _records(lines, source, (b"assistant", b"tool_use", b"user", b"summary"), unread):
        if rec is None:
            tools += 1  # counted, not read
            continue
        if role in (b"user", b"summary"):
            break  # a new prompt, or a compaction: the reply is over
        text = str(rec.get("text") or "").strip()
        if not text:
            continue
        if flags is not None and rec.get("echo"):
            flags["echo"] = True
        if role == b"assistant":
            items.append(("text", text))
        elif role == b"tool_use":
            for line in text.splitlines():
                if line.strip():
                    tools += 1
                    if tools <= TOOL_LINES:
                        items.append(("tool", clip(line, TOOL_LINE_CHARS)))
        if len(items) >= MAX_ITEMS:
            break
    if not items:
        return None
    if (
        flags is not None
        and all(kind == "text" for kind, _ in items)
        and adds_nothing(" ".join(text for _, text in items))
    ):
        flags["ack"] = True  # "OK.": whatever the prompt was, it got no answer here
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
    lines_out = []
    for i, (kind, text) in enumerate(items):
        line = kept.get(i, text) if kind == "text" else text
        if not (line == "…" and lines_out and lines_out[-1] == "…"):
            lines_out.append(line)
    if tools > TOOL_LINES:
        lines_out.append(f"(+{tools - TOOL_LINES} more tool calls)")
    return "\n".join(lines_out)


def question_from(lines, source: str = "") -> str | None:
    """The prompt among the archive ``lines`` (raw JSON, or parsed records) before a
    message, nearest first, one line. Only prompt (and summary) lines are parsed."""
    for role, rec in _records(lines, source, (b"user", b"summary")):
        if role == b"user":
            return clip(str(rec.get("text") or ""), QUESTION_CHARS) or None
        if role == b"summary":
            return None  # compacted: what came before is another stretch of the session
    return None


_PROMPT_LINE = b'"role":"user"'  # (a compaction summary between is rare: not looked for)


def exchange(
    root: Path,
    project: str,
    session_id: str,
    pos: int,
    role: str,
    source: str = "",
    fd: int | None = None,
    flags: dict | None = None,
) -> tuple[str | None, str | None]:
    """``(reply, question)`` for the message at ``pos`` in its session's archive file
    (through ``fd`` when the caller has it open): the reply when it is a user prompt, the
    question when it is the assistant's text (a tool call or result shows its own text).
    ``flags`` (a dict) gets ``echo`` when a prompt's reply restated recall's own output, and
    ``echo`` and ``hollow`` for a question whose reply added nothing and for such a reply."""
    if role == "user":
        mine: dict = {}
        reply = reply_from(lines_after(root, project, session_id, pos, fd=fd), source, mine)
        if flags is not None:
            flags.update(mine)
            if mine.get("ack"):
                rec = record_at(root, project, session_id, pos, fd=fd)
                if rec is not None and is_question(str(rec.get("text") or "")):
                    flags["echo"] = flags["hollow"] = True  # asked, and got only "OK.": no answer here
        return reply, None
    if role == "assistant":
        if flags is not None:
            # a bare acknowledgement's line is short: a longer one is not read past one pread
            rec = record_at(root, project, session_id, pos, fd=fd, max_bytes=ACK_LINE_BYTES)
            if rec is not None and adds_nothing(str(rec.get("text") or "")):
                flags["echo"] = flags["hollow"] = True  # "OK." answers nothing
        return None, question_from(last_line_before(root, project, session_id, pos, _PROMPT_LINE, fd=fd), source)
    return None, None


def turn(
    root: Path, project: str, session_id: str, pos: int, role: str, source: str = "", fd: int | None = None
) -> tuple[str | None, str | None]:
    """``(asked, concluded)`` around the message at ``pos``: the prompt of its turn and what the
    assistant said after it in that turn, its concluding text first (``reply_from``'s bounds).
    What the model path reads with each excerpt, so that a line such as "Let me write the money
    helper." or ``Write: src/money.py`` comes with the question it served and the decision the
    turn ended on. A user prompt's own turn: ``(None, its reply)``."""
    if role == "user":
        return None, reply_from(lines_after(root, project, session_id, pos, fd=fd), source)
    asked = question_from(last_line_before(root, project, session_id, pos, _PROMPT_LINE, fd=fd), source)
    concluded = reply_from(lines_after(root, project, session_id, pos, fd=fd), source)
    return asked, concluded


#: tool output that says only that a tool did its job: no content of its own
_BOILERPLATE = lazy(
    r"^\s*(?:File created successfully at\b|The file \S.*? has been (?:updated|created)\b|"
    r".{0,300}\bhas been (?:updated|created|written) successfully\b|Successfully (?:wrote|created|updated|edited)\b|"
    r"Applied \d+ edits?\b|Wrote \d+ lines? to\b|\(no output\)\s*$|\(Bash completed with no output\))",
    re.I | re.S,
)
_BARE_TOOL = re.compile(r"^\s*[A-Za-z_][\w.-]{0,40}: \S{1,300}\s*$")


def content_free(role: str, text: str) -> bool:
    """A line that holds nothing but a tool's bookkeeping: a tool result such as "File created
    successfully at: …" or "… has been updated successfully", or a bare tool call such as
    ``Write: src/money.py``. It matches a prompt only on a common word or a path, and is never
    read as an answer on its own (the model path reads its turn instead: ``turn``)."""
    if role == "tool_result":
        return bool(_BOILERPLATE.match(text[:400]))
    if role == "tool_use":
        return bool(_BARE_TOOL.match(text[:400])) and "\n" not in text.strip()
    return False
