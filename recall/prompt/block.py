"""The ``<recalled-context>`` block the hook injects: citations, raw snippets or a synthesis,
cut to ``hook.max_chars``, and the hook's output dict around it."""

from __future__ import annotations

import os
import re

from recall.prompt.candidates import informative_terms, query_text

TAG_OPEN = "<recalled-context>"
TAG_CLOSE = "</recalled-context>"
HEADER = ("Recalled by recall from past Claude Code sessions{scope} "
          "(may be outdated: verify before relying on it).")
EVENT = "UserPromptSubmit"
MAX_SNIPPET = 600          # characters of one raw snippet
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_TAGS = re.compile(r"</?\s*recalled-context\b[^>]*>", re.I)


def citation(hit) -> str:
    """``[2026-11-20 session 3c4e0949]`` (``memory`` for a stored memory)."""
    date = (hit.timestamp or "")[:10] or "undated"
    if getattr(hit, "kind", "message") == "memory":
        return f"[{date} memory]"
    return f"[{date} session {hit.session_id[:8]}]"


def clean(text: str) -> str:
    """Text safe to put inside the block: no nested recalled-context tags."""
    return _TAGS.sub("", text)


def _header(scope_all: bool) -> str:
    return HEADER.format(scope="" if scope_all else " of this project")


def _wrap(lines: list[str], max_chars: int, header: str) -> str:
    """The block, cut at a line boundary (or mid-line with …) to fit ``max_chars``."""
    head = f"{TAG_OPEN}\n{header}\n"
    tail = f"\n{TAG_CLOSE}"
    room = max_chars - len(head) - len(tail)
    body: list[str] = []
    used = 0
    for line in lines:
        extra = len(line) + (1 if body else 0)
        if used + extra <= room:
            body.append(line)
            used += extra
            continue
        left = room - used - (1 if body else 0)
        if left > 80:
            body.append(line[:left - 1].rstrip() + "…")
        break
    return head + "\n".join(body) + tail


def format_raw(hits: list, prompt: str = "", max_chars: int = 3000, scope_all: bool = False) -> str:
    """Compact, cited raw snippets (the fallback when there is no synthesis)."""
    from recall.search.snippets import highlighter, snippet

    if not hits:
        return ""
    terms = informative_terms(query_text(prompt))[:32] if prompt else []
    pattern = highlighter(terms) if terms else None
    per = max(120, min(MAX_SNIPPET, (max_chars - 250) // max(1, len(hits)) - 40))
    lines = []
    for h in hits:
        snip = snippet(h.text, pattern, width=per)
        snip = clean(_BOLD.sub(r"\1", snip or " ".join(h.text.split())[:per]))
        where = ""
        if scope_all and h.project:
            where = f" {os.path.basename(h.project.rstrip('/')) or h.project}"
        lines.append(f"- {citation(h)}{where} {h.role}: {snip}")
    return _wrap(lines, max_chars, _header(scope_all))


def format_synthesis(body: str, max_chars: int = 3000, scope_all: bool = False) -> str:
    lines = [ln.rstrip() for ln in clean(body).strip().splitlines()]
    return _wrap([ln for ln in lines if ln.strip() or ln == ""], max_chars, _header(scope_all))


def hook_output(context: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}}
