"""The CLAUDE.md block: budgets, redistribution, overflow, byte-for-byte preservation, modes."""

from __future__ import annotations

import os
import stat

from recall.core import config
from recall.hooks import capture
from recall.memory import briefing, store
from tests.support.memory import make_project

DAY = 86400.0
T0 = 1_790_000_000.0


def fill(project, counts: dict, now=T0, access: dict | None = None) -> store.State:
    """Distinct memories straight into the state (no dedup needed: every one is unique)."""
    with store.transaction(str(project)) as st:
        for mtype, n in counts.items():
            for i in range(n):
                m = store.Memory(
                    id=f"{mtype[:3]}{i:04d}",
                    type=mtype,
                    content=f"{mtype} fact {i}",
                    created=now,
                    updated=now,
                    access_count=(access or {}).get(mtype, {}).get(i, 0),
                )
                st.memories.append(m)
                st.touch(m)
    return store.load(str(project))


def block_lines(text: str) -> list[str]:
    s = text.index(briefing.START)
    e = text.index(briefing.END)
    return text[s : e + len(briefing.END)].splitlines()


# budgets ----------------------------------------------------------------------------------------
def test_allocation_redistributes_unused_lines():
    assert briefing.TOTAL == 140
    full = {t: 100 for t in briefing.BUDGETS}
    assert briefing.allocate(full) == briefing.BUDGETS
    # no context and few decisions: their lines go to the types that have more
    alloc = briefing.allocate(
        {"architecture": 60, "decision": 5, "pattern": 10, "gotcha": 20, "progress": 50, "context": 0}
    )
    assert alloc["decision"] == 5 and alloc["pattern"] == 10 and alloc["context"] == 0
    assert alloc["gotcha"] == 20
    assert sum(alloc.values()) == 140
    assert alloc["architecture"] > 25 and alloc["progress"] > 30
    # everything fits: nobody gets more than it has
    small = {"architecture": 3, "decision": 2, "pattern": 0, "gotcha": 1, "progress": 4, "context": 1}
    assert briefing.allocate(small) == small


def test_overflow_line_and_about_150_lines(project):
    st = fill(project, {t: 60 for t in briefing.BUDGETS})
    text = briefing.render_block(st, T0)
    lines = block_lines(text)
    assert len(lines) <= 160
    memory_lines = [ln for ln in lines if ln.startswith("- ") and "more (search with recall)" not in ln]
    overflow = [ln for ln in lines if ln.startswith("- …and")]
    assert len(memory_lines) + len(overflow) == 140
    assert "- …and 36 more (search with recall)" in lines  # architecture: 24 shown of 60
    assert "- …and 46 more (search with recall)" in lines  # context: 14 shown of 60
    # each overflow line closes its section
    for i, ln in enumerate(lines):
        if ln.startswith("- …and"):
            assert i + 1 == len(lines) - 1 or lines[i + 1] == "" or lines[i + 1] == briefing.END


def test_spare_lines_show_more_of_a_big_type(project):
    st = fill(project, {"progress": 80, "decision": 2})
    lines = block_lines(briefing.render_block(st, T0))
    progress = [ln for ln in lines if ln.startswith("- progress fact")]
    # progress's own share is 30; the 108 lines other types leave unused let all 80 show
    assert len(progress) == 80 and not any("more (search" in ln for ln in lines)


def test_ranking_by_confidence_times_usage(project):
    st = fill(project, {"gotcha": 30}, access={"gotcha": {29: 50, 28: 5}})
    section = [ln for ln in block_lines(briefing.render_block(st, T0)) if ln.startswith("- gotcha")]
    assert section[0] == "- gotcha fact 29" and section[1] == "- gotcha fact 28"


def test_decayed_memories_leave_the_briefing_but_stay_listed(project):
    with store.transaction(str(project)) as st:
        store.add_memory(st, "progress", "Half-way through the auth rewrite", now=T0)
        store.add_memory(st, "architecture", "The API lives in api/main.py", now=T0)
    st = store.load(str(project))
    assert "auth rewrite" in briefing.render_body(st, T0 + 4 * DAY)
    later = briefing.render_body(st, T0 + 5 * DAY)  # progress below 0.3
    assert "auth rewrite" not in later and "api/main.py" in later
    assert len(store.load(str(project)).active()) == 2


# the file --------------------------------------------------------------------------------------
USER_BEFORE = "# Team notes\r\n\r\nUse tabs.  Trailing spaces here:   \r\n"
USER_AFTER = "\r\n## More notes ünïcödé 数据\r\nno newline at the end"


def test_block_replaced_with_everything_outside_preserved(project):
    path = project / "CLAUDE.md"
    original = (USER_BEFORE + briefing.START + "\nold stuff\n" + briefing.END + USER_AFTER).encode()
    path.write_bytes(original)
    os.chmod(path, 0o640)
    fill(project, {"gotcha": 2})
    assert briefing.write_briefing(str(project), now=T0) == path
    data = path.read_bytes()
    assert data.startswith(USER_BEFORE.encode()) and data.endswith(USER_AFTER.encode())
    assert b"old stuff" not in data and b"- gotcha fact 0" in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    # unchanged memories: not rewritten
    mtime = path.stat().st_mtime_ns
    assert briefing.write_briefing(str(project), now=T0) is None
    assert path.stat().st_mtime_ns == mtime


