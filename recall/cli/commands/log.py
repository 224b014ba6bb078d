"""``recall log``: what the prompt hook did with the last prompts (``recall.prompt.injections``)."""

from __future__ import annotations

import json
import os
import time
from typing import Optional

import typer

from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


def _when(t) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError, OverflowError):
        return "?"


def _outcome(rec: dict) -> str:
    outcome = str(rec.get("outcome") or "?")
    if outcome == "synthesized":
        return f"synthesized ({rec.get('backend') or '?'})"
    why = rec.get("why")
    return f"{outcome} ({why})" if why else outcome


def _hits(rec: dict) -> str:
    hits = rec.get("hits") if isinstance(rec.get("hits"), list) else []
    return ", ".join(_hit(h) for h in hits[:4] if isinstance(h, dict)) + (f" +{len(hits) - 4}" if len(hits) > 4 else "")


def _hit(h: dict) -> str:
    """``3c4e0949 confidence 0.42`` (the score alone in records from before the confidence)."""
    c = h.get("confidence")
    if isinstance(c, (int, float)):
        return f"{str(h.get('session', ''))[:8]} confidence {c:.2f}"
    return f"{str(h.get('session', ''))[:8]} score {float(h.get('score') or 0):.1f}"


@commands.command("log", help="What the prompt hook injected for the last prompts (newest first).")
def log_cmd(
    limit: int = typer.Option(20, "--limit", "-n", help="How many prompts to list."),
    show: Optional[int] = typer.Option(None, "--show", help="Print the exact text injected for prompt N "
                                                           "(1 = the newest, as numbered by `recall log`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the records as JSON (newest first)."),
) -> None:
    from recall.prompt import injections

    if limit < 1:
        raise UsageError(f"--limit takes a number of prompts >= 1, not {limit}.")
    records = injections.read()[::-1]  # newest first
    if show is not None:
        if not records:
            raise UsageError("The injection log is empty: it fills as you send prompts in Claude Code.")
        if not 1 <= show <= len(records):
            raise UsageError(f"No prompt #{show} in the log (it holds {len(records)}): `recall log` numbers them, "
                             "1 being the newest.")
        rec = records[show - 1]
        if as_json:
            typer.echo(json.dumps({"n": show, **rec}, ensure_ascii=False))
            return
        if not rec.get("text"):
            typer.echo(f"Nothing was injected for prompt #{show} ({_outcome(rec)}).")
            return
        typer.echo(rec["text"])
        return
    shown = records[:limit]
    if as_json:
        typer.echo(json.dumps([{"n": i, **rec} for i, rec in enumerate(shown, 1)], ensure_ascii=False))
        return
    if not shown:
        typer.echo("No prompts logged yet: the hook records each prompt here once it runs in Claude Code.")
        return
    for i, rec in enumerate(shown, 1):
        project = os.path.basename(str(rec.get("project") or "").rstrip("/")) or "?"
        size = f"{rec.get('chars', 0)} chars ~{rec.get('tokens', 0)} tokens" if rec.get("chars") else "nothing injected"
        via = f" via {rec['via']}" if rec.get("via") else ""
        typer.echo(f"#{i:<3} {_when(rec.get('t'))}  {project}  {_outcome(rec)}{via}  {size}  "
                   f"{float(rec.get('latency_ms') or 0):.0f} ms")
        if rec.get("hits"):
            typer.echo(f"     hits: {_hits(rec)}")
    typer.echo("`recall log --show N` prints the exact text injected for prompt N.")
