"""The floor map in docs/architecture.md holds for the code (issue 31): read every import with
``ast`` (lazy imports inside functions too) and check the rules the map states.

- ``recall/core/`` imports nothing of ours but itself and the package's ``__version__``, and
  nothing outside the standard library (floor 1: what runs before recall is installed);
- every folder imports only the folders its row of the table lists ("everything below": the
  rows above it in the table, which runs from the bottom floor up), and a row lists only rows
  above it, so no arrow runs back up and no circle closes;
- a module of ours named whole in a string (``"recall.ui.op"``: loaded by ``importlib``, looked
  up in ``sys.modules``, put in a list someone loads) is an import of it like any other (issue
  45): a floor cannot reach up by a name the map does not see. A bare package (``"recall"``)
  is its face, not a module, and ``-m name`` starts another process, which imports nothing here;
- no module of ``recall/cli/commands/`` imports another command module;
- no module uses another's private name (``from x import _name``, ``x._name``);
- every module of ours is in a folder the table has a row for, every folder has its row, and
  the row says what the folder holds without listing its modules (issue 38): the modules are
  listed in their package's docstring, each of them, so the two never drift apart.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
OURS = ("recall", "indexer")
PACKAGE_FACE = {"recall", "recall.__version__"}  # recall/__init__.py: the version, nothing else


def table() -> list[tuple[str, str, str]]:
    """(folder, holds, imports from) of each row of the "Where things live" table, in order."""
    rows = []
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Where things live") :]
    for line in section.splitlines():
        m = re.match(r"^\| `([^`]+)` \| (.*) \| (.*) \|$", line)
        if m:
            rows.append((m.group(1), m.group(2), m.group(3)))
    return rows


def place(module: str, rows: list[tuple[str, str, str]]) -> str | None:
    """The row (folder or file) a dotted module belongs to: the longest matching one."""
    path = module.replace(".", "/")
    matches = [
        (len(key), folder)
        for folder, _, _ in rows
        for key in [folder.rstrip("/").removesuffix(".py")]
        if path == key or path.startswith(key + "/")
    ]
    return max(matches)[1] if matches else None


def allowed(rows: list[tuple[str, str, str]]) -> dict[str, set[str]]:
    """What each row may import: its own folder plus the folders its third column names."""
    out: dict[str, set[str]] = {}
    folders = [f for f, _, _ in rows]
    for i, (folder, _, imports) in enumerate(rows):
        ok = {folder}
        if "everything below" in imports:
            ok |= set(folders[:i])
        for name in re.findall(r"`([^`]+)`", imports):
            full = name if name.startswith(("recall/", "indexer/")) else f"recall/{name}"
            match = [f for f in folders if f == full or f.rstrip("/") == full.rstrip("/")]
            assert match, f"docs/architecture.md: row {folder} imports from `{name}`, which has no row"
            ok |= set(match)
        out[folder] = ok
    return out


@functools.cache
def modules() -> dict[str, Path]:
    out = {}
    for top in OURS:
        for path in (ROOT / top).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def named_in_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module of ours a string names whole (``"recall.ui.op"``; not a file name such as
    ``"recall.log"``), but the one after ``-m`` in a list or tuple (``[python, "-m",
    "recall.entry"]``: another process runs it)."""
    known = modules()
    run_by_another = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            for flag, name in zip(node.elts, node.elts[1:]):
                if isinstance(flag, ast.Constant) and flag.value == "-m":
                    run_by_another.add(id(name))
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "." in node.value
        and node.value in known
        and id(node) not in run_by_another
    )


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """Every module of ours that ``path`` imports (at any depth in the file), by an import
    statement or by its name in a string (``named_in_strings``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from recall.setup import install` imports recall.setup.install
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for name in names:
            if name.split(".")[0] in OURS:
                found.append((node.lineno, name))
    return found + named_in_strings(tree)


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in known:
            return cand
        parts.pop()
    return None


def test_every_module_has_a_row_and_every_row_is_a_place():
    rows = table()
    assert len(rows) >= 10, "the table of docs/architecture.md was not found"
    homeless = [m for m in modules() if place(m, rows) is None and m not in OURS]
    assert not homeless, f"modules in no row of docs/architecture.md's table: {homeless}"
    for folder, _, _ in rows:
        assert (ROOT / folder).exists(), f"docs/architecture.md has a row for {folder}, which does not exist"


def packages() -> list[Path]:
    """Every package folder of ours below the top one (``recall/`` itself is the map's to list)."""
    return sorted(
        init.parent for top in OURS for init in (ROOT / top).rglob("__init__.py") if init.parent != ROOT / "recall"
    )


def children(folder: Path) -> list[str]:
    """The modules (``name``) and sub-packages (``name/``) of a package folder."""
    out = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(("_", ".")):
            continue
        if child.suffix == ".py":
            out.append(child.stem)
        elif child.is_dir() and (child / "__init__.py").exists():
            out.append(child.name + "/")
    return out


def test_every_folder_has_its_row():
    """Each floor (a package right below ``recall/``, and ``indexer/``) has a row of its own."""
    folders = {
        f"{p.relative_to(ROOT).as_posix()}/" for p in packages() if p.parent == ROOT / "recall" or p.parent == ROOT
    }
    missing = sorted(folders - {f for f, _, _ in table()})
    assert not missing, f"folders with no row in docs/architecture.md's table: {missing}"


def test_every_module_is_named_in_its_package_docstring():
    """Each module (and sub-package) of a package is named, ``in double backticks`` or at the
    head of a layout line, in the docstring of its ``__init__.py``: a new module is placed on
    the map when it is made."""
    unnamed = []
    for folder in packages():
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")), clean=False) or ""
        for name in children(folder):
            bare = name.rstrip("/")
            if not re.search(rf"``{re.escape(bare)}/?``|^\s+{re.escape(bare)}/?\s", doc, re.M):
                unnamed.append(f"{folder.relative_to(ROOT).as_posix()}/{name}")
    assert not unnamed, f"modules their package's docstring (its __init__.py) does not name: {unnamed}"


def test_every_module_a_package_docstring_lists_exists():
    """The head of each line of a docstring's module list (two spaces in, then the name) is a
    module of that package: a module moved or deleted leaves no stale line behind."""
    stale = []
    for folder in packages():
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")), clean=False) or ""
        names = {n.rstrip("/") for n in children(folder)} | {d.name for d in folder.iterdir() if d.is_dir()}
        for m in re.finditer(r"^  (?:``)?([A-Za-z_][\w]*)/?(?:``)?  ", doc, re.M):
            if m.group(1) not in names:
                stale.append(f"{folder.relative_to(ROOT).as_posix()}: {m.group(1)}")
    assert not stale, f"package docstrings list modules that are not there: {stale}"


def test_the_map_lists_no_modules():
    """A row says what its folder holds in a sentence; the module list is the package docstring's."""
    listed = []
    for folder, holds, _ in table():
        base = ROOT / folder
        if not folder.endswith("/") or not base.is_dir():
            continue
        names = {n.rstrip("/") for n in children(base)}
        for token in re.findall(r"`([^`]+)`", holds):
            if token.rstrip("/").removesuffix(".py") in names:
                listed.append(f"{folder}: `{token}`")
    assert not listed, f"docs/architecture.md's table names modules (list them in the package docstring): {listed}"


def test_each_folder_imports_only_what_its_row_lists():
    rows = table()
    may = allowed(rows)
    known = modules()
    wrong = []
    for module, path in known.items():
        here = place(module, rows)
        if here is None:
            continue
        for line, name in imports_of(path, module):
            target = resolve(name, known)
            if target is None:
                continue
            there = place(target, rows)
            if there is not None and there not in may[here]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({here}) imports {target} ({there})")
    assert not wrong, "imports the map does not allow:\n" + "\n".join(sorted(set(wrong)))


def test_the_map_points_only_down():
    """A row names only rows above it in the table (the floors below it), so the imports the
    map allows hold no arrow back up and no circle."""
    rows = table()
    folders = [f for f, _, _ in rows]
    up = [
        f"{folder} imports from {other}"
        for i, (folder, _, _) in enumerate(rows)
        for other in allowed(rows)[folder]
        if folders.index(other) > i
    ]
    assert not up, f"docs/architecture.md's map has arrows back up: {up}"


def test_a_module_named_in_a_string_is_an_import():
    """What loads a module by its name (a list of names for ``importlib``, ``sys.modules``) is
    seen as an import of it, so a floor that names one above it breaks the map like an import
    statement would; a file name and a ``-m`` of another process are not imports."""
    source = (
        "import importlib, subprocess, sys\n"
        'OP_MODULES = ["recall.service.ops.search", "recall.ui.op"]\n'
        "def load():\n"
        "    for name in OP_MODULES:\n"
        "        importlib.import_module(name)\n"
        '    return sys.modules.get("recall.llm.claude_code")\n'
        'LOG = "recall.log"\n'
        'subprocess.Popen([sys.executable, "-m", "recall.entry", "serve"])\n'
    )
    assert named_in_strings(ast.parse(source)) == [
        (2, "recall.service.ops.search"),
        (2, "recall.ui.op"),
        (6, "recall.llm.claude_code"),
    ]


def test_core_imports_nothing_of_ours_but_itself():
    known = modules()
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path in known.items()
        if module.startswith("recall.core")
        for line, name in imports_of(path, module)
        if not name.startswith("recall.core") and name not in PACKAGE_FACE
    ]
    assert not wrong, wrong


