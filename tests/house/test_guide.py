"""docs/CONTRIBUTING.md is held by the code (issue 45 item 7): what it says to do for a new
command, source, hook setting or benchmark is what the code needs, each step written once, and it
names no tool a contributor does not have."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from indexer.sources import SHARED
from recall.cli.app import COMMAND_MODULES
from recall.core import config, settings

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "CONTRIBUTING.md").read_text(encoding="utf-8")

# What every contributor has before the test command ran (the guide's first block starts there).
BASE_TOOLS = {"python", "python3", "pip", "git", "sh", "apt-get"}


def section(title: str) -> str:
    """The text of the guide's ``## title`` section, up to the next ``## ``."""
    heads = [m for m in re.finditer(r"^## (.+)$", GUIDE, re.M)]
    found = [i for i, m in enumerate(heads) if m.group(1).strip() == title]
    assert len(found) == 1, f"docs/CONTRIBUTING.md has {len(found)} sections '## {title}'"
    i = found[0]
    end = heads[i + 1].start() if i + 1 < len(heads) else len(GUIDE)
    return GUIDE[heads[i].end() : end]


def spans(text: str) -> set[str]:
    """Every ``code span`` of ``text``, and each one without its ``(...)``."""
    out = set(re.findall(r"`([^`\n]+)`", text))
    return out | {re.sub(r"\(.*\)$", "", s) for s in out}


# -------------------------------------------------------------------------- Add a command
def test_every_command_module_is_in_the_app():
    """A module of recall/cli/commands/ left out of COMMAND_MODULES is a command the app never
    has: `recall <name>` would run a search for "<name>"."""
    on_disk = {p.stem for p in (ROOT / "recall" / "cli" / "commands").glob("*.py") if p.stem != "__init__"}
    assembled = {m.__name__.rpartition(".")[2] for m in COMMAND_MODULES}
    assert on_disk - assembled == set(), (
        f"command modules missing from COMMAND_MODULES in recall/cli/app.py: {sorted(on_disk - assembled)} "
        "(docs/CONTRIBUTING.md, 'Add a command')"
    )
    for module in COMMAND_MODULES:
        typer_app = module.commands
        assert typer_app.registered_commands or typer_app.registered_groups, f"{module.__name__} adds no command"


# -------------------------------------------------------------------------- Add a source
def _keyed_by_sources() -> list[str]:
    """The tables of indexer/sources/__init__.py that hold one entry per source."""
    from indexer import sources

    names = set(sources.NAMES)
    return sorted(
        name
        for name, value in vars(sources).items()
        if name.isidentifier()
        and isinstance(value, (tuple, dict))
        and (set(value) == names)
        and not name.startswith("__")
    )


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top (functions, classes, assignments)."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def test_adding_a_source_is_written_once_and_whole():
    """One 'Add a source' in the guide; it names every table a source joins and every name a
    source module has; the other places that speak of it point to it."""
    text = section("Add a source (another agent's sessions)")
    named = spans(text)
    tables = _keyed_by_sources()
    assert {"NAMES", "LABELS"} <= set(tables), tables
    missing = [t for t in tables if t not in named]
    assert not missing, f"'Add a source' does not name indexer/sources/__init__.py's {missing}"
    assert "check_agent" in named and "recall/search/run.py" in named  # the fast path's check of --agent
    folder = ROOT / "indexer" / "sources"
    sources = [p for p in folder.glob("*.py") if p.stem != "__init__" and p.stem not in SHARED]
    shape = set.intersection(*(_defined(p) for p in sources))
    assert {"NAME", "LABEL", "roots", "read"} <= shape, shape
    missing = sorted(n for n in shape if n not in named)
    assert not missing, f"'Add a source' does not name what every source module has: {missing}"
    headings = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
        for m in re.finditer(
            r"^#+ .*add(ing)? (a|another|the next) (source|agent).*$", p.read_text(encoding="utf-8"), re.I | re.M
        )
    ]
    assert len(headings) == 1, headings
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    sentence = re.search(r"another agent's sessions are[^;]*;", architecture)
    assert sentence and "CONTRIBUTING.md#add-a-source" in sentence.group(0), sentence
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert "docs/CONTRIBUTING.md" in doc


