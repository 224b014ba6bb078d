"""The command line's layout holds: app.py only assembles the commands, the service control
(recall/control/) imports neither the CLI nor the service nor typer, and sharing helpers did not
put typer on a fast path. (That no command module imports another is tests/house/test_architecture.py's.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (``from a import b`` gives ``a`` and ``a.b``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_app_only_assembles():
    tree = ast.parse((ROOT / "recall" / "cli" / "app.py").read_text(encoding="utf-8"))
    decorated = [
        n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and any("command" in ast.unparse(d) for d in n.decorator_list)
    ]
    assert decorated == []


def test_the_service_control_imports_neither_the_cli_nor_the_service():
    for p in (ROOT / "recall" / "control").glob("*.py"):
        up = {m for m in imported(p) if m.startswith(("recall.cli", "recall.service", "recall.hooks", "typer"))}
        assert not up, f"recall/control/{p.name} imports {sorted(up)}"


def test_status_while_paused_starts_without_typer(claude_projects):
    from indexer.ledger import pause

    pause(None)
    probe = (
        "import sys; from recall.entry import main; code = main(['status']); "
        "print('\\nLOADED', sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert "Capture: paused" in out.stdout, out.stderr[-500:]
    assert out.stdout.strip().endswith("LOADED []"), out.stdout[-300:]
