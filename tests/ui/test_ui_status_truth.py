"""The page's Status says whose environment it checked and does not wait on the checks (issue
44 item 3): its doctor runs in the service's environment, so the checks that depend on the
user's shell (the `recall` on PATH, the key and backend it would use, the hook and Claude Code
runs) are left out and the page says so; the last result is shown at once while a new run goes
on; the model backend row names the backend today's calls really went to."""

from __future__ import annotations

import threading

import pytest

from recall.core import caller
from recall.llm import usage
from recall.ui import pages, views
from tests.support.ui import Client, serving

HOOK_ENV = {"ANTHROPIC_API_KEY": "sk-ant-api03-hook-key-not-real"}
WHERE = "Checked in the service's environment, not your shell's"


@pytest.fixture
def page(monkeypatch):
    monkeypatch.setattr(views, "_doctor", {})  # no result from another test
    with serving() as srv:
        yield srv, Client(srv.port, srv.code())


def body(text: str) -> str:
    return text.split("<main>", 1)[-1]


def test_the_pages_doctor_leaves_out_the_checks_that_depend_on_the_shell(page, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{tmp_path / 'no-recall-here'}:/usr/bin:/bin")  # the service's PATH: no `recall`
    srv, c = page
    text = body(c.get("/fragment/doctor")[2])
    assert WHERE in text and "<code>recall doctor</code> in a terminal runs them" in text
    assert "no `recall` on your PATH" not in text and "recall command" not in text
    assert "</b> API key:" not in text and "</b> model backend:" not in text
    checks = views.doctor()["checks"]
    names = {c["name"] for c in checks}
    assert "config" in names and "index" in names
    assert not names & {"recall command", "API key", "model backend", "UserPromptSubmit hook run"}


def test_the_status_page_shows_the_last_checks_at_once_while_new_ones_run(page, monkeypatch):
    srv, c = page
    gate, started = threading.Event(), threading.Semaphore(0)
    runs = []

    def slow_doctor() -> dict:
        runs.append(1)
        started.release()
        gate.wait(60)
        return {"checks": [{"name": "index", "ok": False, "detail": f"run {len(runs)}", "fix": "x"}], "error": ""}

    monkeypatch.setattr(views, "_run_doctor", slow_doctor)
    text = body(c.get("/status")[2])  # nothing had yet: the page answers, the checks run behind it
    assert "checking…" in text and 'data-load="1"' in text
    assert started.acquire(timeout=60) and runs == [1]
    gate.set()
    assert "index: run 1" in body(c.get("/fragment/doctor")[2])
    gate.clear()
    views._doctor["at"] -= 3600  # an hour old: shown at once, run again meanwhile
    text = body(c.get("/status")[2])
    assert "checking…" not in text and "index: run 1" in text and WHERE in text
    assert started.acquire(timeout=60) and len(runs) == 2  # run 2 started, and waits
    assert "index: run 1" in body(c.get("/fragment/doctor")[2])  # still the last one meanwhile
    gate.set()
    with views._doctor_running:  # run 2 done
        pass
    assert "index: run 2" in body(c.get("/fragment/doctor")[2])


def test_the_model_backend_row_names_what_todays_calls_used(page, monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # the service: no key, no claude
    srv, c = page
    with caller.use(HOOK_ENV):
        for purpose in ["recall"] * 30 + ["extraction"] * 3:
            usage.record_usage("claude-haiku-4-5", 900, 120, purpose, backend="api", key="ANTHROPIC_API_KEY")
    text = c.get("/fragment/status")[2]
    assert (
        "in the service&#x27;s own environment (no hook reached it in the last day); today: api: 33 calls "
        "succeeded today (prompt hook 30, memory 3; key ANTHROPIC_API_KEY from a hook&#x27;s environment)"
    ) in text
    assert "extraction on" in text  # it ran, with the hooks' credentials
    caller.remember(HOOK_ENV)
    try:
        text = c.get("/fragment/status")[2]
        assert (
            "model.backend = auto: api (an Anthropic key from ANTHROPIC_API_KEY), with the last hook&#x27;s credentials"
            in text
        )
    finally:
        caller._remembered.clear()
    assert pages.DOCTOR_WHERE
