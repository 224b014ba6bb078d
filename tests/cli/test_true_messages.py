"""Messages that are true (issue 44): doctor and status report the backend each caller really
used (a hook's calls through the service run with Claude Code's environment, which held the key
this shell lacks) and never FAIL a backend that works; `recall rules remove` of an unknown id
is an ordinary error; counts say "1 problem" and "2 problems"; status counts the typed
memories `recall memories` lists, not the index's memory documents."""

from __future__ import annotations

import io
import json
import re
import tokenize
from pathlib import Path

from recall.cli.checks import check_backend
from recall.core import caller
from recall.llm import usage
from tests.support.cli import cli

ROOT = Path(__file__).resolve().parents[2]
HOOK_ENV = {"ANTHROPIC_API_KEY": "sk-ant-api03-hook-key-not-real"}


def _hooks_called_the_api(prompts: int = 30, memory: int = 3) -> None:
    """What the service records for the hooks' calls: api, with the key of Claude Code's session."""
    with caller.use(HOOK_ENV):
        for _ in range(prompts):
            usage.record_usage("claude-haiku-4-5", 900, 120, "recall", backend="api", key="ANTHROPIC_API_KEY")
        for _ in range(memory):
            usage.record_usage("claude-haiku-4-5", 2000, 300, "extraction", backend="api", key="ANTHROPIC_API_KEY")


# item 1: the backend each caller used -------------------------------------------------------------
def test_doctor_does_not_fail_a_backend_the_hooks_use(project, capsys, claude_logged_out, claude_projects, monkeypatch):
    """The issue's install: no key in this shell, Claude Code logged out here, 33 api calls today
    from the hooks. Doctor said FAIL ... is not logged in ... (none succeeded today) and exited 1."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert cli(capsys, "setup", "--project", str(project), "--no-service", "--no-index")[0] == 0
    assert cli(capsys, "index")[0] == 0
    _hooks_called_the_api()
    code, out, err = cli(capsys, "doctor", "--project", str(project))
    assert "FAIL" not in out and "none succeeded today" not in out
    assert code == 0, out + err
    assert (
        f"warn  model backend: model.backend = auto: synthesis: claude-code; memory: claude-code; ask: claude-code "
        f"(Claude Code's own login (no Anthropic key found): {claude_logged_out} 2.1.197) as this shell would call "
        f"it; Claude Code at {claude_logged_out} is not logged in in this shell (`claude auth status`: loggedIn "
        "false), so a model call from this shell (`recall ask`) fails; but the hooks' and the service's calls "
        "work: api: 33 calls succeeded today (prompt hook 30, memory 3; key ANTHROPIC_API_KEY from a hook's "
        "environment)\n"
    ) in out
    assert "      fix: to call models from this shell too: run `claude` and log in (/login)" in out
    assert (
        "warn  API key: none found in this shell's environment or recall's config: the model backend here is "
        "Claude Code's own login if it can be used (see the backend line); today's api calls had one: "
        "ANTHROPIC_API_KEY from a hook's environment"
    ) in out
    assert "No problems; " in out and "optional pieces off (see the warn lines)." in out


def test_doctor_still_fails_when_nothing_works(project, capsys, claude_logged_out, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with caller.use(HOOK_ENV):  # the hooks' calls failed too
        usage.record_usage("claude-haiku-4-5", 0, 0, "recall", backend="api", key="ANTHROPIC_API_KEY", error="401")
    check = check_backend()
    assert not check.ok and not check.warn
    assert check.detail.endswith(
        "is not logged in (`claude auth status`: loggedIn false): its model calls fail (none succeeded today)"
    )


def test_doctor_with_no_backend_here_says_the_hooks_calls_work(project, capsys, monkeypatch, tmp_path):
    """No key and no Claude Code in this shell: a warning that names what worked, not "the hook
    injects raw snippets" (it did not)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    _hooks_called_the_api(prompts=2, memory=0)
    check = check_backend()
    assert not check.ok and check.warn
    assert "raw snippets" not in check.detail
    assert check.detail.endswith(
        "as this shell would call it: a model call from this shell (`recall ask`) has no backend; but the hooks' "
        "and the service's calls work: api: 2 calls succeeded today (prompt hook 2; key ANTHROPIC_API_KEY from "
        "a hook's environment)"
    )