def test_core_is_standard_library_only():
    """Floor 1 runs before recall is installed (the plugin's runtime is built by the user's own
    ``python3``) and on every prompt: no third-party package, not even lazily."""
    wrong = []
    for path in sorted((ROOT / "recall" / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("recall", "__future__"):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not wrong, wrong


def test_indexer_imports_only_core():
    known = modules()
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path in known.items()
        if module.split(".")[0] == "indexer"
        for line, name in imports_of(path, module)
        if not name.startswith(("indexer", "recall.core")) and name != "recall"
    ]
    assert not wrong, wrong


def test_no_private_name_is_used_across_modules():
    """A name another module needs is public in its owner: no ``from x import _name`` and no
    ``x._name`` of a module of ours, from outside ``x`` (issue 38)."""
    wrong = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in OURS:
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__") and node.module != module:
                        wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {node.module}.{a.name}")
                    imported[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in OURS and a.asname:
                        imported[a.asname] = a.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
                and imported[node.value.id] in modules()
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {imported[node.value.id]}.{node.attr}")
    assert not wrong, "private names used across modules (make them public in their owner):\n" + "\n".join(wrong)


def test_no_command_module_imports_another():
    names = {p.stem for p in (ROOT / "recall" / "cli" / "commands").glob("*.py")}
    assert {"search", "index", "service"} <= names  # every command in its own module
    known = modules()
    wrong = []
    for module, path in known.items():
        if not module.startswith("recall.cli.commands."):
            continue
        for line, name in imports_of(path, module):
            target = resolve(name, known)
            if target and target.startswith("recall.cli.commands.") and target != module:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, f"{sorted(set(wrong))}: move what they share to recall/cli/command_utils.py"


def test_the_plugin_builder_needs_only_the_standard_library():
    """``recall/setup/plugin_runtime.py`` is run by path (``python3 -I``, hooks/recall) before
    recall is installed: it imports nothing of ours, and the hooks never import the setup wing."""
    known = modules()
    path = known["recall.setup.plugin_runtime"]
    assert imports_of(path, "recall.setup.plugin_runtime") == []
    assert "recall/setup/plugin_runtime.py" in (ROOT / "hooks" / "recall").read_text(encoding="utf-8")
    wrong = [
        f"{p.relative_to(ROOT)}:{line} imports {name}"
        for module, p in known.items()
        if module.startswith("recall.hooks")
        for line, name in imports_of(p, module)
        if name.startswith("recall.setup")
    ]
    assert not wrong, wrong
