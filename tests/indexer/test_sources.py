"""Other agents' sessions (indexer/sources): Codex CLI and Gemini CLI files, as their real clients
wrote them (tests/fixtures/agents/), read by the same pipeline as Claude Code's: one project
whatever the agent, the agent on every hit, `--agent`, `recall sources`, `recall status`, forget;
a format change skipped and counted, a half-written line left for later, a compressed rollout
read, a symlink never followed."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from indexer import sources
from indexer.sources import codex, gemini
from tests.support.cli import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
CAPTURED_AT = "/tmp/i39/gen/webshop"  # the project folder the fixtures were captured in
CODEX_NAME = "rollout-2026-11-27T13-36-49-01a21d39-11ed-71d0-ba97-0eef9c1fae21.jsonl"
CODEX_SESSION = "01a21d39-11ed-71d0-ba97-0eef9c1fae21"
GEMINI_NAME = "session-2026-11-27T13-36-d2b532a2.jsonl"


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(path),
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        check=True,
    )
    return path.resolve()


def _fixture(name: str, project: Path) -> bytes:
    return (FIXTURES / name).read_bytes().replace(CAPTURED_AT.encode(), str(project).encode())


def place_codex(home: Path, project: Path, data: bytes | None = None, name: str = CODEX_NAME) -> Path:
    folder = home / ".codex" / "sessions" / "2026" / "11" / "27"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(_fixture("codex-0.169.0.jsonl", project) if data is None else data)
    return path


def place_gemini(home: Path, project: Path, slug: str = "webshop") -> Path:
    folder = home / ".gemini" / "tmp" / slug
    (folder / "chats").mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(str(project))
    path = folder / "chats" / GEMINI_NAME
    path.write_bytes(_fixture("gemini-0.61.0.jsonl", project))
    return path


def read_all(mod, path: Path):
    ctx = mod.context(path)
    stats: Counter = Counter()
    msgs = []
    last = 0
    for batch, pos in mod.read(path, 0, ctx, stats):
        msgs.extend(batch)
        last = pos
    return msgs, stats, last


# the parsers ----------------------------------------------------------------------------------------
def test_codex_rollout_of_the_real_client(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    path = place_codex(Path(os.environ["HOME"]), project)
    msgs, stats, last = read_all(codex, path)
    assert last == path.stat().st_size
    assert [m.role for m in msgs] == ["user", "tool_use", "tool_result", "assistant"]
    user, call, result, reply = msgs
    assert user.text == "Which lock should the job queue use? Decide and remember."
    assert call.text == "exec_command: ls" and call.tools == ["exec_command"]
    assert result.tools == ["exec_command"]
    assert "Postgres advisory locks" in reply.text
    assert {m.agent for m in msgs} == {"codex"}
    assert {m.session_id for m in msgs} == {CODEX_SESSION}
    assert {m.project for m in msgs} == {str(project)} and {m.branch for m in msgs} == {"main"}
    assert len({m.uuid for m in msgs}) == 4
    # what Codex adds itself (environment context, its instructions, the UI's event copies) is skipped
    assert stats["system"] >= 2 and stats["event"] >= 3 and stats["session-meta"] == 1
    assert not any("<environment_context>" in m.text for m in msgs)


def test_gemini_session_of_the_real_client(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    path = place_gemini(Path(os.environ["HOME"]), project)
    msgs, stats, _ = read_all(gemini, path)
    assert [m.role for m in msgs] == ["user", "tool_use", "tool_result", "assistant"]
    assert msgs[0].text == "How should the cache layer work? Decide."
    assert msgs[1].tools == ["run_shell_command"]
    assert "Redis streams" in msgs[3].text
    assert {m.agent for m in msgs} == {"gemini"}
    assert {m.project for m in msgs} == {str(project)}
    assert {m.session_id for m in msgs} == {"d2b532a2-80c3-4898-92ba-c297cf951efb"}
    assert stats["system"] == 1  # the client's <session_context> setup message
    assert not any("session_context" in m.text for m in msgs)


def test_gemini_project_from_the_old_hash_folder(tmp_path):
    """Before slugs, the folder was the sha256 of the project root (and so is projectHash)."""
    import hashlib

    project = _git_repo(tmp_path / "webshop")
    home = Path(os.environ["HOME"])
    digest = hashlib.sha256(str(project).encode()).hexdigest()
    path = place_gemini(home, project, slug=digest)
    (path.parent.parent / ".project_root").unlink()
    captured = hashlib.sha256(CAPTURED_AT.encode()).hexdigest().encode()
    assert captured in path.read_bytes()  # the header's projectHash: sha256 of the project root
    data = path.read_bytes().replace(captured, digest.encode())
    path.write_bytes(data)
    msgs, _, _ = read_all(gemini, path)
    assert msgs and {m.project for m in msgs} == {str(project)}


def test_gemini_whole_json_file_of_older_versions(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    home = Path(os.environ["HOME"])
    folder = home / ".gemini" / "tmp" / "webshop"
    (folder / "chats").mkdir(parents=True)
    (folder / ".project_root").write_text(str(project))
    doc = {
        "sessionId": "s-old",
        "projectHash": "x",
        "startTime": "2025-09-01T10:00:00Z",
        "messages": [
            {"id": "1", "timestamp": "2025-09-01T10:00:00Z", "type": "user", "content": "pick a queue"},
            {"id": "2", "timestamp": "2025-09-01T10:00:01Z", "type": "gemini", "content": "We use SQS for the queue."},
            {"id": "3", "type": "info", "content": "saved"},
        ],
    }
    path = folder / "chats" / "session-2025-09-01T10-00-aaaa.json"
    path.write_text(json.dumps(doc))
    msgs, stats, last = read_all(gemini, path)
    assert [m.text for m in msgs] == ["pick a queue", "We use SQS for the queue."]
    assert last == path.stat().st_size and stats["system"] == 1
    path.write_text(json.dumps(doc)[:-20])  # caught half written: nothing, read again later
    msgs, _, last = read_all(gemini, path)
    assert msgs == [] and last == 0


def test_a_format_change_is_skipped_and_counted_never_a_crash(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    lines = [
        {
            "timestamp": "2026-11-27T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": CODEX_SESSION, "cwd": str(project)},
        },
        {"timestamp": "2026-11-27T10:00:01Z", "type": "brand_new_kind", "payload": {"x": 1}},
        {"timestamp": "2026-11-27T10:00:02Z", "type": "response_item", "payload": {"type": "message", "role": "user"}},
        {"timestamp": "2026-11-27T10:00:03Z", "type": "response_item", "payload": {"type": "hologram", "role": "user"}},
        {"timestamp": "2026-11-27T10:00:04Z", "type": "response_item", "payload": "not an object"},
        {
            "timestamp": "2026-11-27T10:00:05Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "keep this one"}],
            },
        },
        {
            "timestamp": "2026-11-27T10:00:06Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": "a string, not a list"},
        },
    ]
    data = (
        b"".join(json.dumps(x).encode() + b"\n" for x in lines) + b'{"timestamp": "2026-11-27T10:00:07Z", "type": "resp'
    )
    path = place_codex(Path(os.environ["HOME"]), project, data)
    msgs, stats, last = read_all(codex, path)
    assert [m.text for m in msgs] == ["keep this one"]
    assert stats["unknown-type"] == 2 and stats["empty"] >= 2  # a new line type; a field missing or of another type
    assert last == len(data) - len(
        b'{"timestamp": "2026-11-27T10:00:07Z", "type": "resp'
    )  # the half-written line waits


def test_a_compressed_rollout_reads_as_the_plain_one(tmp_path):
    import zstandard

    project = _git_repo(tmp_path / "webshop")
    home = Path(os.environ["HOME"])
    plain = place_codex(home, project)
    want, _, _ = read_all(codex, plain)
    zst = plain.with_name(plain.name + ".zst")
    zst.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert read_all(codex, zst)[0] == []  # the plain file wins while both exist (the client's rule)
    plain.unlink()
    got, _, last = read_all(codex, zst)
    assert [(m.uuid, m.text) for m in got] == [(m.uuid, m.text) for m in want]
    assert last == zst.stat().st_size
    assert sources.discover([home / ".codex" / "sessions"]) == [zst]
    from indexer.ingest import Indexer

    with Indexer() as ix:  # read whole once; unchanged, not again
        assert ix.index_file(zst) == 4 and ix.index_file(zst) == 0


def test_a_linked_source_folder_is_the_users_choice(tmp_path):
    """~/.codex moved to another disk and linked back: its sessions are read."""
    from indexer.ingest import Indexer

    project = _git_repo(tmp_path / "webshop")
    elsewhere = tmp_path / "disk2" / "codex"
    place_codex(elsewhere.parent / "fakehome", project)
    (elsewhere.parent / "fakehome" / ".codex").rename(elsewhere)
    (Path(os.environ["HOME"]) / ".codex").symlink_to(elsewhere, target_is_directory=True)
    with Indexer() as ix:
        assert ix.run(sources.all_roots()).messages == 4


def test_a_symlink_or_a_file_elsewhere_is_never_followed(tmp_path):
    from indexer.ingest import Indexer

    project = _git_repo(tmp_path / "webshop")
    home = Path(os.environ["HOME"])
    outside = tmp_path / "elsewhere" / CODEX_NAME
    outside.parent.mkdir()
    outside.write_bytes(_fixture("codex-0.169.0.jsonl", project))
    folder = home / ".codex" / "sessions" / "2026" / "11" / "27"
    folder.mkdir(parents=True)
    link = folder / CODEX_NAME
    link.symlink_to(outside)
    (home / ".codex" / "sessions" / "2025").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (folder / "notes.jsonl").write_text('{"type": "response_item"}\n')  # not a rollout's name
    assert sources.discover([home / ".codex" / "sessions"]) == []
    through_a_linked_folder = home / ".codex" / "sessions" / "2025" / CODEX_NAME  # a regular file, reached by a link
    with Indexer() as ix:
        assert ix.index_file(link) == 0
        assert ix.index_file(through_a_linked_folder) == 0
        assert ix.run(sources.all_roots()).messages == 0


# the pipeline ----------------------------------------------------------------------------------------
@pytest.fixture
def three_agents(tmp_path, claude_projects):
    """A repository with a worktree; a Claude Code session in the repository, a Codex session in
    the worktree, a Gemini session in the repository: all indexed."""
    project = _git_repo(tmp_path / "webshop")
    worktree = tmp_path / "webshop-feature"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", "-b", "feature", str(worktree)], check=True)
    home = Path(os.environ["HOME"])
    place_codex(home, worktree.resolve())
    place_gemini(home, project)
    enc = str(project).replace("/", "-")
    (claude_projects / enc).mkdir()
    line = {
        "type": "user",
        "uuid": "cc-1",
        "sessionId": "cc-session",
        "cwd": str(project),
        "timestamp": "2026-11-27T09:00:00Z",
        "message": {"role": "user", "content": "the billing cron runs hourly"},
    }
    (claude_projects / enc / "cc-session.jsonl").write_text(json.dumps(line) + "\n")
    return project


def test_one_project_any_agent(three_agents, capsys):
    project = three_agents
    code, out, err = cli(capsys, "index")
    assert code == 0, err
    code, out, _ = cli(capsys, "--json", "--project", str(project), "job queue advisory locks")
    hits = json.loads(out)["hits"]
    assert hits and hits[0]["agent"] == "codex" and hits[0]["project"] == str(project)
    code, out, _ = cli(capsys, "--json", "--project", str(project), "cache layer redis streams")
    assert json.loads(out)["hits"][0]["agent"] == "gemini"
    code, out, _ = cli(capsys, "--json", "billing cron")
    assert json.loads(out)["hits"][0]["agent"] == "claude-code"
    # --agent filters, in the typer command and the fast path alike
    for args in (("--raw", "--agent", "codex"), ("search", "--raw", "--agent", "codex")):
        code, out, _ = cli(capsys, *args, "redis")
        assert "advisory locks" in out and "(Codex CLI)" in out and "5 minute TTL" not in out
    code, out, _ = cli(capsys, "--raw", "--agent", "gemini", "job queue advisory locks")
    assert out.startswith("No matches")
    code, _, err = cli(capsys, "--raw", "--agent", "cursor", "redis")
    assert code != 0 and "--agent cursor: no such agent" in err


def test_fast_path_takes_agent():
    from recall.cli import fast_search

    opts = fast_search.parse(["--raw", "--agent", "codex", "redis"])
    assert opts is not None and opts["agent"] == "codex"
    assert fast_search.parse(["sources"]) is None


def test_status_lists_each_source_and_sources_turns_one_off(three_agents, capsys):
    cli(capsys, "index")
    code, out, _ = cli(capsys, "status", "--json")
    rows = {r["name"]: r for r in json.loads(out)["sources"]}
    assert rows["codex"]["messages"] == 4 and rows["codex"]["sessions"] == 1 and rows["codex"]["found"]
    assert rows["gemini"]["messages"] == 4 and rows["claude-code"]["messages"] == 1
    code, out, _ = cli(capsys, "status")
    assert "Codex CLI" in out and "Gemini CLI" in out
    code, out, err = cli(capsys, "sources", "codex", "off")
    assert code == 0 and "Codex CLI: off" in out
    from recall.core import config

    assert config.load()["sources"]["codex"] is False
    assert all(not str(r).startswith(os.environ["HOME"] + "/.codex") for r in sources.all_roots())
    code, out, _ = cli(capsys, "sources")
    assert "off (`recall sources codex on`)" in out
    code, _, err = cli(capsys, "sources", "claude-code", "off")
    assert code != 0 and "cannot be turned off" in err
    code, _, err = cli(capsys, "sources", "cursor", "on")
    assert code != 0 and "No source 'cursor'" in err
    cli(capsys, "sources", "codex", "on")
    assert config.load()["sources"]["codex"] is True


def test_forget_and_exclude_reach_other_agents(three_agents, capsys):
    project = three_agents
    cli(capsys, "index")
    code, out, err = cli(capsys, "forget", "--match", "advisory locks", "--yes")
    assert code == 0, err
    code, out, _ = cli(capsys, "--raw", "--agent", "codex", "advisory locks")
    assert "Postgres" not in out  # the decision is gone (the question that asked for it stays)
    cli(capsys, "index")  # the transcript is still there: never indexed again
    code, out, _ = cli(capsys, "--raw", "Postgres advisory locks")
    assert "Postgres" not in out
    code, out, err = cli(capsys, "forget", "--session", "d2b532a2", "--yes")  # a Gemini session, by its id
    assert code == 0, err
    code, out, _ = cli(capsys, "--raw", "--agent", "gemini", "cache layer redis")
    assert out.startswith("No matches")
    # exclusion: the project's sessions of any agent stay out of every search
    code, _, err = cli(capsys, "exclude", "add", str(project))
    assert code == 0, err
    code, out, _ = cli(capsys, "--raw", "--agent", "codex", "job queue lock")
    assert out.startswith("No matches")


# memories: the other agents have no hooks ----------------------------------------------------------------
def test_memory_extraction_reads_another_agents_session(tmp_path):
    from recall.memory import extract

    project = _git_repo(tmp_path / "webshop")
    path = place_codex(Path(os.environ["HOME"]), project)
    entries, end, cwd = extract.read_new(path, 0, str(project))
    said = "\n".join(e.text for e in entries)
    assert "Which lock should the job queue use?" in said and "Postgres advisory locks" in said
    assert end == path.stat().st_size and cwd == str(project)


def test_the_service_queues_a_quiet_live_session_of_another_agent(tmp_path, monkeypatch):
    import time

    from indexer.message import Message
    from recall.memory import queue
    from recall.service.daemon import Service
    from recall.service.ops import memory as memory_ops

    monkeypatch.setattr("recall.memory.worker.has_key", lambda cfg=None: True)
    monkeypatch.setattr(memory_ops, "wake", lambda: None)
    svc = Service()
    now = time.time()
    live = Message(
        "u1", "codex-live", "/p", "/p", "", "user", now - 5, "decide the queue", source="/s/a.jsonl", agent="codex"
    )
    old = Message(
        "u2", "codex-old", "/p", "/p", "", "user", now - 86400 * 30, "long ago", source="/s/b.jsonl", agent="codex"
    )
    claude = Message("u3", "cc", "/p", "/p", "", "user", now, "hooks do this one", agent="claude-code")
    svc._note_agent_lines([live, old, claude])
    assert set(svc.agent_activity) == {"codex-live"}
    assert svc.queue_agent_captures(now=time.monotonic()) == []  # not quiet yet
    assert svc.queue_agent_captures(now=time.monotonic() + 120) == ["codex-live"]
    [(_, rec)] = queue.pending()
    assert (
        rec["session_id"] == "codex-live" and rec["event"] == "session-end" and rec["transcript_path"] == "/s/a.jsonl"
    )
    assert svc.agent_activity == {}


def test_mcp_matches_say_their_agent(three_agents, capsys):
    from recall.mcp import tools

    project = three_agents
    cli(capsys, "index")
    out = tools.memory_search("job queue advisory locks", project=str(project))
    assert out["matches"][0]["agent"] == "codex"
    out = tools.recall_search("cache layer redis streams", project=str(project))
    assert out["matches"][0]["agent"] == "gemini"


def test_recall_off_in_a_codex_session_switches_it_off(tmp_path, capsys):
    project = _git_repo(tmp_path / "webshop")
    data = _fixture("codex-0.169.0.jsonl", project)
    off = {
        "timestamp": "2026-11-27T13:37:00.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "id": "msg_off",
            "role": "user",
            "content": [{"type": "input_text", "text": "recall: off"}],
        },
    }
    place_codex(Path(os.environ["HOME"]), project, data + json.dumps(off).encode() + b"\n")
    cli(capsys, "index")
    code, out, _ = cli(capsys, "--raw", "--agent", "codex", "job queue advisory locks")
    assert out.startswith("No matches")


def test_recall_quoted_back_through_its_mcp_tools_is_an_echo(tmp_path):
    """A result of recall's own MCP tool in a Codex or Gemini session restates recall's output."""
    project = _git_repo(tmp_path / "webshop")
    home = Path(os.environ["HOME"])
    lines = [
        {
            "timestamp": "2026-11-27T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": CODEX_SESSION, "cwd": str(project)},
        },
        {
            "timestamp": "2026-11-27T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "mcp__recall__memory_search",
                "arguments": '{"query": "queue"}',
                "call_id": "c1",
            },
        },
        {
            "timestamp": "2026-11-27T10:00:02Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": "we use advisory locks"},
        },
        {
            "timestamp": "2026-11-27T10:00:03Z",
            "type": "response_item",
            "payload": {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}', "call_id": "c2"},
        },
        {
            "timestamp": "2026-11-27T10:00:04Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c2", "output": "README.md"},
        },
    ]
    path = place_codex(home, project, b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    msgs, _, _ = read_all(codex, path)
    assert [(m.role, m.echo) for m in msgs] == [
        ("tool_use", False),
        ("tool_result", True),
        ("tool_use", False),
        ("tool_result", False),
    ]
    chat = place_gemini(home, project)
    rec = {
        "id": "r1",
        "timestamp": "2026-11-27T10:00:05Z",
        "type": "user",
        "content": [
            {"functionResponse": {"id": "x", "name": "memory_search", "response": {"output": "we use advisory locks"}}}
        ],
    }
    chat.write_bytes(chat.read_bytes() + json.dumps(rec).encode() + b"\n")
    msgs, _, _ = read_all(gemini, chat)
    assert msgs[-1].role == "tool_result" and msgs[-1].echo and not any(m.echo for m in msgs[:-1])


def test_gemini_logs_json_gives_the_prompts_of_sessions_without_a_chat(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    chat = place_gemini(Path(os.environ["HOME"]), project)
    logs = chat.parent.parent / "logs.json"
    logs.write_text(
        json.dumps(
            [
                {
                    "sessionId": "d2b532a2-80c3-4898-92ba-c297cf951efb",
                    "messageId": 0,
                    "timestamp": "2026-11-27T13:36:54Z",
                    "type": "user",
                    "message": "How should the cache layer work? Decide.",
                },  # its chat has it
                {
                    "sessionId": "0ld5e55-0000-0000-0000-000000000000",
                    "messageId": 0,
                    "timestamp": "2025-06-01T10:00:00Z",
                    "type": "user",
                    "message": "switch the billing cron to every 15 minutes",
                },
                {"sessionId": "0ld5e55-0000-0000-0000-000000000000", "messageId": 1, "type": "user"},  # a field missing
            ]
        )
    )
    assert sources.discover([Path(os.environ["HOME"]) / ".gemini" / "tmp"]) == sorted([chat, logs])
    msgs, stats, last = read_all(gemini, logs)
    assert [(m.text, m.session_id, m.project, m.agent) for m in msgs] == [
        ("switch the billing cron to every 15 minutes", "0ld5e55-0000-0000-0000-000000000000", str(project), "gemini")
    ]
    assert stats["duplicate-block"] == 1 and stats["unknown-type"] == 1 and last == logs.stat().st_size


def test_what_their_tool_calls_did_to_files_makes_stale_marks(tmp_path):
    """Codex's apply_patch and shell commands, Gemini's write_file: the touches Claude Code's get."""
    project = _git_repo(tmp_path / "webshop")
    patch = (
        "*** Begin Patch\n*** Add File: src/queue.py\n+LOCK = 'advisory'\n*** Update File: README.md\n@@\n-a\n+b\n"
        "*** Delete File: old.py\n*** End Patch\n"
    )
    lines = [
        {
            "timestamp": "2026-11-27T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": CODEX_SESSION, "cwd": str(project)},
        },
        {
            "timestamp": "2026-11-27T10:00:01Z",
            "type": "response_item",
            "payload": {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c1"},
        },
        {
            "timestamp": "2026-11-27T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "git mv a.py b.py"}),
                "call_id": "c2",
            },
        },
    ]
    path = place_codex(Path(os.environ["HOME"]), project, b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    msgs, _, _ = read_all(codex, path)
    assert msgs[0].text == "apply_patch: add src/queue.py, update README.md, delete old.py"
    assert [t[:2] for t in msgs[0].touched] == [["write", "src/queue.py"], ["edit", "README.md"], ["delete", "old.py"]]
    assert [t[0] for t in msgs[1].touched] == ["move"] and msgs[1].touched[0][1] == "a.py"
    chat = place_gemini(Path(os.environ["HOME"]), project)
    rec = {
        "id": "w1",
        "timestamp": "2026-11-27T10:00:05Z",
        "type": "gemini",
        "content": "",
        "toolCalls": [
            {
                "id": "t1",
                "name": "write_file",
                "args": {"file_path": str(project / "cache.py"), "content": "TTL = 300\n"},
                "status": "success",
            },
            {
                "id": "t2",
                "name": "write_file",
                "args": {"file_path": str(project / "refused.py"), "content": "x"},
                "status": "error",
            },
        ],
    }
    chat.write_bytes(chat.read_bytes() + json.dumps(rec).encode() + b"\n")
    msgs, _, _ = read_all(gemini, chat)
    assert [t[:2] for t in msgs[-1].touched] == [["write", "cache.py"]]


def test_a_damaged_compressed_rollout_is_read_to_its_last_complete_line(tmp_path, capsys):
    import zstandard

    project = _git_repo(tmp_path / "webshop")
    plain = place_codex(Path(os.environ["HOME"]), project)
    data = plain.read_bytes()
    zst = plain.with_name(plain.name + ".zst")
    half = len(data.splitlines(keepends=True)) // 2
    head = b"".join(data.splitlines(keepends=True)[:half])
    # two frames, the second cut short: the first frame's lines are read, the loss is named
    zst.write_bytes(
        zstandard.ZstdCompressor().compress(head) + zstandard.ZstdCompressor().compress(data[len(head) :])[:-40]
    )
    plain.unlink()
    place_gemini(Path(os.environ["HOME"]), project)
    ctx = codex.context(zst)
    got = [m for batch, _ in codex.read(zst, 0, ctx, Counter()) for m in batch]
    assert [m.role for m in got] == ["user"] and "cut short" in ctx.bad[-1][1]
    code, out, err = cli(capsys, "index")
    assert code == 0, err
    code, out, _ = cli(capsys, "--raw", "--agent", "gemini", "cache layer redis")
    assert "5 minute TTL" in out
    zst.write_bytes(b"not zstd at all")
    with pytest.raises(OSError, match="not a readable zstd file"):
        read_all(codex, zst)


def test_secrets_and_private_blocks_are_kept_out_of_other_agents_sessions(tmp_path):
    project = _git_repo(tmp_path / "webshop")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    lines = [
        {
            "timestamp": "2026-11-27T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": CODEX_SESSION, "cwd": str(project)},
        },
        {
            "timestamp": "2026-11-27T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"deploy with GITHUB_TOKEN={token} please"}],
            },
        },
        {
            "timestamp": "2026-11-27T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<private>my salary is 1234"}],
            },
        },
        {
            "timestamp": "2026-11-27T10:00:03Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "noted the salary"}],
            },
        },
        {
            "timestamp": "2026-11-27T10:00:04Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "</private> now the queue"}],
            },
        },
    ]
    path = place_codex(Path(os.environ["HOME"]), project, b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    msgs, stats, _ = read_all(codex, path)
    said = "\n".join(m.text for m in msgs)
    assert token not in said and "[redacted:" in said
    assert "salary" not in said and "now the queue" in said and stats["private"] >= 2


def test_each_source_s_label_is_the_registry_s_and_an_injected_hit_names_its_agent():
    """``sources.LABELS`` (read without importing a source) matches each module's ``LABEL``; the
    prompt hook's block and the synthesis's excerpts cite another agent's session by its label,
    as the CLI does (issue 39: each hit says which agent it came from)."""
    from recall.llm import synthesis
    from recall.prompt import block
    from recall.search.hit import Hit

    assert sources.LABELS == {name: sources.module(name).LABEL for name in sources.NAMES}
    from recall.core.errors import UsageError
    from recall.search.run import check_agent  # the fast path's check: the registry's names, no copy of them

    assert [check_agent(name) for name in sources.NAMES] == list(sources.NAMES)
    with pytest.raises(UsageError, match=r"no such agent\. Pass one of claude-code, codex, gemini \("):
        check_agent("cursor")
    base = dict(
        session_id="3c4e0949aaaa",
        project="/p",
        role="assistant",
        text="use bf16",
        timestamp="2026-11-20T10:00:00Z",
        uuid="u1",
        cwd="/p",
        snippet="use bf16",
        score=1.0,
    )
    codex_hit, claude_hit = Hit(**base, agent="codex"), Hit(**base, agent="claude-code")
    assert block.citation(codex_hit) == "[2026-11-20 Codex CLI session 3c4e0949]"
    assert synthesis.citation(codex_hit) == "[2026-11-20 Codex CLI session 3c4e0949]"
    assert block.citation(claude_hit) == synthesis.citation(claude_hit) == "[2026-11-20 session 3c4e0949]"
    assert "- [2026-11-20 Gemini CLI session 3c4e0949]" in block.format_raw([Hit(**base, agent="gemini")], "bf16")


def test_each_agents_replies_are_headed_by_its_own_name_in_recall_show_and_the_page(three_agents, capsys):
    """A reply is headed by whose it is, in `recall show` and on the page alike: CODEX, GEMINI
    (the page said CLAUDE for every agent's), CLAUDE for Claude Code's."""
    from indexer.state import list_sessions
    from recall.ui.pages import session_page

    code, _, err = cli(capsys, "index")
    assert code == 0, err
    agents = {"codex": "CODEX", "gemini": "GEMINI"}
    seen = set()
    for info in list_sessions(limit=10):
        code, shown, _ = cli(capsys, "show", info.session_id)
        assert code == 0
        heads = {ln.split(" ", 1)[1] for ln in shown.splitlines() if re.fullmatch(r"\d\d:\d\d [A-Z]+", ln)}
        on_page = set(re.findall(r"</time> <b>([^<]+)</b>", session_page(info.session_id, "csrf")))
        if info.session_id == "cc-session":
            assert heads == {"USER"} and on_page == {"USER"}  # one prompt, no reply
            continue
        agent = "codex" if info.session_id == CODEX_SESSION else "gemini"
        seen.add(agent)
        assert agents[agent] in heads and agents[agent] in on_page, (agent, heads, on_page)
        assert not (heads | on_page) & {"CLAUDE", *agents.values()} - {agents[agent]}, (agent, heads, on_page)
    assert seen == {"codex", "gemini"}


AIDER = '''"""A source written for a test: Aider's sessions, ``$AIDER_HOME/sessions/<session>.jsonl``, one
``{"role", "content", "cwd", "ts"}`` object a line."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from indexer.sources.lines import AgentContext, make, read_jsonl

NAME = "aider"
LABEL = "Aider"
VARIABLES = ("AIDER_HOME",)


def roots() -> list[Path]:
    return [Path(os.environ.get("AIDER_HOME") or Path.home() / ".aider") / "sessions"]


def wants(name: str) -> bool:
    return name.endswith(".jsonl")


def whole(name: str) -> bool:
    return False


def context(path: Path) -> AgentContext:
    return AgentContext(path, NAME, session_id=path.stem)


def parse(obj, ctx: AgentContext, stats: Counter):
    if not isinstance(obj, dict) or obj.get("role") not in ("user", "assistant"):
        stats["unknown-type"] += 1
        return []
    ctx.cwd = obj.get("cwd") or ctx.cwd
    m = make(ctx, stats, str(ctx.line), obj["role"], [obj.get("content")], obj.get("ts"), typed=obj["role"] == "user")
    return [m] if m else []


def read(path: Path, offset: int, ctx: AgentContext, stats: Counter, max_bytes: int = 8 << 20):
    return read_jsonl(path, offset, ctx, stats, max_bytes, parse)
'''


@pytest.fixture
def aider(tmp_path, monkeypatch):
    """One more source, as a contributor adds one: its module, in a folder of the package."""
    folder = tmp_path / "more_sources"
    folder.mkdir()
    (folder / "aider.py").write_text(AIDER)
    monkeypatch.setattr(sources, "__path__", [*sources.__path__, str(folder)])
    sources.refresh()
    yield
    monkeypatch.undo()
    sources.refresh()
    import sys

    sys.modules.pop("indexer.sources.aider", None)


def test_a_new_source_is_one_module(aider, tmp_path, claude_projects, capsys):
    """Adding a source is adding its module: nothing else names it. Its sessions are found,
    read, searched (`--agent aider`, the hit saying "Aider"), listed by `recall sources` and
    `recall status`, turned off, and its replies are headed by its own name (they were CLAUDE)."""
    project = _git_repo(tmp_path / "shop")
    folder = Path(os.environ["HOME"]) / ".aider" / "sessions"
    folder.mkdir(parents=True)
    lines = [
        {"role": "user", "content": "which queue do we use for the mailer?", "cwd": str(project), "ts": 1795000000},
        {"role": "assistant", "content": "The mailer uses the postgres advisory queue.", "ts": 1795000060},
    ]
    (folder / "a1d3r.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert sources.NAMES == ("claude-code", "aider", "codex", "gemini")  # Claude Code's, then by module
    assert sources.LABELS["aider"] == "Aider" and sources.module("aider").NAME == "aider"
    code, _, err = cli(capsys, "index")
    assert code == 0, err
    code, out, _ = cli(capsys, "--raw", "--agent", "aider", "mailer queue")
    assert "postgres advisory" in out and "(Aider)" in out
    code, out, _ = cli(capsys, "--json", "mailer advisory queue")
    assert json.loads(out)["hits"][0]["agent"] == "aider"
    code, out, _ = cli(capsys, "show", "a1d3r")
    assert code == 0 and re.search(r"^\d\d:\d\d AIDER$", out, re.M) and "CLAUDE" not in out
    code, out, _ = cli(capsys, "status", "--json")
    assert {r["name"]: r for r in json.loads(out)["sources"]}["aider"]["messages"] == 2
    code, out, err = cli(capsys, "sources", "aider", "off")
    assert code == 0 and "Aider: off" in out
    assert all(not str(r).startswith(str(folder)) for r in sources.all_roots())
