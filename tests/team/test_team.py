"""Team memory on a real PostgreSQL (issue 30): two recall homes (two members) share through
one server started for the suite (``tests/support/postgres.py``).

Covered: set-up and grants, what is shared and what never is (secrets, ``<private>``, an
excluded project, a ``recall: off`` session, a pause), forget and unshare as tombstones,
row-level security (a member without a grant sees nothing), ``kill -9`` of the server in
the middle of a push and of a pull, the connection string kept out of logs, the hits'
shape and author, and the sync loop the service runs. Every check is a count or a
content, never a timing.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from pathlib import Path

import pytest

from recall.core import paths
from tests.support.postgres import ADMIN, ADMIN_PASSWORD, PgServer, require_postgres
from tests.support.wait import wait_for

pytestmark = pytest.mark.slow

SECRET = "sk-ant-api03-" + "Zq7" * 30 + "AA"
_counter = itertools.count()


@pytest.fixture(scope="module")
def pg():
    server = PgServer(require_postgres())
    try:
        yield server
    finally:
        server.close()


def _repo(path: Path, remote: str) -> Path:
    (path / ".git").mkdir(parents=True, exist_ok=True)
    (path / ".git" / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n')
    return path.resolve()


class Member:
    def __init__(self, team: "Team", name: str, checkout: Path) -> None:
        self.team, self.name, self.checkout = team, name, checkout
        self.role = f"{name}_{team.n}"
        self.home = team.root / f"{name}-recall"

    @property
    def url(self) -> str:
        return self.team.pg.url(self.role, self.team.db)


class Team:
    """A database, an owner, and members alice and bob (and carol, never granted shop)."""

    def __init__(self, pg: PgServer, root: Path, monkeypatch) -> None:
        self.pg, self.root, self.mp = pg, root, monkeypatch
        self.n = next(_counter)
        self.db = pg.create_database(f"team_{os.getpid()}_{self.n}")
        self.owner_url = pg.url(ADMIN, self.db)
        self.alice = Member(self, "alice", _repo(root / "a" / "shop", "git@github.com:acme/shop.git"))
        self.bob = Member(self, "bob", _repo(root / "b" / "clones" / "shop", "https://github.com/Acme/shop"))
        self.carol = Member(self, "carol", _repo(root / "c" / "shop", "ssh://git@github.com:22/acme/shop.git/"))
        lines = [pg.pgpass_line(ADMIN, ADMIN_PASSWORD)]
        for m in (self.alice, self.bob, self.carol):
            pg.create_role(m.role, f"pw-{m.role}")
            lines.append(pg.pgpass_line(m.role, f"pw-{m.role}"))
        pgpass = Path(os.environ["HOME"]) / ".pgpass"
        pgpass.write_text("".join(lines))
        pgpass.chmod(0o600)

    def be(self, member: Member | None) -> None:
        self.mp.setenv("RECALL_HOME", str(member.home if member else self.root / "owner-recall"))

    def setup(self, members=("alice", "bob")) -> None:
        """init, grants, joins, an index per member."""
        self.be(None)
        run("team", "init", self.owner_url)
        for name in members:
            m = getattr(self, name)
            run("team", "grant", m.role, "github.com/acme/shop", "--url", self.owner_url)
            self.be(m)
            run("team", "join", m.url)
            run("index")


@pytest.fixture
def team(pg, tmp_path, monkeypatch):
    return Team(pg, tmp_path, monkeypatch)


def run(*args: str, ok: bool = True) -> tuple[int, str, str]:
    """``recall ARGS`` in-process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from recall.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    if ok and code != 0:
        raise AssertionError(f"recall {' '.join(args)} exited {code}: {out.getvalue()} {err.getvalue()}")
    return code, out.getvalue(), err.getvalue()


def add_memory(project: Path, mtype: str, content: str, **fields) -> str:
    """A memory written straight into state.json (no redaction on the way: as an older recall,
    or a hand edit, could have left it), indexed like any."""
    from recall.memory import index_docs, store

    with store.transaction(str(project)) as state:
        mid = store.new_id({m.id for m in state.memories})
        now = time.time()
        m = store.Memory(
            id=mid,
            type=mtype,
            content=content,
            created=fields.pop("created", now),
            updated=fields.pop("updated", now),
            **fields,
        )
        state.memories.append(m)
        state.touch(m)
    index_docs.sync(str(project), state.changed, state.removed, state)
    return mid


def sync(member: Member, team: Team, pull: bool = True) -> dict:
    """One sync cycle of ``member`` in-process (push, pull, index), as the service's loop does."""
    from recall.team import local
    from recall.team.conn import connect
    from recall.team.sync import Sync

    team.be(member)
    join = local.joined()
    c = connect(join.url)
    try:
        return Sync(join).cycle(c, pull=pull, force_push=True)
    finally:
        c.close()


def team_hits(query: str) -> list[dict]:
    return json.loads(run("--json", "--team", query)[1])["hits"]


def server_rows(team: Team, where: str = "TRUE") -> list[tuple]:
    with team.pg.admin(team.db) as c:
        return c.execute(
            f"SELECT id, author, project, kind, content, tags, deleted FROM recall_team.items "
            f"WHERE {where} ORDER BY seq"
        ).fetchall()


# set-up ----------------------------------------------------------------------------------------------------
def test_init_creates_tables_and_policies_once(team):
    team.be(None)
    code, out, _ = run("team", "init", team.owner_url)
    assert "Set up recall's team tables" in out
    with team.pg.admin(team.db) as c:
        rls = dict(
            c.execute(
                "SELECT relname, relrowsecurity FROM pg_class WHERE relnamespace = "
                "'recall_team'::regnamespace AND relkind = 'r'"
            ).fetchall()
        )
        policies = {r[0] for r in c.execute("SELECT policyname FROM pg_policies WHERE schemaname='recall_team'")}
        gin = c.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'items_tsv'").fetchone()[0]
        before = (
            c.execute("SELECT count(*) FROM pg_policies").fetchone()[0],
            c.execute(
                "SELECT max(xmin::text::bigint) FROM pg_class WHERE relnamespace = 'recall_team'::regnamespace"
            ).fetchone()[0],
        )
    assert rls["items"] and rls["grants"]
    assert {"items_read", "items_add", "items_change", "grants_mine"} <= policies
    assert "gin (tsv)" in gin
    code, out, _ = run("team", "init", team.owner_url)
    assert "nothing changed" in out
    with team.pg.admin(team.db) as c:
        after = (
            c.execute("SELECT count(*) FROM pg_policies").fetchone()[0],
            c.execute(
                "SELECT max(xmin::text::bigint) FROM pg_class WHERE relnamespace = 'recall_team'::regnamespace"
            ).fetchone()[0],
        )
    assert after == before  # not one catalog row rewritten


