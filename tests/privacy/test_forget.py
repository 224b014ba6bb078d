"""`recall forget` from every store at once (archive, index, offsets state, memories, the
CLAUDE.md block), `--before/--match/--secret`, session prefixes, and rebuilds that never
bring anything back; `recall: off` sessions, exclusions and the pause on the ingest side."""

from __future__ import annotations

import json
import time

import pytest

from indexer import ledger
from indexer.archive import Archive
from indexer.forgetting import SECRET_MARK, Selection, resolve_session
from indexer.ingest import Indexer, index_all
from recall.core import config, paths
from recall.core.errors import UsageError
from recall.memory import briefing, store
from recall.privacy.forget import attach, forget_everywhere, plan
from recall.prompt.context import refusal
from recall.search.searcher import Searcher
from tests.support.factory import Session
from tests.support.memory import make_project, make_worktree

SECRET = "hunter2-plum-ORCHID"  # not shaped like a key: redaction at ingest keeps it


def texts(query: str, **kw) -> list[str]:
    return [h.text for h in Searcher().search(query, limit=50, messages=True, **kw)]


def archived() -> list[str]:
    return [m.text for batch in Archive(paths.archive_dir()).replay() for m in batch]


def remember(project, content: str, session_id: str, origin: str = "extraction") -> str:
    with store.transaction(project) as state:
        m = store.add_memory(state, "gotcha", content, session_id=session_id, origin=origin).memory
    briefing.write_briefing(project, state)
    return m.id


def claude_md(project) -> str:
    p = project / "CLAUDE.md"
    return p.read_text() if p.exists() else ""


def forget(sel: Selection) -> dict:
    with Indexer() as ix:
        return forget_everywhere(ix, sel)


def test_match_removes_the_messages_and_what_was_drawn_from_them_and_a_rebuild_keeps_them_gone(
    claude_projects, project
):
    s = Session(cwd=str(project))
    s.user("how do we reach the walrus billing host")
    s.assistant("the walrus billing host is behind the vpn")
    s.user("and the giraffe deploy script")
    s.assistant("giraffe deploy runs from ci")
    s.write(claude_projects)
    index_all()
    remember(project, "The walrus billing host sits behind the VPN.", s.session_id)
    keep = remember(project, "Deploys run from CI, never by hand.", s.session_id, origin="manual")
    assert "walrus" in claude_md(project)

    sel = Selection(match="WALRUS").check()
    p = plan(sel)
    assert p["messages"] == 2 and p["memories"] == 1 and p["sessions"] == [s.session_id]
    out = forget(sel)
    assert out["messages"] == 2 and out["memories"] == 1 and out["briefings"] == 1

    assert texts("walrus") == [] and not any("walrus" in t for t in archived())
    assert texts("giraffe") and all("giraffe" in t for t in texts("giraffe"))  # positions rewritten
    assert "walrus" not in claude_md(project) and "Deploys run from CI" in claude_md(project)
    assert [m.id for m in store.load(project).memories] == [keep]
    first = Searcher().search("giraffe", limit=5)
    assert all("walrus" not in h.text for h in first)  # the session document was rebuilt too

    index_all(rebuild=True)  # the transcript is still on disk
    assert texts("walrus") == [] and len(texts("giraffe")) == 2
    assert not any("walrus" in t for t in archived())


def test_secret_is_cut_out_everywhere_and_the_rest_kept(claude_projects, project):
    s = Session(cwd=str(project))
    s.user(f"the staging door opens with {SECRET} for the pelican admin")
    s.assistant("noted, the pelican admin is on staging")
    s.write(claude_projects)
    index_all()
    remember(project, f"The pelican staging admin logs in with {SECRET} today.", s.session_id)

    out = forget(Selection(secret=SECRET).check())
    assert out["rewritten"] == 1 and out["memories_rewritten"] == 1
    for _ in range(2):
        assert texts(SECRET.split("-")[1]) == []
        hits = texts("pelican")
        assert any(SECRET_MARK in t for t in hits) and not any(SECRET in t for t in hits)
        assert not any(SECRET in t for t in archived())
        assert SECRET not in claude_md(project) and SECRET_MARK in claude_md(project)
        assert SECRET not in (paths.archive_dir() / "memory.jsonl").read_text()
        index_all(rebuild=True)  # the transcript still holds it: the archive's copy wins


