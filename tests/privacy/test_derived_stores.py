"""The stores that hold text derived from history (the synthesis cache, the injection log, the
usage log, error texts) follow every privacy control: the five forms of `recall forget`,
`recall exclude add`, a `recall: off` session, the re-redaction pass, and expiry."""

from __future__ import annotations

import json
import os
import time

import pytest

from indexer.forgetting import Selection
from indexer.ingest import Indexer, index_all
from recall.core import paths
from recall.llm import errors, messages_api, synthesis, usage
from recall.privacy.forget import attach, forget_everywhere
from recall.prompt import injections
from tests.support.factory import BASE_TIME, Session
from tests.support.memory import make_project

SECRET = "hunter2-plum-ORCHID"


def cached() -> list[str]:
    d = synthesis.cache_dir()
    return sorted(p.read_text() for p in d.glob("*.json")) if d.is_dir() else []


@pytest.fixture
def shop(tmp_path, claude_projects):
    project = make_project(tmp_path, "shop")
    s = Session(cwd=str(project))
    s.user(f"the walrus billing host door opens with {SECRET}")
    s.assistant("noted: the walrus billing host")
    s.write(claude_projects)
    index_all()
    synthesis.cache_put("b" * 64, f"- The walrus billing host door opens with {SECRET} [2026-11-01 session x]")
    return project, s


@pytest.mark.parametrize("form", ["session", "project", "before", "match", "secret"])
def test_every_forget_form_empties_the_synthesis_cache(shop, form):
    project, s = shop
    sel = {
        "session": Selection(sessions=[s.session_id]),
        "project": Selection(project=str(project)),
        "before": Selection(before=(BASE_TIME.timestamp() + 86400)),
        "match": Selection(match="walrus"),
        "secret": Selection(secret=SECRET),
    }[form]
    assert cached()
    with Indexer() as ix:
        out = forget_everywhere(ix, sel.check())
    assert cached() == [] and out["synthesis_cache"] == 1
    index_all(rebuild=True)  # and nothing brings it back
    assert cached() == []


def test_expired_cache_entries_are_deleted_not_only_skipped(shop):
    path = next(synthesis.cache_dir().glob("*.json"))
    old = time.time() - synthesis.CACHE_TTL_SECONDS - 60
    os.utime(path, (old, old))
    assert synthesis.cache_get(path.stem) is not None or True  # read or not, the bytes are what matters
    assert synthesis.prune() == 1 and not path.exists()
    synthesis.cache_put("c" * 64, "fresh")
    os.utime(synthesis.cache_dir() / ("c" * 64 + ".json"), (old, old))
    synthesis.cache_put("d" * 64, "another")  # a write prunes what expired too
    assert [p.stem[0] for p in synthesis.cache_dir().glob("*.json")] == ["d"]


def test_recall_off_empties_the_cache_and_the_log_of_that_session(shop, claude_projects):
    project, s = shop
    injections.append(
        {
            "t": time.time(),
            "project": str(project),
            "session": s.session_id,
            "outcome": "raw",
            "hits": [],
            "text": "- the walrus billing host",
        }
    )
    start = len(s.lines)
    s.user("recall: off")
    s.append(claude_projects, start)
    with Indexer() as ix:
        attach(ix)
        ix.run(paths.transcript_roots())
    assert cached() == [] and injections.read() == []


def test_exclude_add_drops_what_the_log_and_the_cache_drew_from_the_project(shop, tmp_path):
    from recall.cli.app import run

    project, s = shop
    elsewhere = make_project(tmp_path, "elsewhere")
    injections.append(
        {
            "t": time.time(),
            "project": str(elsewhere),
            "session": "now-1",
            "outcome": "raw",
            "hits": [{"session": s.session_id, "score": 1.0}],
            "text": "- the walrus billing host",
        }
    )
    injections.append(
        {
            "t": time.time(),
            "project": str(project / "src"),
            "session": "now-2",
            "outcome": "raw",
            "hits": [],
            "text": "- something said in the shop",
        }
    )
    injections.append(
        {
            "t": time.time(),
            "project": str(elsewhere),
            "session": "now-3",
            "outcome": "raw",
            "hits": [],
            "text": "- the heron queue",
        }
    )
    assert run(["exclude", "add", str(project)]) == 0
    assert [r["session"] for r in injections.read()] == ["now-3"]
    assert cached() == []


def test_the_re_redaction_pass_reaches_the_injection_log_and_the_cache(shop, monkeypatch):
    from indexer import reredact_archive
    from recall.privacy import redaction_pass as pass_

    token = "shpat_" + "3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c"
    injections.append(
        {
            "t": time.time(),
            "project": "/x",
            "session": "now",
            "outcome": "raw",
            "hits": [],
            "text": f"- the admin token is {token}",
        }
    )
    reredact_archive.mark_version(paths.archive_dir(), 1)
    with Indexer() as ix:
        pass_.run(ix)
    assert token not in json.dumps(injections.read()) and "[redacted:" in injections.read()[0]["text"]
    assert cached() == []


def test_the_usage_log_stays_small_and_its_figures_exact():
    for i in range(10_000):
        usage.record_usage("claude-haiku-4-5", 100, 10, "recall" if i % 2 else "extraction")
    lines = usage.usage_path().read_text().splitlines()
    assert len(lines) < 2_500  # 10,021 lines after 10,000 prompts before
    s = usage.usage_summary()
    assert s["calls"] == 10_000 and s["input_tokens"] == 1_000_000 and s["output_tokens"] == 100_000
    assert s["by_purpose"] == {"recall": 5_000, "extraction": 5_000} and s["today_calls"] == 10_000
    assert usage.calls_today(("extraction",)) == 5_000
    assert oct(usage.usage_path().stat().st_mode & 0o777) == "0o600"


def test_a_key_echoed_back_by_an_endpoint_is_not_logged_or_kept(monkeypatch, standin, tmp_path, caplog):
    from recall.core import log
    from tests.support.standin import error

    key = "sk-proxy-Zq8vN3kL0pW7xR2tY5uB9mC4"  # a proxy's key of no known shape
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    messages_api._clients.clear()
    standin.script(error(401, f"invalid x-api-key: {key}"))
    with pytest.raises(errors.ModelError) as exc:
        messages_api.api_complete("system", "prompt", purpose="recall", timeout=5)
    assert key not in str(exc.value) and "[redacted:" in str(exc.value)
    assert exc.value.__cause__ is None
    log.setup()
    log.get("memory").warning("extraction stopped: %s", exc.value)
    logs = "".join(p.read_text() for p in paths.log_dir().glob("*") if p.is_file())
    assert key not in logs


def test_segment_files_a_merge_wrote_are_private_once_the_writer_closes(claude_projects):
    index_all()
    merged = paths.index_dir() / "0123456789abcdef0123456789abcdef.store"  # what a background merge leaves
    with Indexer():
        fd = os.open(merged, os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)
        os.chmod(merged, 0o644)
    assert oct(merged.stat().st_mode & 0o777) == "0o600"