# two members ------------------------------------------------------------------------------------------------
def test_two_members_share_search_and_forget(team):
    team.setup()
    team.be(team.alice)
    mid = add_memory(
        team.alice.checkout,
        "gotcha",
        "The flux capacitor needs the raw request body for webhook signatures",
        tags=["webhooks"],
    )
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    code, out, _ = run("team", "share", "--project", str(team.bob.checkout))
    assert "1 teammates' items pulled" in out  # no service: share pulls once itself
    hits = team_hits("flux capacitor")
    assert len(hits) == 1
    hit = hits[0]
    assert hit["author"] == team.alice.role and hit["kind"] == "team"
    assert hit["project"] == str(team.bob.checkout)  # the teammate's item, in bob's own checkout
    assert hit["timestamp"].startswith(time.strftime("%Y-%m-%d", time.gmtime()))
    plain = json.loads(run("--json", "nothing-matches-this-zzq")[1])
    # the same JSON shape as every other hit: the Hit fields, author among them
    from recall.search.hit import Hit

    assert set(hit) == set(Hit("", "", "", "", "", "", "", "", 0.0).as_json())
    assert plain["hits"] == []
    _, text, _ = run("--raw", "--team", "flux", "capacitor")
    assert f"team  by {team.alice.role}" in text and "**flux**" in text.lower()
    # an ordinary search finds it too, ranked as a memory
    assert any(h["kind"] == "team" for h in json.loads(run("--json", "flux capacitor")[1])["hits"])

    # alice forgets it: the tombstone reaches the server, bob's copy goes at his next sync
    team.be(team.alice)
    code, out, _ = run("memories", "forget", mid, "--project", str(team.alice.checkout))
    sync(team.alice, team, pull=False)
    assert [r[6] for r in server_rows(team)] == [True]  # a tombstone, its text gone
    assert server_rows(team)[0][4] == ""
    sync(team.bob, team)
    team.be(team.bob)
    assert team_hits("flux capacitor") == []


def test_recall_forget_propagates_without_a_service(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "Deploys go through the blue-green switchboard on Fridays only")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("switchboard")) == 1
    team.be(team.alice)
    code, out, _ = run("forget", "--match", "switchboard", "--yes")
    assert "withdrawn from the team server" in out
    assert all(r[6] for r in server_rows(team))
    sync(team.bob, team)
    team.be(team.bob)
    assert team_hits("switchboard") == []


def test_receiver_forget_removes_the_copy_for_good(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "pattern", "Name feature flags after the quasar ticket that adds them")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("quasar")) == 1
    code, out, _ = run("forget", "--match", "quasar", "--yes")
    assert "1 teammate item deleted here" in out
    assert team_hits("quasar") == []
    sync(team.bob, team)  # a later pull does not bring it back...
    team.be(team.bob)
    assert team_hits("quasar") == []
    assert [r[6] for r in server_rows(team)] == [False]  # ...and alice's item stays hers on the server


def test_unshare_withdraws_and_removes_the_team_items_here(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "The zeppelin cache must be warmed before the load test")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    add_memory(team.bob.checkout, "gotcha", "The zeppelin queue drops messages above 256 KB")
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("zeppelin")) == 1
    code, out, _ = run("team", "unshare", "--project", str(team.bob.checkout))
    assert "1 items withdrawn" in out and "1 team items removed" in out
    assert team_hits("zeppelin") == []  # alice's copy left bob's machine
    rows = {r[1]: r[6] for r in server_rows(team)}
    assert rows == {team.alice.role: False, team.bob.role: True}
    sync(team.alice, team)
    team.be(team.alice)
    assert team_hits("zeppelin") == []  # bob's is gone from alice's


def test_a_member_without_a_grant_sees_nothing(team):
    team.setup()
    team.be(None)
    run("team", "grant", team.carol.role, "gitlab.example.com/other/thing", "--url", team.owner_url)
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "Hyperdrive credentials rotate every ninety days")
    run("team", "share", "--project", str(team.alice.checkout))

    team.be(team.carol)
    run("team", "join", team.carol.url)
    run("index")
    add_memory(team.carol.checkout, "gotcha", "Carol's note about the hyperdrive")
    code, out, _ = run("team", "share", "--project", str(team.carol.checkout))
    assert "has no grant of github.com/acme/shop" in out and "nothing was sent" in out
    # the service's loop is refused, says why, and does not try again until something changes
    from recall.team import local
    from recall.team.conn import connect
    from recall.team.sync import Sync

    join = local.joined()
    sync_ = Sync(join)
    with connect(join.url) as c:
        refused = sync_.push(c)["refused"]
    assert "recall team grant" in refused["github.com/acme/shop"]
    assert not sync_.local_changed()
    code, out, _ = run("team", "search", "hyperdrive")
    assert "No team item" in out
    assert team_hits("hyperdrive") == []
    import psycopg

    with psycopg.connect(team.carol.url, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM recall_team.items").fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM recall_team.grants").fetchone()[0] == 1  # its own only
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(
                "INSERT INTO recall_team.items (id, project, origin, kind, content, created, updated, digest) "
                "VALUES ('x1234567', 'github.com/acme/shop', 'o', 'memory', 'x', now(), now(), 'd')"
            )
        # nor can it change or tombstone alice's item
        assert c.execute("UPDATE recall_team.items SET deleted = true").rowcount == 0
    # bob (granted) may not rewrite alice's item either
    with psycopg.connect(team.bob.url, autocommit=True) as c:
        assert c.execute("UPDATE recall_team.items SET deleted = true").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("DELETE FROM recall_team.items")
    # bob (granted) finds it on the server, not pulled to his machine (he shares nothing)
    team.be(team.bob)
    found = json.loads(run("team", "search", "hyperdrive", "--json")[1])["hits"]
    assert [(h["author"], h["project"], h["pulled"]) for h in found] == [
        (team.alice.role, "github.com/acme/shop", False)
    ]
    assert "**Hyperdrive**" in found[0]["snippet"] and found[0]["type"] == "decision"
    # after a revoke, bob sees nothing either
    team.be(None)
    run("team", "revoke", team.bob.role, "github.com/acme/shop", "--url", team.owner_url)
    team.be(team.bob)
    code, out, err = run("team", "search", "hyperdrive", ok=False)
    assert code != 0 and "recall team grant" in err and "\n" not in err.strip()


