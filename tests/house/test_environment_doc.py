"""docs/environment.md lists every RECALL_* environment variable the code reads (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# in Python, any string literal naming one (os.environ.get("RECALL_…"), a constant holding the
# name, an environment built for a child); in the shell, $RECALL_… / ${RECALL_…}
PY_READ = re.compile(r"""["'](RECALL_[A-Z0-9_]+)["']""")
SH_READ = re.compile(r"\$\{?(RECALL_[A-Z0-9_]+)")
# literals that are no variable of their own
NOT_VARIABLES = {"RECALL_PLUGIN"}  # a prefix, startswith(("CLAUDE", "RECALL_PLUGIN")), of RECALL_PLUGIN_DATA


def read_variables() -> dict[str, str]:
    found: dict[str, str] = {}
    files = [
        *ROOT.glob("recall/**/*.py"),
        *ROOT.glob("indexer/**/*.py"),
        *ROOT.glob("benchmarks/**/*.py"),
        *ROOT.glob("tests/**/*.py"),
        ROOT / "hooks" / "recall",
        ROOT / ".ci" / "run",
    ]
    for path in files:
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (PY_READ, SH_READ):
            for name in pattern.findall(text):
                if name not in NOT_VARIABLES:
                    found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def documented() -> set[str]:
    text = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(RECALL_[A-Z0-9_]+)` \|", text, re.M))


def test_every_environment_variable_the_code_reads_is_on_the_page():
    read = read_variables()
    assert {"RECALL_HOME", "RECALL_NO_SERVICE", "RECALL_KILL_AT", "RECALL_PYTHON"} <= set(read)  # the scan works
    missing = {name: where for name, where in read.items() if name not in documented()}
    assert not missing, f"read but not in docs/environment.md: {missing}"


def test_the_page_lists_no_variable_nothing_reads():
    stale = documented() - set(read_variables())
    assert not stale, f"docs/environment.md lists variables no code reads: {sorted(stale)}"