def _strings(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_adding_a_source_is_adding_its_module():
    """The rule the section states: no module but a source's own names it (its ``NAME`` or its
    ``LABEL`` as a string of the code) in the registry, the indexer, the search's check of
    ``--agent`` or ``recall show``: each one's tables are read from the modules. Claude Code's name
    is the registry's ``DEFAULT`` (what recall is for: never turned off)."""
    from indexer import sources

    assert "one module" in section("Add a source (another agent's sessions)")
    code = [
        *(ROOT / "indexer").rglob("*.py"),
        ROOT / "recall" / "search" / "run.py",
        ROOT / "recall" / "memory" / "sessions.py",
    ]
    for name in sources.NAMES:
        own = ROOT / (sources.module(name).__name__.replace(".", "/") + ".py")
        for path in code:
            if path == own:
                continue
            said = _strings(path) & ({name, sources.LABELS[name]} - {sources.DEFAULT})
            assert not said, f"{path.relative_to(ROOT)} names the source {sorted(said)}: the registry reads it"


# -------------------------------------------------------------------------- Add a hook setting
def _settings(tree: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        if isinstance(value, dict):
            out += _settings(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def test_every_setting_is_documented_with_the_config_command():
    """The guide's step 3 of 'Add a hook setting': a setting of config.DEFAULTS that docs/cli.md
    does not name is one no user can find (``exclude`` has its command's section)."""
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [key for key in _settings(config.DEFAULTS) if f"`{key}`" not in cli]
    assert not missing, f"settings docs/cli.md does not name: {missing}"


def test_adding_a_hook_setting_names_what_the_code_has():
    """The section names the default's home and the one reader of the hook's section, and both
    are there."""
    named = spans(section("Add a hook setting"))
    assert "HOOK_DEFAULTS" in named and "HookSettings" in named and "recall/core/settings.py" in named
    assert {"HOOK_DEFAULTS", "HookSettings", "MEMORY_DEFAULTS", "MemorySettings"} <= _defined(
        ROOT / "recall" / "core" / "settings.py"
    )
    assert 'DEFAULTS["hook"]' in named and "recall/core/config.py" in named
    assert config.DEFAULTS["hook"] == settings.HookSettings.defaults()
    assert "hook_settings" in named and "recall/prompt/settings.py" in named
    assert "hook_settings" in _defined(ROOT / "recall" / "prompt" / "settings.py")
    for path in re.findall(r"`((?:recall|indexer|tests)/[\w/.]*)`", section("Add a hook setting")):
        assert (ROOT / path).exists(), path


# -------------------------------------------------------------------------- Add a benchmark
def _has_main(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            return True
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def test_the_benchmark_index_names_every_benchmark():
    """benchmarks/__init__.py is the index (the guide's 'Add a benchmark'): every module there
    that runs (a ``main``) is named in it."""
    index = ast.get_docstring(ast.parse((ROOT / "benchmarks" / "__init__.py").read_text(encoding="utf-8"))) or ""
    named = set(re.findall(r"``(\w+)``", index))
    runs = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__" and _has_main(p))
    assert len(runs) > 20 and "run" in runs
    missing = [name for name in runs if name not in named]
    assert not missing, f"benchmarks with a main that benchmarks/__init__.py's index does not name: {missing}"


# -------------------------------------------------------------------------- the tools it names
def _test_tools() -> set[str]:
    """The executables the test extra installs (console scripts, and a wheel's own binaries)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    tools = set(project.get("scripts", {}))
    for requirement in project["optional-dependencies"]["test"]:
        dist = importlib.metadata.distribution(re.match(r"[A-Za-z0-9_.-]+", requirement).group(0))
        tools |= {ep.name for ep in dist.entry_points if ep.group == "console_scripts"}
        tools |= {Path(f).name for f in dist.files or () if Path(f).parent.name in ("bin", "Scripts")}
    return tools


def commands(text: str) -> list[str]:
    """The command lines of ``text``: each line of a ``sh`` block (split at ``&&``, ``|``, ``;``) and
    each code span that reads as a command (a word, then its arguments; not ``x = y``)."""
    out = []
    for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S):
        for line in block.splitlines():
            out += [part.strip() for part in re.split(r"&&|\|\||[|;]", line) if part.strip()]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`\n]+)`", prose):
        words = span.split()
        if len(words) > 1 and re.fullmatch(r"[\w./-]+", words[0]) and not re.match(r"[=(:]", words[1]):
            out.append(span)
    return out


def test_the_guide_names_no_tool_a_contributor_does_not_have():
    """Each command the guide gives is the project's own (a file of the repository, its console
    script), one the test extra installs, or one every contributor has (python, git)."""
    have = _test_tools() | BASE_TOOLS
    assert {"recall", "pytest", "ruff"} <= have
    given = commands(GUIDE)
    assert any(c.startswith("ruff check") for c in given) and any("pytest" in c for c in given)
    unknown = []
    for line in given:
        word = line.split()[0]
        if (ROOT / word).exists() and "/" in word and not word.startswith(".venv"):
            continue  # a file of the repository: `.ci/run`, `tests/prompt/test_hook.py -k trivial`
        if Path(word).name in have:
            continue  # `.venv-test/bin/python`: the virtualenv the guide's first command makes
        unknown.append(line)
    assert not unknown, f"docs/CONTRIBUTING.md names commands a contributor does not have: {unknown}"


# -------------------------------------------------------------------------- git blame
def test_blame_passes_over_the_tree_wide_format():
    """.git-blame-ignore-revs lists whole commits, each one that changed only the form of the tree,
    and the guide says how to tell git."""
    lines = (ROOT / ".git-blame-ignore-revs").read_text(encoding="utf-8").splitlines()
    revs = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    assert revs and all(re.fullmatch(r"[0-9a-f]{40}", r) for r in revs), revs
    assert "git config blame.ignoreRevsFile .git-blame-ignore-revs" in GUIDE
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return  # a source tree without its history: the hashes' form is what can be checked
    shallow = subprocess.run(
        [git, "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    for rev in revs:
        shown = subprocess.run(
            [git, "-C", str(ROOT), "show", "-s", "--format=%s", rev], capture_output=True, text=True, timeout=30
        )
        if shown.returncode != 0 and shallow == "true":
            continue  # a shallow clone does not hold it
        assert shown.returncode == 0, f"{rev}: {shown.stderr.strip()}"
        assert "format" in shown.stdout, f"{rev} is not a format commit: {shown.stdout.strip()}"