def test_before_forgets_old_messages_and_extracted_memories(claude_projects, project):
    from datetime import timedelta

    from tests.support.factory import BASE_TIME

    old = Session(cwd=str(project), start=BASE_TIME - timedelta(days=60))
    old.user("an old question about the heron cache")
    old.write(claude_projects)
    new = Session(cwd=str(project))
    new.user("a new question about the heron cache")
    new.write(claude_projects)
    index_all()
    with store.transaction(project) as state:
        store.add_memory(
            state,
            "gotcha",
            "The heron cache is cold at boot.",
            session_id=old.session_id,
            now=(BASE_TIME - timedelta(days=59)).timestamp(),
        )
    out = forget(Selection(before=(BASE_TIME - timedelta(days=1)).timestamp()).check())
    assert out["messages"] == 1 and out["emptied"] == [old.session_id] and out["memories"] == 1
    assert texts("heron") == ["a new question about the heron cache"]
    index_all(rebuild=True)
    assert texts("heron") == ["a new question about the heron cache"]


def test_session_prefixes_and_bad_input_say_what_to_do(claude_projects):
    a = Session(cwd="/home/dev/app", session_id="abc11111-0000")
    b = Session(cwd="/home/dev/app", session_id="abc22222-0000")
    for s in (a, b):
        s.user("a question about the ferret")
        s.write(claude_projects)
    index_all()
    assert resolve_session("abc1") == a.session_id
    with pytest.raises(UsageError, match="matches 2 sessions"):
        resolve_session("abc")
    with pytest.raises(UsageError, match="No session starts with 'zzz'"):
        resolve_session("zzz")
    with pytest.raises(UsageError, match="--secret needs the value itself"):
        Selection(secret="ab").check()
    with pytest.raises(UsageError, match="Say what to forget"):
        Selection().check()
    forget(Selection(sessions=[resolve_session("abc2")]))
    assert len(texts("ferret")) == 1


def test_recall_off_drops_the_whole_session_from_every_store(claude_projects, project):
    s = Session(cwd=str(project))
    s.user("the otter migration plan is secret")
    s.write(claude_projects)
    index_all()
    remember(project, "The otter migration plan is secret.", s.session_id)
    assert texts("otter")
    start = len(s.lines)
    s.user("recall: off")
    s.user("more about the otter migration after the marker")
    s.append(claude_projects, start)
    with Indexer() as ix:
        attach(ix)
        ix.run(paths.transcript_roots())
    assert texts("otter") == [] and not any("otter" in t for t in archived())
    assert store.load(project).memories == [] and "otter" not in claude_md(project)
    index_all(rebuild=True)
    assert texts("otter") == []
    # the hook injects nothing more into it
    assert (
        refusal(
            {"session_id": s.session_id, "prompt": "what about the otter plan?", "cwd": str(project)}, config.load()
        )
        == "off"
    )


def test_the_hook_switches_a_session_off_at_once():
    payload = {"session_id": "sess-1", "prompt": "  Recall: OFF ", "cwd": "/home/dev/app"}
    assert refusal(payload, config.load()) == "off"
    assert "sess-1" in ledger.off_sessions()
    assert refusal({"session_id": "sess-2", "prompt": "a real question here"}, config.load()) is None


def test_excluded_projects_are_never_indexed_searched_or_injected(claude_projects, tmp_path):
    work = make_project(tmp_path, "client-acme")
    wt = make_worktree(work, tmp_path / "acme-wt")  # its messages carry the main project
    before = Session(cwd=str(work))
    before.user("the acme llama contract terms")
    before.write(claude_projects)
    index_all()
    assert texts("llama")
    config.set_value("exclude", [str(tmp_path / "client-*")])
    assert texts("llama") == []  # indexed before the exclusion: hidden from every search
    s = Session(cwd=str(wt))
    s.user("more llama contract terms from the worktree")
    s.write(claude_projects)
    summary = index_all()
    assert summary.skipped["excluded"] == 1
    config.set_value("exclude", [])
    assert texts("llama") == ["the acme llama contract terms"]
    config.set_value("exclude", [str(work)])
    assert (
        refusal({"prompt": "what are the llama contract terms?", "cwd": str(wt / "src")}, config.load()) == "excluded"
    )


