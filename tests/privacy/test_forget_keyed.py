"""Issue 46 items 4 and 9: a standing ``--secret``/``--match`` rule holds nothing its text can be
solved back from (its length, a keyed HMAC-SHA256 digest and a 16-bit keyed tag; the key in
``$RECALL_HOME/forget.key``, 0600, never in ``forgotten.json``), still catches a later copy,
replaces the rules written before the key; and after a purge that kept the records, a reply
that held a forgotten secret comes back with just the value cut out."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat

from indexer.archive import Archive
from indexer.forgetting import SECRET_MARK, Selection
from indexer.ingest import Indexer, index_all
from recall.core import paths
from recall.privacy.forget import attach, forget_everywhere
from recall.search.searcher import Searcher
from tests.support.cli import cli
from tests.support.factory import Session

PIN = "48151623"  # an 8-digit PIN: what the audit solved back from the old rule in under a second
SECRET = "hunter2-plum-ORCHID"
_P = (1 << 61) - 1


def texts(query: str) -> list[str]:
    return [h.text for h in Searcher().search(query, limit=50, messages=True)]


def archived() -> list[str]:
    return [m.text for batch in Archive(paths.archive_dir()).replay() for m in batch]


def forget(sel: Selection) -> dict:
    with Indexer() as ix:
        return forget_everywhere(ix, sel)


def rules_file() -> dict:
    return json.loads((paths.archive_dir() / "forgotten.json").read_text())


def _roll(text: str, base: int) -> int:
    h = 0
    for c in text:
        h = (h * base + ord(c)) % _P
    return h


def legacy_rule(text: str, kind: str = "secret", ends: bool = True) -> dict:
    """A rule as recall wrote it before the key (the audit's input)."""
    text = text.casefold() if kind == "match" else text
    salt = os.urandom(16)
    base = 256 + int.from_bytes(os.urandom(8), "big") % (_P - 512)
    d = {
        "kind": kind,
        "length": len(text),
        "base": base,
        "rolling": _roll(text, base),
        "salt": salt.hex(),
        "digest": hashlib.blake2b(text.encode(), key=salt, digest_size=16).hexdigest(),
        "sessions": [],
        "project": None,
        "before": None,
        "at": 1.0,
    }
    if ends:
        d["ends"] = text[0] + text[-1]
    return d


def solve_back(rule: dict, digits: int) -> str | None:
    """What someone holding ``forgotten.json`` alone can do to a rule over ``digits`` decimal
    digits: a meet-in-the-middle on a rolling hash (its base is there), else a brute force of
    what can be checked without a key (a salted digest). None when the file offers nothing."""
    n = int(rule.get("length") or 0)
    if n != digits:
        return None
    if rule.get("base") and rule.get("rolling") is not None:
        base, target, half = int(rule["base"]), int(rule["rolling"]), n // 2
        shift = pow(base, n - half, _P)
        left = {(_roll(f"{i:0{half}d}", base) * shift) % _P: f"{i:0{half}d}" for i in range(10**half)}
        for j in range(10 ** (n - half)):
            right = f"{j:0{n - half}d}"
            hit = left.get((target - _roll(right, base)) % _P)
            if hit is not None:
                return hit + right
    if rule.get("salt") and n <= 6:
        salt = bytes.fromhex(rule["salt"])
        for i in range(10**n):
            guess = f"{i:0{n}d}"
            if hashlib.blake2b(guess.encode(), key=salt, digest_size=16).hexdigest() == rule["digest"]:
                return guess
    return None


def test_the_audits_inversion_solves_an_old_rule_and_nothing_of_a_new_one(claude_projects, project):
    assert solve_back(legacy_rule(PIN), 8) == PIN  # the attack works on the old form
    s = Session(cwd=str(project))
    s.user(f"the vault opens with {PIN} for the heron safe")
    s.write(claude_projects)
    index_all()
    assert forget(Selection(secret=PIN).check())["rewritten"] == 1
    [rule] = rules_file()["rules"]
    assert solve_back(rule, 8) is None
    assert set(rule) == {"kind", "length", "tag", "digest", "sessions", "project", "before", "at"}
    assert rule["length"] == 8 and len(rule["digest"]) == 64 and 0 <= rule["tag"] < 1 << 16
    # the digest is keyed: without forget.key no guess can be checked against it
    assert hashlib.sha256(PIN.encode()).hexdigest() != rule["digest"]
    assert all(
        hmac.new(b"\0" * 32, g.encode(), hashlib.sha256).hexdigest() != rule["digest"] for g in (PIN, "secret " + PIN)
    )


def test_a_secret_rule_is_its_length_and_keyed_digests_the_key_0600_beside_the_state(claude_projects, project):
    s = Session(cwd=str(project))
    s.user(f"the staging door opens with {SECRET} for the pelican admin")
    s.write(claude_projects)
    index_all()
    forget(Selection(secret=SECRET).check())
    forget(Selection(match="walrus billing").check())
    key = paths.recall_home() / "forget.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    raw = (paths.archive_dir() / "forgotten.json").read_bytes()
    data = json.loads(raw)
    assert key.read_bytes().hex().encode() not in raw and key.read_bytes() not in raw
    assert "forget.key" not in raw.decode()
    for rule in data["rules"]:
        assert set(rule) == {"kind", "length", "tag", "digest", "sessions", "project", "before", "at"}, rule
    assert {(r["kind"], r["length"]) for r in data["rules"]} == {("secret", len(SECRET)), ("match", 14)}
    # a later copy is still caught (a session still writing, a backfill), and a rebuild keeps it out
    n = len(s.lines)
    s.assistant(f"logged in to the pelican admin with {SECRET} just now")
    s.append(claude_projects, n)
    other = Session(cwd=str(project))
    other.user(f"paste {SECRET} into the osprey form; the Walrus Billing host is down")
    other.user("the osprey form also wants a badge number")
    other.write(claude_projects)
    index_all()
    assert texts("orchid") == [] and texts("hunter2") == []
    assert any("logged in to the pelican admin with " + SECRET_MARK in t for t in archived())
    assert texts("walrus") == [] and texts("badge") != []  # the --match rule dropped its message
    assert not any(SECRET in t for t in archived())
    index_all(rebuild=True)
    assert texts("orchid") == [] and len(texts("pelican")) == 2


def test_the_same_forget_twice_keeps_one_rule(claude_projects, project):
    s = Session(cwd=str(project))
    s.user(f"code {SECRET}")
    s.write(claude_projects)
    index_all()
    forget(Selection(secret=SECRET).check())
    forget(Selection(secret=SECRET).check())
    assert len(rules_file()["rules"]) == 1


def test_a_big_batch_is_scanned_at_once_and_finds_every_copy():
    """The numpy prefilter (a keyed tag per window) finds what a digest of every window finds."""
    import random

    from indexer import forget_rules
    from indexer.forget_rules import Rule

    values = [SECRET, PIN, "é漢字-key-\U0001f511x", "abcd"]
    rules = [Rule.of("secret", v) for v in values]
    rng = random.Random(7)
    batch = []
    for _ in range(60):
        t = "".join(rng.choice("abcd 01234\n") for _ in range(rng.randint(0, 4000)))
        for v in values:
            if rng.random() < 0.4:
                p = rng.randint(0, len(t))
                t = t[:p] + v + t[p:]
        batch.append(t)
    scan = forget_rules._Scan(rules)
    fast = scan.spans(batch)
    for t, found in zip(batch, fast):
        for r, v in zip(rules, values):
            want, i = [], t.find(v)
            while i >= 0:
                want.append((i, i + len(v)))
                i = t.find(v, i + len(v))
            assert found.get(id(r), []) == want
    slow = forget_rules._Scan(rules)
    old, forget_rules.SMALL = forget_rules.SMALL, 10**12
    try:
        assert slow.spans(batch[:5]) == fast[:5]
    finally:
        forget_rules.SMALL = old


def test_rules_written_before_the_key_lose_their_rolling_hash_and_are_replaced_when_they_catch_a_copy(
    claude_projects, project
):
    old = legacy_rule(SECRET)
    very_old = legacy_rule("quetzal-0xBEEF", ends=False)  # before the ends: matched by its rolling hash
    path = paths.archive_dir() / "forgotten.json"
    paths.atomic_write(path, json.dumps({"rules": [old, very_old]}))
    with Indexer() as ix:
        attach(ix)  # the service's and `recall index`'s start
    stored = rules_file()["rules"]
    assert "rolling" not in stored[0] and "base" not in stored[0] and stored[0]["ends"] == old["ends"]
    assert stored[1]["rolling"] == very_old["rolling"]  # it has nothing else to match by yet
    s = Session(cwd=str(project))
    s.user(f"the staging door opens with {SECRET} for the pelican admin")
    s.user("the quetzal-0xBEEF token opens the egret console")
    s.write(claude_projects)
    index_all()
    assert not any(SECRET in t or "quetzal-0xBEEF" in t for t in archived())
    assert any("egret console" in t for t in archived())
    for rule in rules_file()["rules"]:  # each caught its text: keyed now, nothing of the old form left
        assert set(rule) == {"kind", "length", "tag", "digest", "sessions", "project", "before", "at"}, rule
    later = Session(cwd=str(project))
    later.user(f"again {SECRET} and quetzal-0xBEEF for the ibis")
    later.write(claude_projects)
    index_all()
    assert not any(SECRET in t or "quetzal-0xBEEF" in t for t in archived()) and texts("ibis")


def test_forgetting_again_replaces_a_rule_written_before_the_key(claude_projects, project):
    paths.atomic_write(paths.archive_dir() / "forgotten.json", json.dumps({"rules": [legacy_rule(SECRET)]}))
    s = Session(cwd=str(project))
    s.user("nothing secret here about the crane")
    s.write(claude_projects)
    index_all()
    forget(Selection(secret=SECRET).check())
    [rule] = rules_file()["rules"]
    assert "salt" not in rule and "ends" not in rule and len(rule["digest"]) == 64


def test_with_the_key_a_short_value_can_be_brute_forced_a_long_one_cannot_be_solved():
    """What docs/privacy.md says of someone holding the whole state folder: the key lets them
    check guesses one keyed digest each (a 4-digit value falls), nothing lets them solve."""
    from indexer.forget_rules import Rule, keyed, load_key

    rule = Rule.of("secret", "7351")
    k = keyed(load_key())
    assert [g for g in (f"{i:04d}" for i in range(10**4)) if k.digest("secret", g) == rule.digest] == ["7351"]


# item 9: a purge that kept the records, then a new setup ---------------------------------------------------
def test_after_a_purge_that_kept_the_records_a_reply_comes_back_with_the_secret_cut_out(
    claude_projects, project, capsys, no_service_manager
):
    s = Session(cwd=str(project))
    s.user("how do I log in to the pelican admin")
    s.assistant(f"use the door code {SECRET}; the pelican admin lives on the staging cormorant host")
    s.user("thanks, and the kestrel deploy")
    s.write(claude_projects)
    index_all()
    assert forget(Selection(secret=SECRET).check())["rewritten"] == 1
    code, out, err = cli(capsys, "setup", "--uninstall", "--global", "--purge", "--yes", "--keep-records")
    assert code == 0, err
    assert not (paths.archive_dir() / "sessions").exists()
    index_all()  # a new setup's backfill reads the transcript Claude Code still keeps
    hits = texts("cormorant")
    assert hits == [f"use the door code {SECRET_MARK}; the pelican admin lives on the staging cormorant host"]
    assert texts("orchid") == [] and texts("kestrel")
    assert not any(SECRET in t for t in archived())
    for p in paths.recall_home().rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p
    index_all(rebuild=True)
    assert len(texts("cormorant")) == 1 and texts("orchid") == []
