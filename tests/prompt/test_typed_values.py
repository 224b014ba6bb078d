"""Issue 45 item 3: the hook's values typed. ``HookSettings`` and ``MemorySettings``
(``recall/core/settings.py``) are the one home of every default, built once from the config; the
hook reads attributes, never the config's dict; one ``Outcome`` and one ``InjectionRecord`` that the
log's writer and every reader share."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from recall.core import config
from recall.core.settings import HOOK_DEFAULTS, HookSettings, MemorySettings
from recall.prompt import context as rc
from recall.prompt import injections
from recall.prompt.injections import InjectionRecord, Outcome

ROOT = Path(__file__).resolve().parents[2]


def test_every_default_has_one_home():
    assert config.DEFAULTS["hook"] == HookSettings.defaults()
    assert HookSettings().as_dict() == {**HookSettings.defaults(), "model": None}  # hook.model: unset
    assert config.DEFAULTS["memory"] == MemorySettings.defaults()
    from recall.search import confidence, semantic

    hook = HookSettings()
    assert confidence.DEFAULT_MIN_CONFIDENCE == hook.min_confidence == 0.6
    assert confidence.DEFAULT_MODEL_MIN_CONFIDENCE == hook.model_min_confidence
    assert semantic.DEFAULT_MIN_SIMILARITY == hook.semantic_min_similarity
    assert semantic.DEFAULT_SESSIONS == hook.semantic_sessions


def test_no_reader_has_a_default_or_the_dict_of_its_own():
    """Outside recall/core (the settings and the config file), no module reads the config's hook or
    memory section, nor a hook setting by name with a literal fallback (``hook.get("limit", 8)``)."""
    section = re.compile(r"""(?:\bcfg|config\.load\(\)|\))(?:\.get\(|\[)["'](?:hook|memory)["'][\])]""")
    by_name = re.compile(r"""\bhook\.get\(["'](?:%s)["']""" % "|".join(k for k, _ in HOOK_DEFAULTS))
    found = []
    for path in sorted((ROOT / "recall").rglob("*.py")) + sorted((ROOT / "indexer").rglob("*.py")):
        if path.parent.name == "core":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if section.search(line) or by_name.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_settings_check_every_value_once():
    hook = HookSettings.from_config(
        {"hook": {"min_confidence": 0.8, "limit": "ten", "max_chars": 50, "skip": ["ship it"], "model": " "}}
    )
    assert hook.min_confidence == 0.8 and hook.limit == 8 and hook.max_chars == 300
    assert hook.skip == ("ship it",) and hook.model is None
    assert hook["min_confidence"] == 0.8  # read by its setting's name too
    assert HookSettings.from_config({"hook": "not a section"}) == HookSettings()
    mem = MemorySettings.from_config(
        {"memory": {"enabled": "off", "daily_call_cap": None, "claude_md": "no", "idle_seconds": -1}}
    )
    assert (mem.enabled, mem.daily_call_cap, mem.claude_md, mem.idle_seconds) == (False, None, "none", 60.0)
    assert MemorySettings.from_config({}).timeout_seconds == 60.0


def test_why_nothing_names_the_gate_the_settings_hold():
    """The gate named is the one in force, never a literal (it was 0.6 whatever the setting)."""
    hook = HookSettings(min_confidence=0.75, model_min_confidence=0.3)
    assert rc.nothing_why(0.5, hook) == "no hit confident enough: the best was 0.50, under hook.min_confidence 0.75"
    assert rc.nothing_why(0.1, hook, "model").endswith("under hook.model_min_confidence 0.30")


def test_the_log_line_is_one_record_the_readers_share():
    out = {"hookSpecificOutput": {"additionalContext": "<recalled-context>x</recalled-context>"}}
    trace = {"outcome": Outcome.RAW, "why": "no backend", "hits": [{"session": "s1", "score": 2.0}], "way": "raw"}
    rec = injections.record({"cwd": "/p", "session_id": "c1"}, trace, out, time.time())
    assert isinstance(rec, InjectionRecord) and list(rec.as_dict()) == list(injections.FIELDS[:19])
    line = json.loads(json.dumps(rec.as_dict()))
    assert line["outcome"] == "raw" and line["injected"] == ["s1"]
    again = InjectionRecord.of(line)
    assert again.as_dict() == rec.as_dict() and again.outcome is Outcome.RAW and again.injected_content
    # another version's damaged line: every field of the writer's type
    bad = InjectionRecord.of({"t": "x", "outcome": 5, "hits": "no", "tokens": 2.0, "gate": [], "held_ms": True})
    assert (bad.t, bad.outcome, bad.hits, bad.tokens, bad.gate, bad.held_ms) == (0.0, "", [], 2, {}, None)


def test_every_outcome_the_hook_writes_is_counted():
    """``recall status`` counts each logged outcome: a rules-only prompt is no longer in the total
    and in no category."""
    assert set(injections.OUTCOMES) == {o.value for o in Outcome} - {"refused"}
    now = time.time()
    records = [{"t": now, "outcome": o.value, "tokens": 3} for o in Outcome if o is not Outcome.REFUSED]
    day = injections.day_summary(now, records)
    assert day["prompts"] == sum(day["outcomes"].values()) == len(records) and day["outcomes"]["rules"] == 1


def test_the_readers_read_only_what_the_writer_writes():
    """Every field the page, `recall log`, `recall stats` and "was it used" read of a log record is
    one the record has (or a verdict a reader adds): none looks for a field nothing writes."""
    added = {"used", "used_why", "asked", "asked_hidden", "_at"}  # the readers' own verdicts, the page's offset
    from recall.ui import views

    assert set(views.SLIM) <= set(injections.FIELDS) | added
    readers = {
        "recall/ui/views.py": r"\b(?:rec|slim)\.get\(\"(\w+)\"",
        "recall/cli/everyday.py": r"\brec\.get\(\"(\w+)\"",
        "recall/prompt/used.py": r"\brec\.get\(\"(\w+)\"",
        "recall/prompt/stats.py": r"\brec\.get\(\"(\w+)\"",
    }
    unknown = {}
    for path, pattern in readers.items():
        text = (ROOT / path).read_text(encoding="utf-8")
        # the transcript readers read archive lines too (role, echo, timestamp; the page an agent)
        names = set(re.findall(pattern, text)) - {"role", "echo", "timestamp", "agent"}
        if names - set(injections.FIELDS) - added:
            unknown[path] = sorted(names - set(injections.FIELDS) - added)
    assert not unknown, unknown