# what is shared, and what never is ---------------------------------------------------------------------------
def test_a_secret_planted_in_a_memory_never_reaches_the_server(team):
    from indexer.ledger import pause, switch_off

    team.setup()
    team.be(team.alice)
    ck = team.alice.checkout
    add_memory(ck, "gotcha", f"The staging key is {SECRET} for the payments sandbox", tags=["payments"])
    add_memory(ck, "context", "Release freeze starts Monday <private>the acquisition by Initech</private> for everyone")
    add_memory(ck, "decision", "Everything about the moonbase stays off the record", sessions=["off-session-1"])
    switch_off(["off-session-1"])
    pause(time.time() - 1800, now=time.time() - 3600)  # paused an hour ago, for half an hour
    add_memory(ck, "pattern", "Said while paused: moonbase launch codes are in the vault", created=time.time() - 2700)
    add_memory(ck, "pattern", "Said after the pause: the lunar rover is kept in bay 4")
    from recall.memory import summaries
    from recall.rules import store as rules

    summaries.put("sess-with-secret", str(ck), f"Rotated the token {SECRET} and fixed the sandbox")
    rules.add({"text": f"Never paste {SECRET} anywhere", "any": ["paste"]}, "project", str(ck))
    run("team", "share", "--project", str(ck))
    rows = server_rows(team)
    everything = json.dumps([list(map(str, r)) for r in rows])
    with team.pg.admin(team.db) as c:  # every text column of every table of the schema
        everything += json.dumps(c.execute("SELECT row_to_json(i)::text FROM recall_team.items i").fetchall())
    assert SECRET not in everything and "Zq7Zq7" not in everything
    assert "Initech" not in everything and "acquisition" not in everything
    assert "moonbase" not in everything  # a switched-off session's, a paused period's
    kinds = sorted(r[3] for r in rows)
    assert kinds == ["memory", "memory", "memory", "rule", "summary"]
    assert sum("[redacted:" in r[4] for r in rows) == 3  # the key, the summary's token, the rule's
    assert any("Release freeze starts Monday" in r[4] for r in rows)


def test_an_excluded_project_is_never_shared_and_excluding_withdraws(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "Use the tachyon scheduler for nightly jobs")
    run("team", "share", "--project", str(team.alice.checkout))
    assert len(server_rows(team, "NOT deleted")) == 1
    run("exclude", "add", str(team.alice.checkout))
    sync(team.alice, team, pull=False)
    assert server_rows(team, "NOT deleted") == []  # withdrawn
    code, out, err = run("team", "share", "--project", str(team.alice.checkout), ok=False)
    assert code == 2 and "excluded" in err


def test_project_identity_is_the_normalized_remote(tmp_path):
    from recall.team.identity import normalize_remote, parse_project, project_identity

    for url in (
        "git@github.com:Acme/shop.git",
        "https://alice:TOKEN@github.com/acme/shop",
        "ssh://git@github.com:22/acme/shop.git/",
        "github.com/acme/shop",
        "git://github.com/acme/shop",
        "git@github.com/acme/shop.git",
    ):
        assert normalize_remote(url) == "github.com/acme/shop", url
    assert normalize_remote("/srv/git/shop.git") == "/srv/git/shop"
    main = _repo(tmp_path / "main", "git@github.com:acme/shop.git")
    # a linked worktree: its .git is a file pointing into the main repository's worktrees/
    wt_git = main / ".git" / "worktrees" / "feature"
    wt_git.mkdir(parents=True)
    (wt_git / "commondir").write_text("../..\n")
    wt = tmp_path / "elsewhere" / "feature"
    wt.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {wt_git}\n")
    other_clone = _repo(tmp_path / "clone2", "https://github.com/ACME/shop.git")
    assert project_identity(main) == (str(main), "github.com/acme/shop")
    assert project_identity(wt)[1] == "github.com/acme/shop"
    assert project_identity(other_clone)[1] == "github.com/acme/shop"
    assert parse_project(str(other_clone)) == parse_project("git@github.com:acme/shop.git")
    from recall.core.errors import UsageError

    bare = tmp_path / "nogit"
    bare.mkdir()
    with pytest.raises(UsageError, match="no git remote"):
        project_identity(bare)


