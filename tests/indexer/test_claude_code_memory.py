"""Next to Claude Code's own memory (issue 44 item 9): auto memory is indexed where Claude Code
keeps it (``autoMemoryDirectory`` in the user's, the project's and the local settings, the
strongest first) and only while ``autoMemoryEnabled`` is not false; the prompt hook never
injects what Claude Code already put in front of the model at session start (the head of
MEMORY.md, the CLAUDE.md files it loads), nor auto memory in a session that switched it off
(``CLAUDE_CODE_DISABLE_AUTO_MEMORY=1``); the memory-recall attachments Claude Code 2.1.332
writes into a transcript are indexed as Claude Code's memory, never as the user's words."""

from __future__ import annotations

import json
import time

import pytest

from indexer import native_memory as nm
from indexer.ingest import index_all
from recall.cli.app import run
from recall.core import config
from recall.prompt import context as rc
from tests.support.factory import Session, encode_cwd

HEAD_NOTE = "Deploys of the shop go through make ship quillharbor, never kubectl apply by hand."
DEEP_NOTE = "The invoice exporter needs the quillharbor ledger token rotated every month."
TOPIC_NOTE = "Refunds over 500 euros need a second quillharbor approval from finance."
RULE = "Every quillharbor migration is reviewed by the database team before merging."


@pytest.fixture
def shop(tmp_path, claude_projects):
    p = tmp_path / "work" / "shop"
    p.mkdir(parents=True)
    s = Session(cwd=str(p))
    s.user("set up the release pipeline for the shop")
    s.assistant("Done: the pipeline builds and tests on every push.")
    s.write(claude_projects)
    return p


def default_memory(claude_projects, project):
    d = claude_projects / encode_cwd(str(project)) / "memory"
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_settings(path, **values):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def hits(capsys, query, project=None):
    args = ["--json", query] + (["--project", str(project)] if project else [])
    assert run(args) == 0
    return json.loads(capsys.readouterr().out)["hits"]