def test_a_pause_keeps_its_window_out_even_after_a_rebuild(claude_projects):
    from datetime import datetime, timezone

    now = time.time()
    start = datetime.fromtimestamp(now - 3600, tz=timezone.utc)
    s = Session(cwd="/home/dev/app", start=start)
    s.user("before the pause: the moose")
    ledger.pause(None, now=now - 3000)
    assert refusal({"prompt": "is the moose fed?"}, config.load()) == "paused"
    s.clock = datetime.fromtimestamp(now - 2000, tz=timezone.utc)
    s.user("during the pause: the moose password")
    ledger.resume(now=now - 1000)
    s.clock = datetime.fromtimestamp(now - 500, tz=timezone.utc)
    s.user("after the pause: the moose again")
    s.write(claude_projects)
    index_all()
    assert sorted(texts("moose")) == ["after the pause: the moose again", "before the pause: the moose"]
    index_all(rebuild=True)
    assert len(texts("moose")) == 2
    assert refusal({"prompt": "is the moose fed?"}, config.load()) is None


def test_remember_guesses_the_type_and_tells_standing_instructions_apart(tmp_path, capsys):
    from recall.cli.app import run
    from recall.memory.remember import guess_type, is_standing_instruction

    assert is_standing_instruction("always run make lint before committing")
    assert is_standing_instruction("Never push straight to main")
    assert is_standing_instruction("please don't touch the generated files")
    assert not is_standing_instruction("the billing tests need docker running")
    assert guess_type("the webhook test is flaky when redis is down") == "gotcha"
    assert guess_type("we decided on pgbouncer instead of pgpool") == "decision"
    assert guess_type("the billing tests need docker running") == "pattern"
    project = make_project(tmp_path, "app")
    assert run(["remember", "--project", str(project), "--json", "the", "webhook", "test", "is", "flaky"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["type"] == "gotcha" and out["action"] == "added" and out["instruction"] is False
    assert "the webhook test is flaky" in claude_md(project)
    assert run(["remember", "--project", str(project)]) == 2
    assert "Say what to remember" in capsys.readouterr().err


def test_ask_or_hits_prints_the_hits_without_a_model(claude_projects, tmp_path, capsys):
    from recall.cli.app import run

    project = make_project(tmp_path, "app")
    s = Session(cwd=str(project))
    s.user("the kestrel cache warms up at boot")
    s.write(claude_projects)
    index_all()
    assert run(["ask", "--project", str(project), "what", "about", "kestrel"]) == 1
    assert "Model calls are off: no Anthropic key and no Claude Code found" in capsys.readouterr().err
    assert run(["ask", "--or-hits", "--project", str(project), "what", "about", "kestrel"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No synthesized answer (Model calls are off") and "**kestrel**" in out


def test_memory_extraction_reads_nothing_of_excluded_or_switched_off_sessions(claude_projects, project):
    from recall.memory.extract import read_new

    s = Session(cwd=str(project))
    s.user("a question about the badger queue")
    s.assistant("the badger queue drains every minute")
    path = s.write(claude_projects)
    assert len(read_new(path, 0)[0]) == 2
    config.set_value("exclude", [str(project)])
    assert read_new(path, 0)[0] == []
    config.set_value("exclude", [])
    ledger.switch_off([s.session_id])
    assert read_new(path, 0)[0] == []


def test_forget_removes_the_summaries_of_the_sessions_it_touches(claude_projects, project):
    from recall.memory import summaries

    s = Session(cwd=str(project))
    s.user("the pelican cache is warmed at boot")
    s.assistant("pelican warm-up runs in the init container")
    s.write(claude_projects)
    other = Session(cwd=str(project))
    other.user("the heron queue drains nightly")
    other.write(claude_projects)
    index_all()
    summaries.put(s.session_id, str(project), "Goal: warm the pelican cache at boot.")
    summaries.put(other.session_id, str(project), "Goal: drain the heron queue.")
    assert any(h.uuid == summaries.doc_id(s.session_id) for h in Searcher().search("pelican", limit=10))

    sel = Selection(match="pelican").check()
    assert plan(sel)["summaries"] == 1
    out = forget(sel)
    assert out["summaries"] == 1
    assert summaries.get(s.session_id) is None and summaries.get(other.session_id) is not None
    assert not any("pelican" in h.text for h in Searcher().search("pelican", limit=10))


def test_remember_turns_a_standing_instruction_into_a_rule(tmp_path, capsys):
    from recall.cli.app import run
    from recall.rules import store as rules

    project = make_project(tmp_path, "app")
    assert (
        run(["remember", "--project", str(project), "--json", "always", "run", "make", "lint", "before", "committing"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["action"] == "rule" and out["instruction"] is True
    [rule] = rules.load("project", str(project))
    assert rule.id == out["id"] and rule.text == "always run make lint before committing"
    assert rule.origin == "remember" and not (rule.any or rule.all or rule.regex or rule.paths or rule.tools)
    assert store.load(str(project)).memories == []  # a rule, not a memory as well
    assert run(["remember", "--project", str(project), "always", "rebase", "on", "main"]) == 0
    assert capsys.readouterr().out.startswith("Saved as rule ")


def test_forget_cleans_the_injection_log(claude_projects, project):
    from recall.prompt import injections

    s = Session(cwd=str(project))
    s.user("the albatross token lives in vault")
    s.write(claude_projects)
    other = Session(cwd=str(project))
    other.user(f"the ibis door opens with {SECRET}")
    other.write(claude_projects)
    index_all()

    def logged(session, hit, text):
        injections.append(
            {
                "t": time.time(),
                "project": str(project),
                "session": session,
                "outcome": "raw",
                "hits": [{"session": hit, "score": 1.0}],
                "text": text,
            }
        )

    logged("now-1", s.session_id, "- [2026-11-20 session x] user: the albatross token lives in vault")
    logged("now-2", other.session_id, f"- [2026-11-20 session y] user: the ibis door opens with {SECRET}")
    logged("now-3", "elsewhere", "- nothing about birds")
    forget(Selection(match="albatross").check())
    texts_left = [r["text"] for r in injections.read()]
    assert not any("albatross" in t for t in texts_left) and len(texts_left) == 2
    forget(Selection(secret=SECRET).check())
    assert not any(SECRET in r["text"] for r in injections.read())
    assert any(SECRET_MARK in r["text"] for r in injections.read())
    forget(Selection(sessions=[other.session_id]).check())
    assert [r["session"] for r in injections.read()] == ["now-3"]
    assert oct(injections.log_path().stat().st_mode & 0o777) == "0o600"


def _in_flight(monkeypatch, claude_projects, project, action, which: str):
    """A session whose extraction (``which`` "extraction") or summary ("summary") calls the
    model; ``action(session_id)`` runs while the model is answering (the user says
    `recall: off`, or forgets the session)."""
    from recall.llm import backend
    from recall.memory import extract, summarize
    from recall.memory.model import parse_extraction
    from tests.support.memory import extraction

    s = Session(cwd=str(project))
    s.user("the osprey deploy needs the vpn")
    s.assistant("the osprey deploy runs through the bastion")
    s.user("and the osprey rollback?")
    s.assistant("rollback is make osprey-rollback")
    s.write(claude_projects)
    index_all()
    monkeypatch.setattr(backend, "available", lambda cfg=None: True)

    def ask(existing, text, **kw):
        action(s.session_id)
        return parse_extraction(extraction({"content": "The osprey deploy goes through the bastion."})).memories

    def ask_summary(system, prompt, cfg=None):
        action(s.session_id)
        return "Goal: deploy osprey through the bastion.", "haiku"

    monkeypatch.setattr(extract, "ask_model", ask)
    monkeypatch.setattr(summarize, "ask_model", ask_summary)
    if which == "extraction":
        return s, extract.process(s.session_id, "session-end", str(s.path(claude_projects)), str(project))
    return s, summarize.summarize(s.session_id, str(s.path(claude_projects)), str(project))


@pytest.mark.parametrize("which", ["extraction", "summary"])
@pytest.mark.parametrize("how", ["recall: off", "forget --session"])
def test_an_extraction_or_summary_in_flight_is_not_written(claude_projects, project, monkeypatch, which, how):
    from recall.memory import summaries

    def act(sid):
        if how == "recall: off":
            ledger.switch_off([sid])
        else:
            forget(Selection(sessions=[sid]).check())

    s, out = _in_flight(monkeypatch, claude_projects, project, act, which)
    if which == "extraction":
        assert out.calls_ok == 1 and out.added == 0
        assert ("switched off" if how == "recall: off" else "forgotten") in out.stopped
    else:
        assert out["status"] == "refused"
    assert not (store.state_path(project).exists() and store.load(project).memories)
    assert summaries.get(s.session_id) is None and summaries.pending() == []
    if how != "recall: off":
        assert texts("osprey") == []


def test_a_summary_of_a_forgotten_session_is_never_written(claude_projects, project, monkeypatch):
    """Issue 35 item 4: a summary waiting for the model when its session is forgotten (the
    session's last lines came after the forget) is not written, and never shared."""
    from datetime import datetime, timedelta, timezone

    from indexer.archive import Tombstones
    from recall.memory import summaries, summarize

    s = Session(cwd=str(project), start=datetime.now(timezone.utc) - timedelta(minutes=5))
    s.user("the osprey deploy needs the blue bucket")
    path = s.write(claude_projects)
    index_all()
    forget(Selection(sessions=[s.session_id]).check())
    s.clock = datetime.now(timezone.utc) + timedelta(minutes=1)  # the session went on after the forget
    n = len(s.lines)
    s.assistant("the osprey deploy reads the blue bucket at boot")
    s.user("and the osprey rollback uses the green one")
    s.append(claude_projects, n)

    def model(system, prompt, cfg=None):
        assert "osprey" in prompt
        return "Goal: the osprey deploy buckets.", "stand-in"

    monkeypatch.setattr(summarize, "ask_model", model)
    res = summarize.summarize(s.session_id, str(path), str(project))
    assert res["status"] == "refused" and "forgotten" in res["problem"]
    assert summaries.get(s.session_id) is None
    assert s.session_id in Tombstones(paths.archive_dir() / "forgotten.json").sessions


# a forget's selection stands for what is archived after it (issue 35 item 5) -----------------------------------
def _forgotten_file() -> str:
    return (paths.archive_dir() / "forgotten.json").read_text()


def test_match_covers_lines_archived_after_the_forget(claude_projects, project):
    """A backfill (or a session still writing) brings matching lines after the command: they
    never reach the archive or the index, nor come back with a rebuild."""
    s = Session(cwd=str(project))
    s.user("how do we reach the walrus billing host")
    s.assistant("the walrus billing host is behind the vpn")
    s.write(claude_projects)
    late = Session(cwd=str(project))  # a session the backfill has not read yet
    late.user("is the Walrus billing host up again")
    late.assistant("the billing host answers on 8443 now")
    late.user("and the giraffe deploy script")
    index_all()
    out = forget(Selection(match="walrus billing").check())
    assert out["messages"] == 2
    late.write(claude_projects)
    n = len(s.lines)
    s.user("one more about the WALRUS BILLING host")
    s.user("and the heron queue drains nightly")
    s.append(claude_projects, n)
    index_all()
    assert not any("walrus billing" in t.lower() for t in texts("walrus billing") + archived())
    assert len(texts("giraffe")) == 1 and len(texts("heron")) == 1
    assert len(texts("8443")) == 1  # a line without the text stays
    assert "walrus" not in _forgotten_file().lower()  # the rule holds no text
    index_all(rebuild=True)
    assert not any("walrus billing" in t.lower() for t in texts("walrus billing")) and len(texts("heron")) == 1
    from recall.memory.extract import read_new

    entries, _end, _cwd = read_new(late.path(claude_projects), 0)
    assert [e for e in entries if "walrus billing" in e.text.lower()] == []  # nor does extraction read them


def test_secret_is_cut_from_lines_archived_after_the_forget(claude_projects, project):
    s = Session(cwd=str(project))
    s.user(f"the staging door opens with {SECRET} for the pelican admin")
    s.write(claude_projects)
    index_all()
    out = forget(Selection(secret=SECRET).check())
    assert out["rewritten"] == 1
    n = len(s.lines)
    s.assistant(f"logged in to the pelican admin with {SECRET} just now")
    s.append(claude_projects, n)
    other = Session(cwd=str(project))
    other.user(f"paste {SECRET} into the form and the osprey form accepts it")
    other.write(claude_projects)
    index_all()
    assert texts("orchid") == [] and texts("hunter2") == []
    assert not any(SECRET in t for t in archived())
    assert any("osprey form accepts" in t and SECRET_MARK in t for t in archived())  # the rest kept
    assert len(texts("osprey")) == 1
    assert SECRET not in _forgotten_file() and "ORCHID" not in _forgotten_file()
    for p in paths.archive_dir().rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p
    index_all(rebuild=True)
    assert texts("orchid") == [] and len(texts("osprey")) == 1


def test_forget_rules_find_the_text_and_only_it():
    from indexer.forget_rules import Rule

    rule = Rule.of("secret", "s3cr3t-Value")
    assert (
        rule.cut("a s3cr3t-Values3cr3t-Value, s3cr3t-Valu b")
        == "a [redacted:forgotten][redacted:forgotten], s3cr3t-Valu b"
    )
    assert rule.cut("a s3cr3t-value b") == "a s3cr3t-value b"  # a secret is case-sensitive
    match = Rule.of("match", "Walrus Host")
    assert match.holds("the WALRUS HOST is up") and not match.holds("the walrus  host")
    assert match.is_of("match", "walrus host") and not match.is_of("match", "walrus hosts")