# crashes -------------------------------------------------------------------------------------------------------
def test_kill9_of_the_server_mid_push_and_mid_pull_loses_and_duplicates_nothing(tmp_path, monkeypatch):
    """Its own server: killed with -9 while alice pushes 600 items, and again while bob pulls."""
    from recall.team import sync as team_sync
    from recall.team.conn import TeamError

    pg = PgServer(require_postgres())
    try:
        team = Team(pg, tmp_path, monkeypatch)
        team.setup()
        team.be(team.alice)
        run("team", "share", "--project", str(team.alice.checkout))
        n = 600
        from recall.memory import store

        with store.transaction(str(team.alice.checkout)) as state:
            for i in range(n):
                m = store.Memory(
                    id=f"m{i:05d}",
                    type="pattern",
                    content=f"bulk item {i} about the widget {i}",
                    created=time.time(),
                    updated=time.time(),
                )
                state.memories.append(m)
            state.dirty = True
        monkeypatch.setattr(team_sync, "BATCH", 50)
        batches = []

        def kill_after_third(sent: int) -> None:
            batches.append(sent)
            if len(batches) == 3:
                pg.kill9()

        with pytest.raises(Exception):
            sync_push(team.alice, team, on_batch=kill_after_third)
        pg.start()
        assert 0 < len(server_rows(team)) < n  # some batches were in, not all
        sync(team.alice, team, pull=False)  # resumes where it stopped
        rows = server_rows(team)
        assert len(rows) == n and len({r[0] for r in rows}) == n
        assert sorted(r[4] for r in rows) == sorted(f"bulk item {i} about the widget {i}" for i in range(n))

        # bob pulls in batches of 100; the server dies after the second
        team.be(team.bob)
        run("team", "share", "--project", str(team.bob.checkout))  # pulls once itself: all of it
        from recall.team import local

        with local.TeamDB() as db:
            db.drop_remote("github.com/acme/shop")  # start bob over, to pull again under fire
        team_sync.index_pending(team_sync.direct_writer)
        monkeypatch.setattr(team_sync, "PULL_BATCH", 100)
        real = local.TeamDB.apply_pulled
        calls = []

        def apply_then_kill(self, *a, **kw):
            real(self, *a, **kw)
            calls.append(1)
            if len(calls) == 2:
                pg.kill9()

        monkeypatch.setattr(local.TeamDB, "apply_pulled", apply_then_kill)
        with pytest.raises((TeamError, Exception)):
            sync(team.bob, team)
        monkeypatch.setattr(local.TeamDB, "apply_pulled", real)
        pg.start()
        sync(team.bob, team)
        team.be(team.bob)
        with local.TeamDB() as db:
            ids = [i["id"] for i in db.items()]
        assert len(ids) == n and len(set(ids)) == n
        assert team_doc_count() == n
        assert len(team_hits("widget 417")) >= 1

        # bob's service, connected, sees the server killed again: it says so, and once the
        # server is back it reconnects by itself and pulls what alice pushed meanwhile
        import subprocess
        import sys

        proc = subprocess.Popen(
            [sys.executable, "-m", "recall.entry", "serve"],
            env=dict(os.environ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:

            def service_state() -> dict:
                return json.loads(run("team", "status", "--json")[1]).get("service") or {}

            wait(lambda: service_state().get("connected"), "bob's service to connect")
            pg.kill9()
            wait(
                lambda: "Cannot reach the team server" in (service_state().get("error") or ""),
                "bob's service to notice the server is gone",
            )
            pg.start()
            team.be(team.alice)
            add_memory(team.alice.checkout, "gotcha", "The zircon relay reboots when the server restarts")
            sync(team.alice, team, pull=False)
            team.be(team.bob)
            hits = wait(lambda: team_hits("zircon relay"), "bob's service to reconnect and pull")
            assert hits[0]["author"] == team.alice.role
            assert team_doc_count() == n + 1
        finally:
            proc.terminate()
            proc.wait(30)
    finally:
        pg.close()


def sync_push(member: Member, team: Team, on_batch=None) -> dict:
    from recall.team import local
    from recall.team.conn import connect
    from recall.team.sync import Sync

    team.be(member)
    join = local.joined()
    c = connect(join.url)
    try:
        return Sync(join).push(c, on_batch=on_batch)
    finally:
        try:
            c.close()
        except Exception:
            pass


def team_doc_count() -> int:
    import tantivy

    from indexer.schema import open_index

    index = open_index(paths.index_dir())
    q = tantivy.Query.term_query(index.schema, "doctype", "team", index_option="basic")
    return index.searcher().search(q, 1, count=True).count


# the connection string and the password ------------------------------------------------------------------------
def test_connection_string_and_password_never_logged(team, monkeypatch):
    from recall.team import local
    from recall.team.runner import Runner

    team.setup(members=("alice",))
    team.be(team.alice)
    with_password = team.alice.url.replace(f"{team.alice.role}@", f"{team.alice.role}:hunter22@", 1)
    assert "hunter22" in with_password
    code, out, err = run("team", "join", with_password, ok=False)
    assert code == 2 and "hunter22" not in out + err and "~/.pgpass" in err
    # a server that is down: the loop logs why, naming the server, never the string or password
    join = local.joined()
    bad = join.url.replace(str(team.pg.dir), str(team.pg.dir) + "-gone")
    local.save_join(bad, join.server, join.role)
    monkeypatch.setenv("PGPASSWORD", "hunter23-env")
    stop = threading.Event()
    runner = Runner(lambda fn: None, stop)
    t = threading.Thread(target=runner.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not runner.state.get("error"):
        time.sleep(0.05)
    stop.set()
    from recall.team import runner as runner_mod

    runner_mod.wake()
    t.join(10)
    assert "Cannot reach the team server" in runner.state["error"]
    logs = "".join(p.read_text(errors="replace") for p in paths.log_dir().glob("recall.log*"))
    assert "Cannot reach the team server" in logs
    for needle in (bad, join.url, "hunter23-env", f"pw-{team.alice.role}", ADMIN_PASSWORD):
        assert needle not in logs
    status = json.loads(run("team", "status", "--json")[1])
    assert status["reachable"] is False and bad not in json.dumps(status)


# status ---------------------------------------------------------------------------------------------------------
def test_status_shows_server_lag_and_what_was_shared_today(team):
    team.setup()
    team.be(team.alice)
    for word in ("alpha", "beta", "gamma"):
        add_memory(team.alice.checkout, "decision", f"Service {word} owns its own database schema")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "Service delta times out behind the proxy")
    sync(team.alice, team, pull=False)
    team.be(team.alice)
    st = json.loads(run("team", "status", "--json")[1])
    assert st["server"].startswith(team.alice.role + "@") and st["reachable"]
    assert st["shared_last_day"]["memory"] == 4 and st["on_server"] == 4
    team.be(team.bob)
    st = json.loads(run("team", "status", "--json")[1])
    (p,) = st["projects"]
    assert p["project"] == "github.com/acme/shop" and p["pulled"] == 3 and p["behind"] == 1
    assert p["lag_seconds"] >= 0 and p["granted"] is True
    _, text, _ = run("team", "status")
    assert "1 not pulled yet" in text and "Sync: paused" in text
    # alice's own items are never pulled: none counted as "not pulled yet" (issue 36)
    team.be(team.alice)
    _, text, _ = run("team", "status")
    assert "not pulled yet" not in text and "4 items sent (4 memories)" in text, text


def test_leave_withdraws_and_forgets_the_join(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "Kafka topics are named after the owning team")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    add_memory(team.bob.checkout, "decision", "Kafka consumers commit offsets after processing")
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("kafka")) == 1
    code, out, _ = run("team", "leave")
    assert "Left the team" in out and "1 items you shared were withdrawn" in out
    assert team_hits("kafka") == []
    assert {r[1]: r[6] for r in server_rows(team)}[team.bob.role] is True
    code, out, err = run("team", "status")
    assert "Not in a team" in out


# one-line errors ------------------------------------------------------------------------------------------------
def test_errors_are_one_line_with_the_next_step(team, tmp_path):
    team.be(team.alice)
    code, out, err = run("team", "share", ok=False)
    assert code == 2 and "recall team join URL" in err
    code, out, err = run("team", "join", "not a url at all", ok=False)
    assert code == 2 and "postgresql://" in err and "not a url" not in err
    code, out, err = run("team", "join", team.pg.url(team.alice.role, "no_such_db"), ok=False)
    assert code == 1 and "database" in err
    code, out, err = run("team", "join", team.alice.url, ok=False)  # not initialised yet
    assert code == 1 and "recall team init" in err
    team.be(None)
    run("team", "init", team.owner_url)
    code, out, err = run("team", "grant", "nobody_here", "github.com/acme/shop", "--url", team.owner_url, ok=False)
    assert code == 2 and "CREATE ROLE" in err
    code, out, err = run("team", "grant", team.alice.role, "not a remote", "--url", team.owner_url, ok=False)
    assert code == 2 and "PROJECT" in err
    for e in (err,):
        assert len(e.strip().splitlines()) == 1 and "Traceback" not in e


# the readers: the prompt hook, MCP ----------------------------------------------------------------------------
def test_the_hook_injects_team_memory_from_the_local_index_without_psycopg(team):
    import subprocess
    import sys

    team.setup()
    team.be(team.alice)
    add_memory(
        team.alice.checkout,
        "gotcha",
        "The flux capacitor webhook needs the raw request body to verify signatures; parsed JSON breaks the HMAC",
    )
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    prompt = "why does the flux capacitor webhook signature check fail?"
    data = {
        "session_id": "now-session",
        "transcript_path": "/nowhere.jsonl",
        "cwd": str(team.bob.checkout),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "recall.entry", "hook", "user-prompt-submit"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "raw request body" in context and f"team: {team.alice.role}" in context
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "recall.prompt.context" in imported
    assert not {m for m in imported if m.split(".")[0] in ("psycopg", "psycopg_binary") or m.startswith("recall.team")}


def test_mcp_memory_search_can_restrict_to_the_team(team):
    from recall.mcp import tools

    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "The warp core metrics go to Prometheus, never StatsD")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    add_memory(team.bob.checkout, "decision", "The warp core dashboard lives in Grafana folder ops")
    run("team", "share", "--project", str(team.bob.checkout))
    both = tools.memory_search("warp core", cwd=str(team.bob.checkout))["matches"]
    assert {m["kind"] for m in both} == {"memory", "team"}
    only = tools.memory_search("warp core", cwd=str(team.bob.checkout), team=True)["matches"]
    assert [m["kind"] for m in only] == ["team"] and only[0]["author"] == team.alice.role
    assert only[0]["type"] == "decision" and "Prometheus" in only[0]["text"]
    from recall.mcp.server import MatchOut, _head

    line = _head(MatchOut(n=1, **{k: v for k, v in only[0].items() if k in MatchOut.model_fields}), True)
    assert f"by {team.alice.role}" in line and "team decision" in line


# the service's loop ---------------------------------------------------------------------------------------------
def test_two_services_sync_through_notify_and_forget_reaches_the_other(team, tmp_path):
    """Two real `recall serve` processes: alice's new memory reaches bob's index by itself, and
    alice's `recall forget` (through her service) takes it off bob's machine."""
    import subprocess
    import sys

    team.setup()
    for m in (team.alice, team.bob):
        team.be(m)
        run("team", "share", "--project", str(m.checkout))
    procs = []
    try:
        for m in (team.alice, team.bob):
            env = dict(os.environ, RECALL_HOME=str(m.home))
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "recall.entry", "serve"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for m in (team.alice, team.bob):
            team.be(m)
            wait(
                lambda: (json.loads(run("team", "status", "--json")[1]).get("service") or {}).get("connected"),
                "the service's team sync to connect",
            )
        team.be(team.alice)
        run(
            "memories",
            "add",
            "gotcha",
            "The antimatter pump trips its breaker above 40 amps",
            "--project",
            str(team.alice.checkout),
        )
        team.be(team.bob)
        hits = wait(lambda: team_hits("antimatter pump"), "alice's memory on bob's machine")
        assert hits[0]["author"] == team.alice.role
        team.be(team.alice)
        code, out, _ = run("forget", "--match", "antimatter", "--yes")
        team.be(team.bob)
        wait(lambda: team_hits("antimatter pump") == [], "the forget to reach bob's machine")
        assert [r[6] for r in server_rows(team)] == [True]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


def wait(pred, what: str, timeout: float = 90.0):
    return wait_for(pred, timeout, what, interval=0.2)


# hostile rows (issue 35) ---------------------------------------------------------------------------------------
def _as(member: Member):
    import psycopg

    return psycopg.connect(member.url, autocommit=True)


HOSTILE = (  # (id, created, updated, tags, content): what a granted teammate can write by plain SQL
    ("hostile-inf-created", "'infinity'", "now()", "'{}'", "'an item dated infinity'"),
    ("hostile-neg-updated", "now()", "'-infinity'", "'{}'", "'an item updated at -infinity'"),
    ("hostile-far-future", "'200000-01-01'", "now()", "'{}'", "'an item from the year 200000'"),
    ("hostile-null-tag", "now()", "now()", "ARRAY['ok', NULL]", "'a tag that is NULL'"),
    ("hostile-huge-tags", "now()", "now()", "array_fill('tag'::text, ARRAY[5000])", "'five thousand tags'"),
    ("hostile-long-mtype", "now()", "now()", "'{}'", "'a type of a thousand letters'"),
)


def _plant_hostile(team: Team) -> None:
    """The rows above, written by alice's own role (granted), the date check dropped as on a
    server not yet migrated."""
    with team.pg.admin(team.db) as c:
        c.execute("ALTER TABLE recall_team.items DROP CONSTRAINT items_dates_finite")
    with _as(team.alice) as c:
        for item_id, created, updated, tags, content in HOSTILE:
            mtype = "repeat('x', 1000)" if "mtype" in item_id else "'gotcha'"
            c.execute(
                f"INSERT INTO recall_team.items (id, project, origin, kind, mtype, content, tags, created, "
                f"updated, digest) VALUES ('{item_id}', 'github.com/acme/shop', 'forged-origin', 'memory', "
                f"{mtype}, {content}, {tags}, {created}, {updated}, 'd')"
            )


def test_the_table_refuses_a_date_that_is_no_date(team):
    import psycopg

    team.setup()
    with _as(team.alice) as c:
        for created in ("'infinity'", "'-infinity'"):
            with pytest.raises(psycopg.errors.CheckViolation):
                c.execute(
                    "INSERT INTO recall_team.items (id, project, origin, kind, content, created, updated, "
                    f"digest) VALUES ('inf-12345', 'github.com/acme/shop', 'o', 'memory', 'x', {created}, "
                    "now(), 'd')"
                )


def test_hostile_rows_are_skipped_and_counted_and_a_forget_still_reaches_every_member(team):
    team.setup()
    team.be(team.alice)
    mid = add_memory(team.alice.checkout, "gotcha", "The obsidian gateway drops idle sockets after ninety seconds")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("obsidian gateway")) == 1
    _plant_hostile(team)
    # alice forgets hers and adds another: bob's sync goes on past every hostile row
    team.be(team.alice)
    run("memories", "forget", mid, "--project", str(team.alice.checkout))
    add_memory(team.alice.checkout, "decision", "The basalt cache is rebuilt every night at two")
    sync(team.alice, team, pull=False)
    for _ in range(2):  # and again: a restart does not meet them a second time
        result = sync(team.bob, team)
        assert result["deleted"] + result["pulled"] >= 0
    team.be(team.bob)
    assert team_hits("obsidian gateway") == []
    assert len(team_hits("basalt cache")) == 1
    for word in ("infinity", "200000", "NULL", "thousand"):
        assert team_hits(word) == [], word
    st = json.loads(run("team", "status", "--json")[1])
    assert st["skipped"]["count"] == len(HOSTILE)
    assert st["skipped"]["latest"]["project"] == "github.com/acme/shop"
    _, text, _ = run("team", "status")
    assert f"{len(HOSTILE)} teammates' items skipped" in text
    # the owner's `recall team init` (the migration) mends the dates: those rows come through
    with team.pg.admin(team.db) as c:
        c.execute("UPDATE recall_team.meta SET value = '1' WHERE key = 'version'")
    team.be(None)
    run("team", "init", team.owner_url)
    with team.pg.admin(team.db) as c:
        assert (
            c.execute(
                "SELECT count(*) FROM recall_team.items WHERE NOT isfinite(created) OR NOT isfinite(updated)"
            ).fetchone()[0]
            == 0
        )
        assert c.execute("SELECT count(*) FROM pg_constraint WHERE conname = 'items_dates_finite'").fetchone()[0] == 1
    sync(team.bob, team)
    team.be(team.bob)
    assert {h["uuid"] for h in team_hits("infinity")} == {"hostile-inf-created", "hostile-neg-updated"}
    st = json.loads(run("team", "status", "--json")[1])
    assert st["skipped"]["count"] == len(HOSTILE) - 2