def test_block_appended_when_absent_and_file_created(project):
    path = project / "CLAUDE.md"
    path.write_bytes(b"# Mine\nno trailing newline")
    fill(project, {"decision": 1})
    briefing.write_briefing(str(project), now=T0)
    data = path.read_bytes()
    assert data.startswith(b"# Mine\nno trailing newline\n\n" + briefing.START.encode())
    assert data.endswith(briefing.END.encode() + b"\n")
    other = make_project(project.parent, "fresh")
    fill(other, {"decision": 1})
    briefing.write_briefing(str(other), now=T0)
    assert (other / "CLAUDE.md").read_text().startswith(briefing.START)
    assert stat.S_IMODE((other / "CLAUDE.md").stat().st_mode) == 0o644


def test_project_directory_mode_is_left_alone(project):
    os.chmod(project, 0o755)
    fill(project, {"decision": 1})
    briefing.write_briefing(str(project), now=T0)
    assert stat.S_IMODE(project.stat().st_mode) == 0o755


def test_no_memories_no_file(project):
    assert briefing.write_briefing(str(project), store.State(project=str(project)), now=T0) is None
    assert not (project / "CLAUDE.md").exists()


def test_malformed_markers_are_left_untouched(project):
    path = project / "CLAUDE.md"
    broken = ("intro\n" + briefing.START + "\nno end marker\n").encode()
    path.write_bytes(broken)
    fill(project, {"gotcha": 1})
    assert briefing.write_briefing(str(project), now=T0) is None
    assert path.read_bytes() == broken
    assert briefing.splice((briefing.END + " then " + briefing.START).encode(), "x") is None


def test_splice_round_trip_removes_only_our_block():
    user = b"a\n\nb\n"
    with_block = briefing.splice(user, briefing.START + "\nx\n" + briefing.END)
    assert briefing.splice(with_block, None) == user


def test_local_mode_writes_claude_local_md_kept_out_of_git(project):
    (project / "CLAUDE.md").write_text("mine\n")
    fill(project, {"pattern": 2})
    briefing.write_briefing(str(project), now=T0)
    assert briefing.START in (project / "CLAUDE.md").read_text()
    config.set_value("memory.claude_md", "local")
    assert briefing.write_briefing(str(project), now=T0) == project / "CLAUDE.local.md"
    assert "- pattern fact 0" in (project / "CLAUDE.local.md").read_text()
    assert (project / "CLAUDE.md").read_text() == "mine\n"  # our old block removed, the rest intact
    assert "/CLAUDE.local.md" in (project / ".git" / "info" / "exclude").read_text().splitlines()


def test_none_mode_injects_at_session_start(project):
    fill(project, {"gotcha": 2})
    config.set_value("memory.claude_md", "none")
    out = capture.session_start({"session_id": "s", "cwd": str(project / "sub"), "source": "startup"})
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart"
    assert "- gotcha fact 1" in ctx["additionalContext"]
    assert ctx["additionalContext"].startswith("<recalled-context")
    assert not (project / "CLAUDE.md").exists()


def test_session_start_refreshes_the_file_in_claude_md_mode(project):
    (project / "sub").mkdir()
    fill(project, {"gotcha": 1})
    assert capture.session_start({"session_id": "s", "cwd": str(project / "sub"), "source": "resume"}) is None
    assert "- gotcha fact 0" in (project / "CLAUDE.md").read_text()
    assert not (project / "sub" / "CLAUDE.md").exists()  # only ever at the project root


def test_never_writes_in_home_or_outside_the_root(tmp_path, monkeypatch):
    home = tmp_path / "home"
    fill(home, {"gotcha": 1})
    assert briefing.write_briefing(str(home), now=T0) is None
    assert not (home / "CLAUDE.md").exists()
    # a session started in $HOME still gets its briefing, as context
    out = capture.session_start({"session_id": "s", "cwd": str(home)})
    assert "- gotcha fact 0" in out["hookSpecificOutput"]["additionalContext"]


def test_symlinked_claude_md_is_not_written_through(project, tmp_path):
    target = tmp_path / "elsewhere.md"
    target.write_text("outside\n")
    (project / "CLAUDE.md").symlink_to(target)
    fill(project, {"gotcha": 1})
    assert briefing.write_briefing(str(project), now=T0) is None
    assert target.read_text() == "outside\n"


def test_none_mode_takes_an_old_block_out_at_session_start(project):
    fill(project, {"gotcha": 1})
    (project / "CLAUDE.md").write_text("mine\n")
    briefing.write_briefing(str(project), now=T0)
    assert briefing.START in (project / "CLAUDE.md").read_text()
    config.set_value("memory.claude_md", "none")
    out = capture.session_start({"session_id": "s", "cwd": str(project)})
    assert "- gotcha fact 0" in out["hookSpecificOutput"]["additionalContext"]
    assert (project / "CLAUDE.md").read_text() == "mine\n"