def injected(project, prompt, **extra) -> str:
    payload = {
        "session_id": "current-session",
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        **extra,
    }
    out = rc.build_context(payload, time.time() + 60)
    return "" if out is None else out["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def raw_hook():
    config.set_value("memory.enabled", False)
    config.set_value("hook.synthesize", False)


# ------------------------------------------------------------------ autoMemoryDirectory / Enabled
def test_auto_memory_directory_is_resolved_local_over_project_over_user(shop, tmp_path, monkeypatch):
    user_dir, project_dir, local_dir = tmp_path / "u-mem", tmp_path / "p-mem", tmp_path / "l-mem"
    user_settings = tmp_path / "claude" / "settings.json"
    assert nm.auto_memory_dir(str(shop)) == nm.default_auto_memory_dir(str(shop))
    write_settings(user_settings, autoMemoryDirectory=str(user_dir))
    assert nm.auto_memory_setting(str(shop)) == (user_dir, "user")
    write_settings(shop / ".claude" / "settings.json", autoMemoryDirectory=str(project_dir))
    assert nm.auto_memory_setting(str(shop)) == (project_dir, "project")
    write_settings(shop / ".claude" / "settings.local.json", autoMemoryDirectory=str(local_dir))
    assert nm.auto_memory_setting(str(shop)) == (local_dir, "local")
    # ~/ is the home folder; a relative path or a root is ignored, as Claude Code ignores it:
    # the strongest scope that sets it still decides, so its default folder is used
    write_settings(shop / ".claude" / "settings.local.json", autoMemoryDirectory="~/cc-notes")
    assert nm.auto_memory_dir(str(shop)) == tmp_path / "home" / "cc-notes"
    for bad in ("notes/here", "/", "~/.."):
        write_settings(shop / ".claude" / "settings.local.json", autoMemoryDirectory=bad)
        assert nm.auto_memory_dir(str(shop)) == nm.default_auto_memory_dir(str(shop))


def test_notes_in_the_configured_directory_are_indexed_and_the_default_folder_is_not(
    shop, tmp_path, claude_projects, capsys
):
    (default_memory(claude_projects, shop) / "MEMORY.md").write_text(f"- {DEEP_NOTE}\n")
    custom = tmp_path / "cc-memory"
    custom.mkdir()
    (custom / "MEMORY.md").write_text(f"# Shop\n\n- {HEAD_NOTE}\n")
    write_settings(shop / ".claude" / "settings.local.json", autoMemoryDirectory=str(custom))
    index_all()
    found = hits(capsys, "quillharbor")
    assert [h["project"] for h in found if "make ship" in h["text"]] == [str(shop)]
    assert not any("ledger token" in h["text"] for h in found)  # Claude Code no longer reads it

    # set in the user's settings, the directory is every project's
    (shop / ".claude" / "settings.local.json").unlink()
    write_settings(tmp_path / "claude" / "settings.json", autoMemoryDirectory=str(custom))
    index_all()
    found = hits(capsys, "quillharbor")
    assert [h["project"] for h in found if "make ship" in h["text"]] == [""]


def test_auto_memory_switched_off_in_the_settings_leaves_the_index(shop, claude_projects, capsys):
    (default_memory(claude_projects, shop) / "MEMORY.md").write_text(f"- {HEAD_NOTE}\n")
    (shop / "CLAUDE.md").write_text(f"- {RULE}\n")
    index_all()
    assert any("make ship" in h["text"] for h in hits(capsys, "quillharbor"))
    write_settings(shop / ".claude" / "settings.json", autoMemoryEnabled=False)
    index_all()
    found = hits(capsys, "quillharbor")
    assert not any("make ship" in h["text"] for h in found)
    assert any("database team" in h["text"] for h in found)  # CLAUDE.md is no auto memory
    write_settings(shop / ".claude" / "settings.local.json", autoMemoryEnabled=True)  # local wins
    index_all()
    assert any("make ship" in h["text"] for h in hits(capsys, "quillharbor"))


# ------------------------------------------------------------------ what Claude Code loaded itself
def test_the_hook_leaves_out_what_claude_code_loads_at_session_start(shop, claude_projects, raw_hook):
    mem = default_memory(claude_projects, shop)
    filler = "\n".join(f"- routine note number {i} about the weather" for i in range(230))
    (mem / "MEMORY.md").write_text(f"# Shop\n\n- {HEAD_NOTE}\n\n{filler}\n\n# Later\n\n- {DEEP_NOTE}\n")
    (mem / "refunds.md").write_text(f"# Refunds\n\n- {TOPIC_NOTE}\n")
    (shop / "CLAUDE.md").write_text(f"# Rules\n\n- {RULE}\n")
    index_all()
    # past line 200 of MEMORY.md: Claude Code did not load it
    assert "ledger token rotated" in injected(shop, "how often is the quillharbor ledger token rotated?")
    # a topic file is read on demand only
    assert "second quillharbor approval" in injected(shop, "which quillharbor approval do refunds need?")
    # the head of MEMORY.md is in the model's context already, and so is the project's CLAUDE.md
    assert "make ship" not in injected(shop, "do quillharbor deploys go through make ship or kubectl?")
    assert "database team" not in injected(shop, "who reviews a quillharbor migration before merging?")
    shown = nm.loaded_at_start(str(shop / "src"))  # from a subfolder: the parents' CLAUDE.md too
    assert any("database team" in t for t in shown)


def test_a_session_with_auto_memory_off_gets_no_auto_memory(shop, claude_projects, raw_hook, monkeypatch):
    (default_memory(claude_projects, shop) / "refunds.md").write_text(f"# Refunds\n\n- {TOPIC_NOTE}\n")
    index_all()
    prompt = "which quillharbor approval do refunds over 500 euros need?"
    assert "second quillharbor approval" in injected(shop, prompt)
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    assert "second quillharbor approval" not in injected(shop, prompt)
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    # the service plans for the hook: the session's switch comes with the request
    assert "second quillharbor approval" not in injected(shop, prompt, _auto_memory_off="1")
    assert "second quillharbor approval" in injected(shop, prompt, _auto_memory_off="")


def test_head_is_the_first_200_lines_within_25_kb():
    text = "".join(f"line {i}\n" for i in range(300))
    assert nm.head(text).splitlines() == [f"line {i}" for i in range(200)]
    big = "".join("x" * 999 + "\n" for _ in range(40))
    assert len(nm.head(big).encode()) <= 25_000 and nm.head(big).endswith("\n")


# ------------------------------------------------------------------ memory recall in a transcript
def recall_attachment(session: Session, path: str, content: str) -> dict:
    entry = session.attachment(
        "relevant_memories",
        memories=[{"path": path, "content": content, "mtimeMs": 1796167541309.13, "header": f"Memory: {path}:"}],
    )
    return entry


def test_a_memory_recall_attachment_is_claude_codes_memory_not_the_users_words(shop, claude_projects, capsys, raw_hook):
    s = Session(cwd=str(shop))
    s.user("how do we ship the shop?")
    recall_attachment(
        s, str(claude_projects / "x" / "memory" / "deploy.md"), f"---\nname: deploy\n---\n\n{HEAD_NOTE}\n"
    )
    s.assistant("We ship with make ship.")
    s.write(claude_projects)
    index_all()
    found = [h for h in hits(capsys, "quillharbor kubectl") if "kubectl apply by hand" in h["text"]]
    assert len(found) == 1 and found[0]["role"] == "claude-memory"
    assert found[0]["text"].startswith("Claude Code recalled from its memory deploy.md:")
    assert not any(h["role"] == "user" and "kubectl" in h["text"] for h in hits(capsys, "quillharbor kubectl"))
    # the hook injects Claude Code's memory from its files, never an old transcript's copy
    assert "kubectl apply by hand" not in injected(shop, "do we deploy quillharbor with kubectl apply by hand?")