def test_a_hostile_item_kept_by_an_older_recall_does_not_stop_the_index(team):
    from recall.team import local
    from recall.team.sync import direct_writer, index_pending

    team.setup(members=("bob",))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    good = {
        "id": "good-item-1",
        "remote": "github.com/acme/shop",
        "author": "alice",
        "kind": "memory",
        "mtype": "gotcha",
        "content": "The granite queue is drained hourly",
        "tags": [],
        "created": 1.7e9,
        "updated": 1.7e9,
        "seq": 1,
    }
    bad = dict(good, id="bad-item-1", content="dated infinity", updated=float("inf"))
    with local.TeamDB() as db:
        db.apply_pulled("github.com/acme/shop", [good, bad], [], 2)
    assert index_pending(direct_writer) == 2  # one written, one dropped
    assert len(team_hits("granite queue")) == 1 and team_hits("infinity") == []
    with local.TeamDB() as db:
        assert db.skipped()[0] == 1


def test_check_pulled_refuses_wrong_types_and_dates():
    from recall.team.sync import check_pulled

    ok = {
        "id": "abcdefgh12",
        "kind": "memory",
        "mtype": "gotcha",
        "content": "x",
        "tags": ["a"],
        "author": "alice",
        "created": 1.7e9,
        "updated": 1.7e9,
    }
    assert check_pulled(ok) == ""
    for change in (
        {"created": float("nan")},
        {"updated": float("inf")},
        {"created": -1.0},
        {"updated": 1e13},
        {"created": "2024-01-01"},
        {"created": None},
        {"created": True},
        {"tags": "a,b"},
        {"tags": [1]},
        {"tags": ["x" * 500]},
        {"tags": ["t"] * 101},
        {"kind": "virus"},
        {"kind": 3},
        {"mtype": None},
        {"mtype": 7},
        {"content": None},
        {"content": "x" * 20001},
        {"content": "nul\0byte"},
        {"content": "lone \ud800"},
        {"id": None},
        {"id": "short"},
        {"author": None},
    ):
        assert check_pulled({**ok, **change}), change


