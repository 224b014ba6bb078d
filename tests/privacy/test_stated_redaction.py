"""Issue 46 item 10: what someone states (``recall remember``) is redacted once, by the
function the team's copy uses too (``indexer.redact.redact_stated``): the token is cut in the
local memory, ``state.json``, the CLAUDE.md block and the team's copy alike."""

from __future__ import annotations

import json

import pytest

from indexer.redact import redact_stated
from recall.memory import store
from recall.rules import store as rules_store
from recall.team import items
from tests.support.cli import cli

TOKEN = "tok_9f8e7d6c5b4a"
SAID = f"the staging API's sandbox token: {TOKEN} (rotated every month by the billing team)"


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("RECALL_NO_SERVICE", "1")
    return project


def _team_copy(project) -> list[items.Item]:
    items._REDACTED.clear()
    return list(items.collect("this-machine", "github.com/acme/shop", [str(project)]).values())


def test_remember_cuts_a_token_in_every_copy(project, capsys):
    code, out, err = cli(capsys, "remember", "--project", str(project), "--json", SAID)
    assert code == 0, err
    said = json.loads(out)
    assert TOKEN not in said["content"] and "sandbox token: [redacted:" in said["content"]
    (mem,) = store.load(str(project)).active()
    assert TOKEN not in mem.content  # the local memory
    assert TOKEN not in store.state_path(str(project)).read_text(encoding="utf-8")  # state.json
    block = (project / "CLAUDE.md").read_text(encoding="utf-8")
    assert "sandbox token" in block and TOKEN not in block  # the CLAUDE.md block
    (shared,) = [i for i in _team_copy(project) if i.kind == "memory"]
    assert TOKEN not in shared.content  # the team's copy
    assert shared.content == mem.content  # one decision: the same text on both sides


def test_a_standing_instruction_is_cut_the_same(project, capsys):
    code, out, err = cli(
        capsys, "remember", "--project", str(project), "--json", f"always use the sandbox token: {TOKEN} in tests"
    )
    assert code == 0, err
    assert json.loads(out)["type"] == "rule"
    (rule,) = rules_store.load_all(str(project))
    assert TOKEN not in rule.text and "[redacted:" in rule.text
    assert TOKEN not in (project / ".memory" / "rules.json").read_text(encoding="utf-8")
    (shared,) = [i for i in _team_copy(project) if i.kind == "rule"]
    assert TOKEN not in shared.content


@pytest.mark.parametrize(
    "text",
    [
        SAID,
        "the shared secret = hunterplum, for the QA box",
        "remember: the deploy password was Tr0ub4dor for the old host",
        "the door code is 7r1ckyD00rC0de, the alarm PIN: 4821",  # issue 46 item 11: it reached the team too
    ],
)
def test_the_local_copy_is_never_less_redacted_than_the_team_copy(project, text):
    with store.transaction(str(project)) as state:
        out = store.add_memory(state, "context", text, origin="manual")
    (shared,) = [i for i in _team_copy(project) if i.kind == "memory"]
    assert out.memory.content == shared.content == redact_stated(text).strip()
    assert "7r1ckyD00rC0de" not in shared.content and "4821" not in shared.content


def test_redact_stated_returns_its_input_when_nothing_changes():
    plain = "the billing tests need docker running; the token is stored hashed"
    assert redact_stated(plain) is plain
    assert TOKEN not in redact_stated(SAID)