def test_status_names_the_backend_the_hooks_used_next_to_this_shells(capsys, claude_logged_out, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _hooks_called_the_api()
    code, out, _ = cli(capsys, "status")
    assert code == 0
    assert (
        "         today on api: 33 (recall 30, extraction 3); key ANTHROPIC_API_KEY from a hook's environment\n" in out
    )
    assert "Backend: model.backend = auto\n" in out
    assert (
        "         the per-prompt synthesis: api (today's synthesis calls went to api (30 succeeded), with the "
        "hooks' credentials; this shell would use claude-code)\n"
    ) in out
    assert (
        "         memory extraction and consolidation: api (today's extraction calls went to api (3 succeeded), "
        "with the hooks' credentials; this shell would use claude-code)\n"
    ) in out
    assert "         recall ask / MCP memory_ask: claude-code (Claude Code's own login" in out
    assert "Memory:  extraction on (api)" in out
    code, out, _ = cli(capsys, "status", "--json")
    info = json.loads(out)
    assert info["backends"]["features"]["synthesis"]["backend"] == "api"
    assert info["model_usage"]["today_by_backend"]["api"]["keys"] == {"ANTHROPIC_API_KEY from a hook's environment": 33}


def test_the_roll_up_keeps_where_the_key_came_from(capsys):
    _hooks_called_the_api(prompts=4, memory=1)
    usage.record_usage("claude-haiku-4-5", 10, 1, "answer", backend="api", key="/home/u/.config/anthropic/api_key")
    before = usage.usage_summary()["today_by_backend"]["api"]
    assert usage.compact_usage() == 3
    after = usage.usage_summary()["today_by_backend"]["api"]
    assert after == before
    assert after["keys"] == {"ANTHROPIC_API_KEY from a hook's environment": 5, "/home/u/.config/anthropic/api_key": 1}


# item 5: papercuts ---------------------------------------------------------------------------------
def test_removing_an_unknown_rule_is_an_ordinary_error_naming_the_next_step(project, capsys):
    code, out, err = cli(capsys, "rules", "remove", "zzz", "--project", str(project))
    assert code == 1 and out == ""
    assert err == "recall: No rule 'zzz' in this project's or the global rules: `recall rules list` shows the ids.\n"
    code, out, err = cli(capsys, "rules", "remove", "--project", str(project))
    assert code == 2  # a missing argument is a malformed command: 2 stays for those


def test_doctor_counts_problems_in_words(project, capsys, monkeypatch):
    from recall.cli import checks

    for failed in (1, 2):
        fake = [checks.Check(f"piece {i}", False, "broken", "mend it") for i in range(failed)]
        monkeypatch.setattr(checks, "doctor", lambda project=None, shell=True, fake=fake: fake)
        code, out, err = cli(capsys, "doctor")
        assert code == 1
        assert (
            err.strip()
            == f"recall: {failed} {'problem' if failed == 1 else 'problems'} found: each one's fix is printed above."
        )


_PLURAL_HEDGE = re.compile(r"[A-Za-z]\(s\)")


def test_no_count_prints_as_noun_s():
    """ "1 problem", "2 problems": no string recall prints says "problem(s)"."""
    found = []
    for path in sorted([*(ROOT / "recall").rglob("*.py"), *(ROOT / "indexer").rglob("*.py")]):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        for tok in tokens:
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                text = tok.string
                if text.startswith(('"""', "'''")):
                    continue  # a docstring may quote the old wording
                if _PLURAL_HEDGE.search(text):
                    found.append(f"{path.relative_to(ROOT)}:{tok.start[0]}: {text[:80]}")
    assert found == []


def test_status_counts_the_memories_recall_memories_lists(project, capsys, claude_projects):
    """Status said 23 memories where 5 existed: it counted the index's memory documents, which
    hold session summaries, rules and Claude Code's own memory files too."""
    from recall.memory import store
    from tests.support.factory import Session

    s = Session(cwd=str(project))
    s.user("set up the release pipeline for the shop")
    s.assistant("Done: the pipeline builds and tests on every push.")
    s.write(claude_projects)
    (project / "CLAUDE.md").write_text(
        "# Shop\n- The frontend is served by caddy on port 8443.\n\n- Tabs, not spaces.\n"
    )
    assert cli(capsys, "index")[0] == 0
    for text in ("Prices are integer cents.", "Deploy with make ship.", "Redis loses queued jobs on restart."):
        code, _, err = cli(capsys, "memories", "add", "decision", text, "--project", str(project))
        assert code == 0, err
    with store.transaction(str(project)) as state:
        old = store.add_memory(state, "pattern", "An old way of doing things.").memory
        old.status = "archived"
        state.touch(old)
    assert (
        cli(capsys, "rules", "add", "Run the migrations first.", "--any", "deploy", "--project", str(project))[0] == 0
    )
    code, out, _ = cli(capsys, "memories", "--project", str(project))
    listed = [ln for ln in out.splitlines() if re.match(r"^  [0-9a-f]{6,}", ln)]
    assert len(listed) == 3
    code, out, _ = cli(capsys, "status", "--json")
    idx = json.loads(out)["index"]
    assert idx["memories"] == 3
    assert idx["memory_documents"] > 3  # the rule, the CLAUDE.md notes and the archived memory are documents too
    code, out, _ = cli(capsys, "status")
    index_line = next(ln for ln in out.splitlines() if ln.startswith("Index:"))
    assert ", 3 memories" in index_line, index_line


def test_doctor_from_a_shell_does_not_replace_the_hooks_credentials(monkeypatch):
    """Doctor asks the service which backend this shell's credentials would give: that probe is
    not remembered as the last hook's credentials, which memory extraction runs with."""
    import logging

    from recall.core import service_client as client
    from recall.service import registry as ops
    from recall.service.socket_server import SocketServer

    ops.load_modules()
    srv = SocketServer(logging.getLogger("test"))
    srv.start()
    try:
        with monkeypatch.context() as m:  # a hook, in Claude Code's environment
            m.setenv("ANTHROPIC_API_KEY", HOOK_ENV["ANTHROPIC_API_KEY"])
            client.call("ping", {}, timeout=5.0, credentials=True)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        probe = client.call("backend", {}, timeout=5.0, credentials=True)  # doctor, from a shell without the key
        assert probe["caller"]["backend"] != "api"
        assert client.call("backend", {}, timeout=5.0)["memory"]["backend"] == "api"
    finally:
        srv.stop()
        caller._remembered.clear()