def test_next_seq_of_a_project_is_refused_to_a_role_not_granted_it(team):
    import psycopg

    team.setup()
    team.be(None)
    run("team", "grant", team.carol.role, "gitlab.example.com/other/thing", "--url", team.owner_url)
    with _as(team.carol) as c:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            with c.transaction():
                c.execute("SELECT recall_team.next_seq('github.com/acme/shop')")
        with c.transaction():  # its own project: allowed
            assert c.execute("SELECT recall_team.next_seq('gitlab.example.com/other/thing')").fetchone()[0] > 0


def test_a_forged_origin_is_refused_by_the_server_and_never_withdrawn_by_its_owner(team):
    import psycopg

    from recall.team import local

    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "The osmium gate is alice's")
    run("team", "share", "--project", str(team.alice.checkout))
    origin = local.joined().origin
    forge = (
        "INSERT INTO recall_team.items (id, project, origin, kind, mtype, content, created, updated, digest) "
        f"VALUES ('forged-by-bob-1', 'github.com/acme/shop', '{origin}', 'memory', 'gotcha', "
        "'The cobalt relay is bobs', now(), now(), 'd')"
    )
    with _as(team.bob) as c:  # bob writes a row claiming alice's machine: the server refuses it
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(forge)
    with team.pg.admin(team.db) as c:  # a server not yet migrated had it: alice's sync copes
        c.execute("ALTER TABLE recall_team.items DISABLE TRIGGER items_stamp")
        c.execute(forge.replace("digest)", "digest, author, seq)").replace("'d')", f"'d', '{team.bob.role}', 999)"))
        c.execute("ALTER TABLE recall_team.items ENABLE TRIGGER items_stamp")
    sync(team.alice, team)
    sync(team.alice, team)
    team.be(team.alice)
    assert len(team_hits("cobalt relay")) == 1  # alice sees it, as bob's
    assert [r[6] for r in server_rows(team, "id = 'forged-by-bob-1'")] == [False]


# one bad item never stalls the push (issue 35 item 3) --------------------------------------------------------
def test_a_nul_or_a_lone_surrogate_never_stalls_the_push_or_a_withdrawal(team):
    team.setup()
    team.be(team.alice)
    old = add_memory(team.alice.checkout, "gotcha", "The quartz oscillator drifts in the cold room")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("quartz oscillator")) == 1
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "The tungsten dump quotes binary output \0\x01 and a lone SURROGATE half")
    from recall.memory import store

    state_file = store.state_path(str(team.alice.checkout))  # as a model's JSON escape leaves it
    state_file.write_text(state_file.read_text().replace("SURROGATE", "\\ud800"))
    stuck_id = add_memory(team.alice.checkout, "decision", "The zebra crossing service is retired next month")
    add_memory(team.alice.checkout, "decision", "The ytterbium cache warms up at boot")
    with team.pg.admin(team.db) as c:  # a stricter server: refuses one of alice's items, whatever the reason
        c.execute("ALTER TABLE recall_team.items ADD CONSTRAINT no_zebra CHECK (content NOT LIKE '%zebra%')")
    run("memories", "forget", old, "--project", str(team.alice.checkout))
    result = sync(team.alice, team, pull=False)
    assert result["withdrawn"] == 1 and result["sent"] == 2 and len(result["stuck"]) == 1
    rows = {r[4]: r[6] for r in server_rows(team)}
    assert rows[""] is True  # the forgotten one: a tombstone
    assert any("tungsten" in c and "\ufffd" in c and "\0" not in c for c in rows)
    assert any("ytterbium" in c for c in rows) and not any("zebra" in c for c in rows)
    st = json.loads(run("team", "status", "--json")[1])
    assert [(s["ref"], s["kind"]) for s in st["stuck"]] == [(stuck_id, "memory")]
    assert "no_zebra" in st["stuck"][0]["why"]
    _, text, _ = run("team", "status")
    assert "up to date" not in text and f"stuck: memory {stuck_id}" in text and "no_zebra" in text
    sync(team.bob, team)
    team.be(team.bob)
    assert team_hits("quartz oscillator") == [] and len(team_hits("tungsten dump")) == 1
    # the server relents: the next push sends it, and nothing is stuck any more
    with team.pg.admin(team.db) as c:
        c.execute("ALTER TABLE recall_team.items DROP CONSTRAINT no_zebra")
    assert sync(team.alice, team, pull=False)["sent"] == 1
    team.be(team.alice)
    assert json.loads(run("team", "status", "--json")[1])["stuck"] == []


