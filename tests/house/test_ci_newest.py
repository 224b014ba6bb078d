"""Every CI run also tests the newest Claude Code (issue 44 item 8): ``.ci/run`` installs the
version npm serves, runs the end-to-end tests against it and prints one line naming both
versions and their results; ``.ci/junit_counts.py`` words the counts; docs/cli.md's "Tested
with" table names the pinned version; tests/support/claude.py takes only the version asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import claude as cc

ROOT = Path(__file__).resolve().parents[2]
REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" time="12.5">
<testcase classname="tests.e2e.test_e2e_hook" name="a"/>
<testcase classname="tests.e2e.test_e2e_hook" name="b"><failure message="x"/></testcase>
<testcase classname="tests.e2e.test_e2e_mcp" name="c"><skipped message="y"/></testcase>
<testcase classname="tests.indexer.test_x" name="d"/>
</testsuite></testsuites>"""


def counts(*args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "junit_counts.py"), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_junit_counts_words_one_versions_e2e_results(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(REPORT)
    assert counts(str(report), "tests.e2e") == "1 passed, 1 failed, 1 skipped"
    assert counts(str(report)) == "2 passed, 1 failed, 1 skipped"
    assert counts(str(tmp_path / "missing.xml"), "tests.e2e") == "no report"
    assert counts("--total", str(report), str(report)) == "4 passed, 2 failed, 2 skipped in 25.00s"


def test_ci_runs_the_e2e_tests_again_with_the_newest_claude_code():
    run = (ROOT / ".ci" / "run").read_text()
    assert "npm view @anthropic-ai/claude-code version" in run
    assert 'RECALL_CLAUDE_CODE_VERSION="$newest" .venv-test/bin/python -m pytest tests/e2e -m e2e' in run
    assert 'echo "+ e2e: Claude Code $pinned: $pinned_summary; Claude Code ${newest:-newest}: $newest_summary"' in run
    assert run.index("newest_rc=$?") < run.index('[ "$rc" -ne 0 ] || rc=1\n        fi\n        newest_summary')


def test_the_docs_name_the_versions_tested():
    cli = (ROOT / "docs" / "cli.md").read_text()
    table = cli[cli.index("<!-- tested-with -->") :].split("\n\n", 1)[0]
    assert f"| {cc.CLAUDE_CODE_VERSION}: e2e " in table  # the pinned version, with its results


def test_the_client_is_the_version_asked_for(tmp_path, monkeypatch):
    """A cache holding 2.1.197 is no answer to a run that asks for 2.1.332: that one goes in
    ``<cache>/claude-code-2.1.332``."""
    fake = tmp_path / "cache" / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho '2.1.197 (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.delenv("RECALL_CLAUDE_CODE_VERSION", raising=False)
    assert cc.version_of(fake) == "2.1.197" and cc._works(fake)
    assert cc.install_prefix(tmp_path / "cache") == tmp_path / "cache"
    monkeypatch.setenv("RECALL_CLAUDE_CODE_VERSION", "2.1.332")
    assert not cc._works(fake) and cc._find(tmp_path / "cache") is None
    assert cc.install_prefix(tmp_path / "cache") == tmp_path / "cache" / "claude-code-2.1.332"
    monkeypatch.setenv("RECALL_CLAUDE_CODE_VERSION", "latest")
    assert cc._works(fake)
    assert cc.version_tuple("2.1.332") == (2, 1, 332) > cc.version_tuple("2.1.197") and cc.version_tuple(None) == ()
