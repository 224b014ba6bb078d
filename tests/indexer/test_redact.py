"""indexer.redact: secrets never reach the index, ordinary text is untouched."""

from __future__ import annotations

import random
import re
import string
import time

import pytest

from indexer.redact import KINDS, redact, redact_counts
from tests.support.secrets_corpus import PASSWORD_FORMS, PLACEMENTS, benign, corpus, false_positives, matrix, passwords

CORPUS = corpus()
BENIGN = benign()


def _fresh(s: str) -> str:
    """A copy that is not the same object (literals may be interned/shared)."""
    return "".join(list(s))


# ---------------------------------------------------------------------------
# the corpus itself
# ---------------------------------------------------------------------------
def test_corpus_shape():
    assert len(CORPUS) >= 40
    assert len(BENIGN) >= 30
    kinds = {k for k, _, _ in CORPUS}
    assert kinds <= set(KINDS)
    assert kinds == set(KINDS), f"kinds without a corpus example: {set(KINDS) - kinds}"
    for kind, secret, text in CORPUS:
        assert secret and secret in text


def test_every_kind_is_documented():
    """docs/redaction.md lists every kind the redactor can emit."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "redaction.md").read_text(encoding="utf-8")
    missing = [k for k in KINDS if f"`{k}`" not in doc]
    assert missing == []


def test_corpus_is_deterministic():
    assert corpus() == CORPUS
    assert benign() == BENIGN


# ---------------------------------------------------------------------------
# every secret goes, with the right label
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind,secret,text", CORPUS, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(CORPUS)])
def test_corpus_secret_is_redacted(kind, secret, text):
    out, counts = redact_counts(text)
    assert secret not in out
    assert f"[redacted:{kind}]" in out
    assert counts.get(kind, 0) >= 1
    assert redact(text) == out
    # no long fragment of the secret survives either
    for frag in re.findall(r"[A-Za-z0-9+/_\-]{16,}", secret):
        assert frag not in out
    if kind == "private-key":
        assert "-----BEGIN" not in out
        for line in re.findall(r"[A-Za-z0-9+/=]{40,}", text):
            assert line not in out


@pytest.mark.parametrize("kind,secret,text", CORPUS, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(CORPUS)])
def test_corpus_is_idempotent(kind, secret, text):
    once = redact(text)
    twice = redact(once)
    assert twice == once
    assert twice is once  # nothing left to do: the fast "unchanged" path


def test_matrix_covers_every_format_in_every_placement():
    """Issue 17: 77 formats x 5 placements leaked in 60 placements; every vendor format
    is now in every placement of the corpus (test_corpus_secret_is_redacted checks each)."""
    m = matrix()
    assert len(m) >= 200
    kinds = {k for k, _, _ in m}
    for kind in (
        "databricks-token",
        "mailgun-key",
        "shopify-token",
        "digitalocean-token",
        "vault-token",
        "postman-key",
        "newrelic-key",
        "alibaba-key",
        "age-key",
        "azure-secret",
        "azure-sas",
        "twilio-token",
        "supabase-token",
        "sentry-token",
        "huggingface-token",
        "django-secret",
        "basic-auth",
        "cli-password",
        "secret-assignment",
    ):
        assert kind in kinds
    assert len(PLACEMENTS) == 5


def _leaked(secret: str, out: str) -> list[str]:
    """Pieces of ``secret`` (5+ chars) still readable in ``out``."""
    rest = re.sub(r"\[redacted:[a-z\-]+\]", "\0", out)
    return [secret[i : i + 5] for i in range(len(secret) - 4) if secret[i : i + 5] in rest]


@pytest.mark.parametrize("form", list(PASSWORD_FORMS))
def test_random_passwords_in_unquoted_values_do_not_leak(form):
    """Issue 17: unquoted values stopped at the first & ; , ( ) { } [ ] < > \\ and ~170 of
    200 random 16-character passwords leaked in part (DB_PASSWORD=Xk9mP2&vL8qRt4 kept
    &vL8qRt4); not one piece of any may survive now."""
    cases = [c for c in passwords(200) if c[0] == form]
    assert len(cases) == 200
    leaks = []
    for _form, pw, text in cases:
        out = redact(text)
        if _leaked(pw, out):
            leaks.append((pw, out))
    assert leaks == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("DB_PASSWORD=Xk9mP2&vL8qRt4", "DB_PASSWORD=[redacted:secret-assignment]"),
        ("password: pa55(w0rd)Secret9", "password: [redacted:secret-assignment]"),
        ("$ tool --password Xk9;mP2&vL8q --verbose", "$ tool --password [redacted:secret-assignment] --verbose"),
        ("connect(password=s3cr3tV4lue9)", "connect(password=[redacted:secret-assignment])"),
        (
            "Cookie: a=1; session_token=Ab3dEf5gHi7j; theme=dark",
            "Cookie: a=1; session_token=[redacted:secret-assignment]; theme=dark",
        ),
        (
            "jdbc:sqlserver://db:1433;user=sa;password=Pa55w0rdZ9;encrypt=true",
            "jdbc:sqlserver://db:1433;user=sa;password=[redacted:secret-assignment];encrypt=true",
        ),
        (
            '{"content": "DB_PASSWORD=abc123XYZq\\nFOO=bar"}',
            '{"content": "DB_PASSWORD=[redacted:secret-assignment]\\nFOO=bar"}',
        ),
        ("$ mysql -uroot -pS3cr3tPw9 shop", "$ mysql -uroot -p[redacted:cli-password] shop"),
        ("$ curl -u admin:S3cr3tPw9 https://x.io", "$ curl -u admin:[redacted:cli-password] https://x.io"),
        ("$ sshpass -p S3cr3tPw9 ssh root@h", "$ sshpass -p [redacted:cli-password] ssh root@h"),
    ],
)
def test_unquoted_values_and_command_lines(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize("text", false_positives(), ids=[f"fp-{i}" for i in range(len(false_positives()))])
def test_false_positives_unchanged(text):
    """Google Docs/Drive ids and IPFS CIDs are ids users search for (issue 17: they were
    redacted); code around secret-ish names is not a secret either."""
    s = _fresh(text)
    assert redact(s) is s, redact(s)


# ---------------------------------------------------------------------------
# ordinary text survives, as the very same object
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("text", BENIGN, ids=[f"benign-{i}" for i in range(len(BENIGN))])
def test_benign_unchanged(text):
    s = _fresh(text)
    out, counts = redact_counts(s)
    assert out == text
    assert counts == {}
    assert redact(s) is s


def test_fast_path_returns_same_object():
    s = _fresh(
        "Let me look at recall/store.py and fix the query builder so it handles quoted "
        "phrases; then rerun pytest on tests/test_search.py and check the benchmark again."
    )
    assert redact(s) is s
    code = _fresh("def add(a: int, b: int) -> int:\n    return a + b\n" * 10)
    assert redact(code) is code


@pytest.mark.parametrize(
    "text",
    [
        "3f786850e387550fdab836ed7e6dc881de23001b",  # git sha
        "3f78685",
        "sha256:" + "ab" * 32,  # docker digest
        "d41d8cd98f00b204e9800998ecf8427e",  # md5
        "123e4567-e89b-12d3-a456-426614174000",  # uuid
        "pk_test_TYooMQauvdEDq54NiTphI7jx",  # stripe publishable key (public by design)
        "msg_01XFDUDYJgAACzvnptvVoYEL toolu_01A09q90qw90lq917835lq9 srvtoolu_01ABCDefghIJKLmnopQRSTuvwx",
        "ToolSearchToolBm25_20251119Param and numpy/random/src/mt19937/LICENSE",
        "GetObjectCommandOutput2WithSSEKMSKeyId",
        "see https://github.com/org/repo/blob/3f786850e387550fdab836ed7e6dc881de23001b/src/Foo2Bar.tsx",
        "password: str",
        "token = request.headers.get('x-token')",
        "self.password = password",
        "api_key=api_key, timeout=30",
        'headers={"Authorization": f"Bearer {token}"}',
        "PASSWORD_FILE=/run/secrets/db_password",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "password = os.getenv('DB_PASSWORD')",
        "Token.Name.Builtin: '#08547A'",
        "max_tokens: 4096",
        "the auth: module handles login",
    ],
)
def test_judgment_calls_kept(text):
    s = _fresh(text)
    assert redact(s) is s, redact(s)


# ---------------------------------------------------------------------------
# exact output shapes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("postgres://app:hunter2pw@db:5432/x", "postgres://app:[redacted:url-password]@db:5432/x"),
        ("redis://:s3cretpw@cache:6379/0", "redis://:[redacted:url-password]@cache:6379/0"),
        ("API_TOKEN=abc123xyz789", "API_TOKEN=[redacted:secret-assignment]"),
        ("export DB_PASSWORD=hunter2x", "export DB_PASSWORD=[redacted:secret-assignment]"),
        ('{"password": "hunter2x"}', '{"password": "[redacted:secret-assignment]"}'),
        ("password: hunter2x\nuser: bob", "password: [redacted:secret-assignment]\nuser: bob"),
        ("mysql --password hunter2x -u root", "mysql --password [redacted:secret-assignment] -u root"),
        ('password: str = "hunter2x"', 'password: str = "[redacted:secret-assignment]"'),
        ("?access_token=abc123def456&page=2", "?access_token=[redacted:secret-assignment]&page=2"),
        ("SECRET_KEY=" + "a1" * 32, "SECRET_KEY=[redacted:secret-assignment]"),  # named hex secret
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [redacted:secret-assignment]"),
    ],
)
def test_exact_output(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


def test_more_specific_kind_wins():
    ant = "sk-ant-api03-" + "Ab3dEf5gHi7jKl9mNo1pQr3s" * 4 + "AA"
    assert (
        redact(f'curl -H "Authorization: Bearer {ant}"') == 'curl -H "Authorization: Bearer [redacted:anthropic-key]"'
    )
    assert redact(f'ANTHROPIC_API_KEY="{ant}"') == 'ANTHROPIC_API_KEY="[redacted:anthropic-key]"'


def test_redact_counts():
    tok = "ghp_" + "Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZa9b"
    text = f"a {tok} b {tok} <private>x</private> password=hunter2x"
    out, counts = redact_counts(text)
    assert counts == {"github-token": 2, "private": 1, "secret-assignment": 1}
    assert out == "a [redacted:github-token] b [redacted:github-token]   password=[redacted:secret-assignment]"
    assert redact_counts(out) == (out, {})


def test_non_one_to_one_lowercase_still_redacts():
    # "İ".lower() is two code points; offsets must still line up
    text = "İİİ note: password=hunter2x and İ token: abc123XYZ789"
    out = redact(text)
    assert "hunter2x" not in out and "abc123XYZ789" not in out
    assert out == "İİİ note: password=[redacted:secret-assignment] and İ token: [redacted:secret-assignment]"


# ---------------------------------------------------------------------------
# <private>
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("hello <private>my secret plan</private> world", "hello   world"),
        ("a <PRIVATE>x</Private> b", "a   b"),
        ("a <private>line1\nline2\n</private>\nb", "a  \nb"),
        ("keep <private>drop everything\nafter this", "keep  "),
        ("x <private>a <private>b</private> c</private> y", "x   y"),  # nested
        ("x <private>a</private> y <private>b</private> z", "x   y   z"),
        # issue 17: a block opened in one message and closed in the next: the closer
        # ends a block that started before this message, so what precedes it is private
        ("rest of the secret plan</private> and the public part", "  and the public part"),
        ("x <private>a</private> y </private> z", "x    z"),  # a closer after a block ends another
        # issue 17: the HTML-escaped tag (a fetched page, a tool's HTML) and other spellings
        ("a &lt;private&gt;my secret&lt;/private&gt; b", "a   b"),
        ("a &LT;private&GT;my secret", "a  "),
        ("a &#60;private&#62;s&#60;/private&#62; b", "a   b"),
        ("a \\u003cprivate\\u003es\\u003c/private\\u003e b", "a   b"),
        ("a \uff1cprivate\uff1es\uff1c/private\uff1e b", "a   b"),
        ('a < private reason="pii" >secret</ private > b', "a   b"),
        ("a <private/> b", "a   b"),
        ("<private>everything</private>", " "),
        ("no tags, just the word private", "no tags, just the word private"),
    ],
)
def test_private_blocks(text, expected):
    assert redact(text) == expected
    assert redact(redact(text)) == redact(text)


def test_private_block_across_two_messages_leaks_nothing(claude_projects):
    """Issue 17: ``<private>`` opened in one message and closed in the next leaked the
    private part of the second; now neither message stores any of it."""
    from indexer.ingest import Indexer
    from recall.core import paths
    from tests.support.factory import Session

    s = Session(cwd="/home/dev/app")
    s.user("note for later <private>the vault combination is 4711-alpha and")
    s.assistant("Noted.")
    s.user("the backup phrase is zebra-lantern-99</private> now fix the login bug")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    archive = b"".join(p.read_bytes() for p in paths.archive_dir().rglob("*") if p.is_file())
    for piece in (b"4711-alpha", b"zebra-lantern-99", b"vault combination", b"backup phrase"):
        assert piece not in archive
    assert b"now fix the login bug" in archive and b"note for later" in archive


def _archived(paths) -> bytes:
    return b"".join(p.read_bytes() for p in paths.archive_dir().rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "text, open_before, expected",
    [
        ("plain words", False, False),
        ("plain words", True, True),
        ("note <private>the vault", False, True),
        ("a <private>b</private> c", False, False),
        ("the rest</private> public", True, False),
        ("stray </private> closer", False, False),
        ("<private/> empty", False, False),
        ("x <private>a <private>b</private> still open", False, True),
        ("&lt;private&gt;escaped", False, True),
    ],
)
def test_private_open_after(text, open_before, expected):
    from indexer.redact import private_open_after

    assert private_open_after(text, open_before) is expected


def test_private_block_across_many_messages_stores_none_of_them(claude_projects):
    """A block a prompt leaves open covers every message up to the prompt that closes it:
    the replies, tool calls and prompts in between are not stored at all, and what follows
    the closer is, as is everything after it."""
    from indexer.ingest import Indexer
    from recall.core import paths
    from tests.support.factory import Session

    s = Session(cwd="/home/dev/app")
    s.user("note for later <private>the vault combination is 4711-alpha")
    s.assistant("Understood, 4711-alpha noted.")
    s.user("and the safe is behind the painting in the hallway")
    tid = s.tool_use("Bash", {"command": "echo hallway-painting"})
    s.tool_result(tid, "hallway-painting")
    s.compact_summary("The user shared the vault code 4711-alpha and the hallway painting.")
    s.user("the backup phrase is zebra-lantern-99</private> now fix the login bug")
    s.assistant("Fixing the login bug in auth.py.")
    s.write(claude_projects)
    with Indexer() as ix:
        summary = ix.run([claude_projects])
    archive = _archived(paths)
    for piece in (b"4711-alpha", b"zebra-lantern-99", b"hallway", b"painting", b"vault"):
        assert piece not in archive
    assert b"now fix the login bug" in archive and b"note for later" in archive
    assert b"Fixing the login bug" in archive
    assert summary.skipped["private"] == 5  # the reply, the prompt, the tool call, its result, the summary


def test_an_open_private_block_survives_a_restart(claude_projects):
    """The open block is saved with the file's offset: a new indexer (a restart of the
    service) reading the rest of the file still hides the messages inside it."""
    from indexer.ingest import Indexer
    from recall.core import paths
    from tests.support.factory import Session

    s = Session(cwd="/home/dev/app")
    s.user("keep this <private>first secret: cobalt-otter")
    s.assistant("ok")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    start = len(s.lines)
    s.user("second secret: amber-falcon")
    s.user("done</private> what is the weather api we chose?")
    s.append(claude_projects, start)
    with Indexer() as ix:
        ix.run([claude_projects])
    archive = _archived(paths)
    assert b"cobalt-otter" not in archive and b"amber-falcon" not in archive
    assert b"keep this" in archive and b"weather api we chose" in archive


def test_a_tool_output_showing_the_tag_hides_nothing_after_it(claude_projects):
    """Only what the user typed opens a block across messages: a file read by a tool that
    shows an unclosed ``<private>`` loses its own tail, not the rest of the session."""
    from indexer.ingest import Indexer
    from recall.core import paths
    from tests.support.factory import Session

    s = Session(cwd="/home/dev/app")
    s.user("how does the redactor treat tags?")
    tid = s.tool_use("Read", {"file_path": "/home/dev/app/redact.py"})
    s.tool_result(tid, "# an unclosed <private> hides the rest of its own message")
    s.assistant("An unclosed tag hides the rest of that message only.")
    s.user("and what about the quokka-migration plan?")
    s.write(claude_projects)
    with Indexer() as ix:
        ix.run([claude_projects])
    archive = _archived(paths)
    assert b"hides the rest of that message only" in archive and b"quokka-migration" in archive


def test_memory_extraction_carries_an_open_block_between_reads(claude_projects):
    """The memory worker reads a transcript in steps: its cursor keeps the open block, so the
    model never sees a prompt inside it."""
    from recall.memory.extract import read_new
    from tests.support.factory import Session

    s = Session(cwd="/home/dev/app")
    s.user("we start <private>the staging password is tulip-42")
    s.assistant("ok")
    path = s.write(claude_projects)
    carry: dict[int, bool] = {}
    entries, end, _ = read_new(path, 0, "/home/dev/app", False, carry)
    assert carry[end] is True and not any("tulip-42" in e.text for e in entries)
    start = len(s.lines)
    s.user("and prod is orchid-77")
    s.user("</private> deploy the api to staging")
    s.append(claude_projects, start)
    entries, end2, _ = read_new(path, end, "/home/dev/app", carry[end], carry)
    texts = "\n".join(e.text for e in entries)
    assert "orchid-77" not in texts and "deploy the api to staging" in texts and carry[end2] is False


def test_private_block_hides_secrets_inside():
    out, counts = redact_counts("<private>token=ghp_" + "A1b2" * 9 + "</private>")
    assert out == " "
    assert counts == {"private": 1}


def test_private_glued_tags_do_not_break_idempotence():
    for text in [
        "<private<private>x</private>>tail",
        "<pri<private>x</private>vate>tail",
        "<<private>x</private>private>t",
    ]:
        once = redact(text)
        assert redact(once) == once


# ---------------------------------------------------------------------------
# hostile input: never raises, stays idempotent, stays reasonably fast
# ---------------------------------------------------------------------------
def _random_text(seed: int, n: int) -> str:
    rng = random.Random(seed)
    pool = string.printable + "ÄéİßΩ你好🔑\x00\u200b\ufeff"
    return "".join(rng.choice(pool) for _ in range(n))


HOSTILE = [
    "",
    "\x00",
    "\x00" * 10_000,
    "🔑" * 5000,
    "\ud800\udfff lone surrogates \udc00 token=\ud800abc123",
    "İ" * 1000 + "password=x1y2z3",
    "<private>" * 1000,
    "</private>" * 1000,
    "<private<private>>" * 500,
    "-----BEGIN PRIVATE KEY-----" * 500,
    "-----END PRIVATE KEY-----" + "-----BEGIN RSA PRIVATE KEY-----\nabc\n" * 500,
    "eyJ" * 10_000,
    "eyJhbGciOiJIUzI1NiJ9." * 1000,
    "Bearer " * 5000,
    "password=" * 5000,
    'password="' * 5000,
    "token=$token=$" * 5000,
    "auth: " * 5000,
    "://a:b@" * 5000,
    "sk-" * 10_000,
    "asdfsk-" * 10_000,
    "AKIA" * 10_000,
    "xoxb-" * 10_000,
    "a/" * 50_000 + "Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZa9bCd",
    "[redacted:jwt]" * 1000,
    "password=[redacted:secret-assignment]" * 100,
    _random_text(1, 50_000),
    _random_text(2, 5_000),
    "".join(random.Random(3).choice(string.ascii_letters + string.digits + "+/") for _ in range(200_000)),
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_hostile_input(text):
    out, counts = redact_counts(text)
    assert isinstance(out, str)
    assert isinstance(counts, dict)
    assert "error" not in counts
    assert redact(out) == out


def test_huge_ordinary_text_is_linear():
    chunk = (
        "Let me check tests/test_index.py::test_query_returns_results again; the tokenizer "
        "splits identifiers like recall_memory.indexer.redact and paths /work/main/recall/api.py.\n"
        "commit 3f786850e387550fdab836ed7e6dc881de23001b Author: Jane <jane@example.com>\n"
    )
    text = chunk * (2_000_000 // len(chunk))
    t0 = time.perf_counter()
    assert redact(text) is text
    assert time.perf_counter() - t0 < 10  # ~0.1 s in practice; generous for loaded CI


def test_ordinary_messages_are_cheap():
    """Smoke test of the hot path (the real figure is measured separately):
    a generous bound that still catches an accidental quadratic or slow path."""
    rng = random.Random(5)
    words = (
        "the index search query message session file test function we should check fix "
        "error run output line value config user path return import class cache update"
    ).split()
    msgs = []
    for i in range(2000):
        prose = " ".join(rng.choice(words) for _ in range(80))
        code = f"def f_{i}(x):\n    return recall.indexer.build(x, path='/work/main/tests/test_{i}.py')\n"
        msgs.append(_fresh(prose if i % 2 else code * 5)[:500])
    t0 = time.perf_counter()
    for m in msgs:
        assert redact(m) is m
    per_msg = (time.perf_counter() - t0) / len(msgs)
    assert per_msg < 200e-6, f"{per_msg * 1e6:.1f} us per message"


# ---------------------------------------------------------------------------
# issue 28: a value under a secret-named key is a secret whatever it looks like
# ---------------------------------------------------------------------------
from tests.support.secrets_corpus import KEY_VALUE_FORMS, key_values, leaked, ordinary  # noqa: E402


@pytest.mark.parametrize("form", list(KEY_VALUE_FORMS))
def test_key_value_forms_do_not_leak(form):
    """Issue 28: YAML password:/api_key:/token: leaked human-style passwords (Summer2024Pass),
    INI password = v every one, .netrc 200/200, and Kubernetes Secret data, docker login -p,
    .pgpass lines, a value wrapped onto two lines, 40 hex under a _KEY name all leaked. Forty
    values of each form, random and human-style: no piece of any may survive."""
    cases = [c for c in key_values() if c[0] == form]
    assert len(cases) == 40
    leaks = [(secret, redact(text)) for _form, _style, secret, text in cases if leaked(secret, text, redact(text))]
    assert leaks == []


def test_ordinary_strings_are_not_redacted():
    """The other side of it: code, config, commands and prose that name a secret without
    holding one stay as they are (40 of these 592 were changed before issue 28)."""
    changed = [(t, redact(t)) for t in ordinary() if redact(t) != t]
    assert changed == []


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "machine api.heroku.com login bob password Summer2024Pass",
            "machine api.heroku.com login bob password [redacted:secret-assignment]",
        ),
        ("db.internal:5432:shop:app:Winter!2023", "db.internal:5432:shop:app:[redacted:secret-assignment]"),
        ("*:*:*:postgres:hunter2", "*:*:*:postgres:[redacted:secret-assignment]"),
        ("$ docker login -u bob -p Summer2024Pass ghcr.io", "$ docker login -u bob -p [redacted:cli-password] ghcr.io"),
        (
            "$ echo 'Xk9mP2vL8q' | docker login -u bob --password-stdin ghcr.io",
            "$ echo '[redacted:cli-password]' | docker login -u bob --password-stdin ghcr.io",
        ),
        ("$ redis-cli -h cache -a Summer2024 ping", "$ redis-cli -h cache -a [redacted:cli-password] ping"),
        ("requirepass foobared2024\n", "requirepass [redacted:secret-assignment]\n"),
        ("[database]\npassword = letmein\n", "[database]\npassword = [redacted:secret-assignment]\n"),
        ("db:\n  password: Summer2024Pass\n", "db:\n  password: [redacted:secret-assignment]\n"),
        ("api:\n  token: OceanCobalt\n", "api:\n  token: [redacted:secret-assignment]\n"),
        ("DB_PASSWORD=password123", "DB_PASSWORD=[redacted:secret-assignment]"),
        ("POSTGRES_PASSWORD: secret", "POSTGRES_PASSWORD: [redacted:secret-assignment]"),
        ("password: 4821", "password: [redacted:secret-assignment]"),
        ("ENCRYPTION_KEY=" + "3f786850e387550fdab836ed7e6dc881de23001b", "ENCRYPTION_KEY=[redacted:secret-assignment]"),
        (
            'export API_TOKEN="Xk9mP2\nvL8qRt4"',
            'export API_TOKEN="[redacted:secret-assignment]\n[redacted:secret-assignment]"',
        ),
        (
            "export API_TOKEN=Xk9mP2\\\nvL8qRt4\n",
            "export API_TOKEN=[redacted:secret-assignment]\n[redacted:secret-assignment]\n",
        ),
        (
            "deploy:\n  password: >-\n    Xk9mP2vL8q\n  region: eu\n",
            "deploy:\n  password: >-\n    [redacted:secret-assignment]\n  region: eu\n",
        ),
        (
            "kind: Secret\ndata:\n  username: YXBw\n  tls.crt: LS0tLS1CRUdJTg==\n",
            "kind: Secret\ndata:\n  username: [redacted:secret-assignment]\n  tls.crt: [redacted:secret-assignment]\n",
        ),
    ],
)
def test_key_value_exact_output(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "machine learning login password reset flow",
        "kind: ConfigMap\ndata:\n  LOG_LEVEL: info\n",
        "root:x:0:0:root:/root:/bin/bash",
        "12:30:45:00:11",
        "$ docker login -u bob --password-stdin ghcr.io",
        "PRIMARY_KEY=id\nCACHE_KEY=3f786850e387550fdab836ed7e6dc881de23001b\nGPG_KEY=3f786850e387550fdab836ed7e6dc881de23001b",
        "password: !vault |\n  $ANSIBLE",
        "class Settings(BaseModel):\n    token: AccessToken\n    password: str\n",
        "token = tok",
        "credentials=credentials or self.credentials,",
        "f\"{self.upload_sequence_token:056d}\"",
        "arn:aws:secretsmanager:*:*:secret:rds-db-credentials/*",
        "  -p, --password TEXT   Password to use",
        "password=None,",
    ],
)
def test_key_value_look_alikes_kept(text):
    s = _fresh(text)
    assert redact(s) is s, redact(s)


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000 + ":1:b:c:d",
        ("machine " + "x" * 50_000 + " ") * 2 + "password",
        "kind: Secret\ndata:\n" + "  k: v\n" * 20_000,
        "key" * 30_000 + "=abc",
        "x_key: " + "A1" * 40_000,
        "password: |\n" + "  x\n" * 50_000,
        'TOKEN="' + "a" * 511 + "\n" + "b" * 100_000,
        ":" * 100_000,
        "docker login " + " -p" * 30_000,
        "a:1:" + "b" * 100_000 + ":c:d",
        "password = " + "Ab1" * 30_000 + "\n" + "Cd2" * 30_000,
    ],
)
def test_key_value_scanners_are_linear(text):
    t0 = time.perf_counter()
    out, counts = redact_counts(text)
    assert "error" not in counts and redact(out) == out
    assert time.perf_counter() - t0 < 5  # milliseconds in practice; generous for a loaded CI box