def test_team_items_cut_at_the_servers_limit_say_so(team):
    team.setup(members=("alice",))
    team.be(team.alice)
    add_memory(team.alice.checkout, "context", "The osmium report " + "lorem ipsum dolor " * 2000)
    run("team", "share", "--project", str(team.alice.checkout))
    (content,) = [r[4] for r in server_rows(team)]
    assert len(content) <= 20000 and content.endswith(
        f"of {len('The osmium report ' + 'lorem ipsum dolor ' * 2000) - 1:,} characters]"
    )
    assert "[cut for the team: the first" in content


def test_a_summary_of_a_forgotten_session_is_never_shared(team):
    """Issue 35 item 4: a summary that landed after its session was forgotten (it waited for
    the model meanwhile) is not shared; another session's is."""
    from indexer.archive import Tombstones
    from recall.memory import summaries

    team.setup(members=("alice",))
    team.be(team.alice)
    ck = str(team.alice.checkout)
    Tombstones(paths.archive_dir() / "forgotten.json").add(session="forgotten-sess-1")
    summaries.put("forgotten-sess-1", ck, "Goal: move the heliotrope keys to the new vault")
    summaries.put("kept-sess-2", ck, "Goal: tune the marigold cache")
    run("team", "share", "--project", ck)
    contents = " ".join(r[4] for r in server_rows(team))
    assert "marigold" in contents and "heliotrope" not in contents


# a forget reaches every copy (issue 35 item 6) -----------------------------------------------------------------
PLAIN_SECRET = "hunter2-plum-ORCHID"  # not shaped like a key: redaction keeps it


def _own_hits(query: str) -> list[dict]:
    return [h for h in json.loads(run("--json", query)[1])["hits"] if h["kind"] != "team"]


def _index_bytes() -> bytes:
    return b"".join(p.read_bytes() for p in paths.index_dir().rglob("*") if p.is_file())


def test_a_forget_leaves_no_byte_in_a_teammates_index_segments(team):
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", f"The pelican admin logs in with {PLAIN_SECRET} on staging")
    gone = add_memory(team.alice.checkout, "decision", "The cormorant-lighthouse migration is cancelled")
    add_memory(team.alice.checkout, "pattern", "The gannet service keeps its own schema")  # shares their segment
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    add_memory(team.bob.checkout, "pattern", "Bob's own note about the kestrel queue")
    run("team", "share", "--project", str(team.bob.checkout))
    assert len(team_hits("pelican admin")) == 1 and _own_hits("kestrel")
    assert PLAIN_SECRET.encode() in _index_bytes() and b"cormorant-lighthouse" in _index_bytes()
    team.be(team.alice)
    run("forget", "--secret", PLAIN_SECRET, "--yes")
    run("memories", "forget", gone, "--project", str(team.alice.checkout))
    sync(team.alice, team, pull=False)
    sync(team.bob, team)
    team.be(team.bob)
    hits = team_hits("pelican admin")
    assert len(hits) == 1 and "[redacted:forgotten]" in hits[0]["text"]
    assert team_hits("cormorant") == [] and _own_hits("kestrel")
    data = _index_bytes()
    assert PLAIN_SECRET.encode() not in data and b"cormorant-lighthouse" not in data
    assert len(team_hits("gannet")) == 1 and team_doc_count() == 2  # rebuilt: nothing of the team lost


def test_a_local_purge_keeps_the_teams_documents(team):
    """The segment rewrite of a local forget builds a teammate's documents again (it dropped them)."""
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "The albatross cache needs a warm-up")
    add_memory(team.alice.checkout, "gotcha", "The puffin deploy is alice's")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))  # both in one segment
    assert team_doc_count() == 2
    run("forget", "--match", "puffin", "--yes")  # one of them goes here: its segment is rewritten
    assert len(team_hits("albatross cache")) == 1 and team_doc_count() == 1


def _stored_team_docs() -> list[dict]:
    import tantivy

    from indexer.schema import open_index

    index = open_index(paths.index_dir())
    q = tantivy.Query.term_query(index.schema, "doctype", "team", index_option="basic")
    searcher = index.searcher()
    return [searcher.doc(addr).to_dict() for _, addr in searcher.search(q, 10).hits]


def test_team_documents_carry_their_author_and_an_older_index_is_rebuilt_with_it(team):
    """Schema 6: the author in its own field. An index of schema 5 (the author kept in ``branch``)
    is rebuilt, and the team's documents come back from team.db, author and all."""
    team.setup()
    team.be(team.alice)
    add_memory(team.alice.checkout, "gotcha", "The heron queue drops messages over 256 KB")
    run("team", "share", "--project", str(team.alice.checkout))
    team.be(team.bob)
    run("team", "share", "--project", str(team.bob.checkout))
    (doc,) = _stored_team_docs()
    assert doc["author"] == [team.alice.role] and "branch" not in doc
    # the index claims the schema before the author field: rebuilt, the team's documents with it
    (paths.index_dir() / "recall-schema.json").write_text(json.dumps({"version": 5}))
    _, out, _ = run("index")
    assert "schema" in out.lower() and team_doc_count() == 0
    sync(team.bob, team)
    team.be(team.bob)
    (doc,) = _stored_team_docs()
    assert doc["author"] == [team.alice.role]
    (hit,) = team_hits("heron queue")
    assert hit["author"] == team.alice.role
    assert f"team  by {team.alice.role}" in run("--raw", "--team", "heron", "queue")[1]


def test_secrets_the_local_redaction_misses_are_not_published(team):
    """Issue 35 item 6: 3 of 7 forms reached the server in plain text."""
    team.setup(members=("alice",))
    team.be(team.alice)
    ck = team.alice.checkout
    values = ["plumorchidvault", "Walrus#Tusk2024", "Orchid-Basalt-77", "kestrelsummer"]
    add_memory(ck, "gotcha", f"For staging use secret = {values[0]} and nothing else")
    add_memory(ck, "context", f"Add db.internal:5432:shop:app:{values[1]} to your ~/.pgpass before the migration")
    add_memory(ck, "gotcha", f"FYI the deploy pw is {values[2]} until Friday")
    add_memory(ck, "decision", f"The vault token: {values[3]}, rotated monthly")
    run("team", "share", "--project", str(ck))
    everything = json.dumps([list(map(str, r)) for r in server_rows(team)])
    for v in values:
        assert v not in everything, v
    assert everything.count("[redacted:") == 4
    assert "For staging use secret = [redacted:" in everything and "until Friday" in everything


def test_exclude_add_of_a_shared_checkout_tells_the_truth_about_its_memories(team):
    team.setup(members=("alice",))
    team.be(team.alice)
    add_memory(team.alice.checkout, "decision", "The tapir scheduler owns the nightly jobs")
    run("team", "share", "--project", str(team.alice.checkout))
    code, out, _ = run("exclude", "add", str(team.alice.checkout))
    assert "Nothing of it is indexed" not in out
    assert "its 1 memory" in out and "hidden from every search" in out and "withdrawn at the next sync" in out
    assert json.loads(run("--json", "tapir scheduler")[1])["hits"] == []


# search at scale (issue 48 item 7) -------------------------------------------------------------------------
_NEWEST = """WITH cand AS (
    SELECT i.id, i.seq, i.tsv FROM recall_team.items i
    WHERE i.tsv @@ websearch_to_tsquery('english', %(q)s) AND NOT i.deleted AND i.project = %(project)s
    ORDER BY i.seq DESC LIMIT %(pool)s)
SELECT c.id FROM cand c ORDER BY ts_rank_cd(c.tsv, websearch_to_tsquery('english', %(q)s)) DESC, c.seq DESC
LIMIT %(n)s"""


def _many_items(team: Team, n: int = 1500) -> None:
    """``n`` items written on the server (as the owner): two in three in bob's project, one in three in
    another he was never granted; every one says "zephyr", the oldest 150 say it three times (they
    rank first among all), every 11th also says "relay"."""
    with team.pg.admin(team.db) as c:
        c.execute(
            "INSERT INTO recall_team.items (id, project, origin, kind, mtype, content, created, updated, digest) "
            "SELECT 'many' || lpad(g::text, 6, '0'), "
            "       CASE WHEN g %% 3 = 0 THEN 'gitlab.example.com/other/thing' ELSE 'github.com/acme/shop' END, "
            "       'bulk-origin', 'memory', 'gotcha', "
            "       'zephyr note ' || g || CASE WHEN g <= 150 THEN ' zephyr zephyr' ELSE '' END "
            "       || CASE WHEN g %% 11 = 0 THEN ' relay' ELSE '' END, now(), now(), 'd' "
            "FROM generate_series(1, %s) g ORDER BY g",
            (n,),
        )
        c.execute("ANALYZE recall_team.items")


def _server_hits(query: str) -> list[dict]:
    return json.loads(run("team", "search", query, "--json")[1])["hits"]


def test_team_search_ranks_the_500_newest_matches_of_the_granted_projects_only(team):
    team.setup()
    _many_items(team)
    with team.pg.admin(team.db) as c:
        newest = [
            r[0] for r in c.execute(_NEWEST, {"q": "zephyr", "project": "github.com/acme/shop", "pool": 500, "n": 40})
        ]
        rare = [
            r[0]
            for r in c.execute(_NEWEST, {"q": "zephyr relay", "project": "github.com/acme/shop", "pool": 500, "n": 40})
        ]
        other = {r[0] for r in c.execute("SELECT id FROM recall_team.items WHERE project <> 'github.com/acme/shop'")}
    with _as(team.bob) as c:
        got = [r[0] for r in c.execute("SELECT id FROM recall_team.search('zephyr', false, 40)")]
        got_rare = [r[0] for r in c.execute("SELECT id FROM recall_team.search('zephyr relay', false, 40)")]
        anyword = [r[0] for r in c.execute("SELECT id FROM recall_team.search('relay nowhere', true, 200)")]
    # 1,000 matches in bob's project: the 500 newest are ranked (the thrice-said oldest are not among them)
    assert got == newest and len(got) == 40
    assert not {f"many{g:06d}" for g in range(1, 151)} & set(got)
    # fewer matches than the pool (91 in bob's project): every one ranked, as schema version 2 did
    assert got_rare == rare and len(got_rare) == 40
    assert len(anyword) == len([g for g in range(1, 1501) if g % 11 == 0 and g % 3]) == 91
    assert not (set(got) | set(got_rare) | set(anyword)) & other  # never a project not granted
    team.be(team.bob)
    hits = json.loads(run("team", "search", "zephyr", "--json")[1])["hits"]
    assert [h["uuid"] for h in hits] == newest[:10] and {h["project"] for h in hits} == {"github.com/acme/shop"}


def test_init_migrates_a_version_2_server_to_the_windowed_search_and_the_origin_index(team):
    """An existing team database (schema version 2: the old search() and origin_of_another(), no
    (origin, author) index) gets them from the owner's `recall team init`; a search whose matches fit in
    the pool finds the same hits, in the same order, before and after."""
    from benchmarks.team import BASELINE_SEARCH

    team.setup()
    team.be(team.alice)
    for i in range(30):
        add_memory(team.alice.checkout, "gotcha", f"The tungsten relay {i} drops frames" + " tungsten" * (i % 4))
    run("team", "share", "--project", str(team.alice.checkout))
    with team.pg.admin(team.db) as c:  # the server as version 2 left it
        c.execute(BASELINE_SEARCH.replace("recall_team.search_v2(", "recall_team.search("))
        c.execute(
            "CREATE OR REPLACE FUNCTION recall_team.origin_of_another(o text, who name) RETURNS boolean "
            "LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ "
            "SELECT EXISTS (SELECT 1 FROM recall_team.items i WHERE i.origin = o AND i.author <> who) $$"
        )
        c.execute("DROP INDEX recall_team.items_origin_author")
        c.execute("UPDATE recall_team.meta SET value = '2' WHERE key = 'version'")
    team.be(team.bob)
    before = [(h["uuid"], h["snippet"]) for h in _server_hits("tungsten relay")]
    assert len(before) == 10
    team.be(None)
    code, out, _ = run("team", "init", team.owner_url)
    assert "nothing changed" not in out
    with team.pg.admin(team.db) as c:
        assert c.execute("SELECT value FROM recall_team.meta WHERE key = 'version'").fetchone()[0] == "3"
        index = c.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'items_origin_author'").fetchone()
        assert index and "(origin, author)" in index[0]
        srcs = dict(
            c.execute("SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'recall_team'::regnamespace").fetchall()
        )
        assert "ORDER BY i.origin, i.author LIMIT 1" in srcs["origin_of_another"]
        assert "pool" in srcs["search"]
    team.be(team.bob)
    assert [(h["uuid"], h["snippet"]) for h in _server_hits("tungsten relay")] == before
    # the origin is still its first role's: bob cannot write under alice's machine id
    import psycopg

    from recall.team import local

    team.be(team.alice)
    origin = local.joined().origin
    with _as(team.bob) as c:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(
                "INSERT INTO recall_team.items (id, project, origin, kind, mtype, content, created, updated, digest) "
                f"VALUES ('forged-after-3', 'github.com/acme/shop', '{origin}', 'memory', 'gotcha', 'x', now(), now(), 'd')"
            )
