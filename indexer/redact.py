"""Secret redaction for transcript text, run on every message before indexing.

Public API
----------
``redact(text) -> str``
    Return ``text`` with secrets replaced by ``[redacted:<kind>]`` and
    ``<private>...</private>`` blocks removed.  When nothing matched, the very
    same object is returned (``redact(s) is s``), so callers can cheaply tell
    whether anything changed.
``redact_counts(text) -> (str, dict[str, int])``
    Same result plus how many replacements of each kind were made (``private``
    counts removed ``<private>`` blocks, ``error`` the fail-closed case below).
    ``(text, {})`` -- the input object itself -- when nothing matched.
``redact_stated(text) -> str``
    What a memory or a rule someone states keeps (``recall remember``, the model's
    memories, the team's copy of either): ``redact`` and the value after a secret's name
    wherever it stands in the prose. One decision for every copy.
``KINDS``
    Every kind label this module can emit.

Kinds
-----
``anthropic-key`` ``openai-key`` ``aws-access-key`` ``aws-secret-key``
``github-token`` ``gitlab-token`` ``slack-token`` ``stripe-key``
``bearer-token`` ``jwt`` ``private-key`` ``url-password``
``secret-assignment`` ``high-entropy``, the vendor formats of the public rule
sets (``databricks-token`` ... ``vendor-token``: see ``KINDS`` and
docs/redaction.md), ``basic-auth`` (base64 of ``user:password`` after
``Basic``) and ``cli-password`` (``curl -u user:PW``, ``sshpass -p PW``,
``mysql -pPW``).

When two detectors claim overlapping text the more specific one wins, in this
order: private-key, vendor-prefixed tokens (anthropic/openai/aws/github/gitlab/
slack/stripe), jwt, bearer-token, url-password, secret-assignment /
aws-secret-key, high-entropy.  So ``Authorization: Bearer sk-ant-...`` yields
``anthropic-key`` and ``OPENAI_API_KEY="sk-..."`` yields ``openai-key``.

Guarantees
----------
* Idempotent: ``redact(redact(x)) == redact(x)``.  Markers are never matched
  again, and a pass is repeated (at most a few times) when the first pass
  changed something, so leftovers that only become visible after a
  replacement are also caught.
* Never raises for a ``str`` (huge strings, emoji, NUL bytes, lone
  surrogates).  Every regex is linear or bounded; if something unexpected
  still blows up, the function fails *closed* and returns
  ``[redacted:error]`` rather than leaking the input.
* Fast.  Every detector sits behind a cheap trigger: ``str.lower()`` plus a
  handful of ``in`` tests for the keywords (then ``str.find`` for their
  positions and an anchored ``match`` at each), ``in`` tests for
  ``eyJ``/``-----BEGIN``/``://``+``@``/``bearer``/``<``+``private``/``--``/
  ``xox``, and long token runs found with ``bytes.find`` on a copy mapped
  by ``bytes.translate``; only runs that contain an upper-case letter are examined.
  Measured on 10k mixed ~500-char messages (prose, docs, code, logs, path
  listings) without secrets: a median of ~9 us per message on a busy
  2-core box (see tests/indexer/test_redact.py for a smoke bound).

Private blocks
--------------
``<private>...</private>`` (case-insensitive, attributes and whitespace
inside the tag tolerated, multi-line, nested blocks handled by depth
counting) is replaced by a single space, tags included.  The tag is also
recognised HTML-escaped (``&lt;private&gt;``), as a numeric entity,
JSON-escaped (``\u003cprivate\u003e``) and full-width.  An unclosed
``<private>`` removes everything to the end of the text.  A ``</private>``
with no opener ends a block opened in an earlier message, so everything
before it (back to the previous block) is removed too; ``<private/>`` is just
dropped.  A block a user's prompt leaves open stays open across the messages
that follow until a prompt closes it (``private_open_after``; the transcript
reader carries it, ``indexer.transcripts``): the messages in between are not
stored at all.

Judgment calls (what is *not* a secret)
--------------------------------------
* Hex strings are never ``high-entropy``: git SHAs (short or 40/64 hex),
  sha256 digests, docker ``sha256:`` image digests, md5 sums, UUIDs and
  long hex segments inside paths/URLs (``/blob/<sha>/src``) are ids users
  search for.  A hex secret is still caught when it is *named*
  (``SECRET_KEY=<hex>`` -> ``secret-assignment``).
* ``high-entropy`` needs a run of >= 32 chars from ``[A-Za-z0-9+/_-]`` (plus
  ``=`` padding) that mixes upper case, lower case and digits, has Shannon
  entropy >= 3.8 bits/char, is not "wordy" (less than 60% of it made of
  ``[A-Z]?[a-z]{3,}`` words, 4+ digit runs and acronyms) and switches
  between upper/lower/digit on >= 30% of adjacent characters (random text:
  ~60%, identifiers and paths: far fewer).  Long identifiers such as
  ``test_indexing_same_line_twice_never_duplicates``,
  ``AbstractSingletonProxyFactoryBean2Impl``, ``ToolSearchToolBm25_20251119Param``
  and paths survive; random base62/base64 of 32+ chars is caught ~99.5% of
  the time.  A run with many slashes (> 1 per 12 chars; base64 has 1 per
  64) is a path: only its own segments of >= 24 random-looking chars are
  redacted.  Plain leading/trailing path words are kept outside the marker
  (``discord.com/api/webhooks/123/[redacted:high-entropy]``).
* Subresource-integrity / lockfile hashes (``sha512-...``, ``sha256-...``,
  ``sha1-...``) and Go ``h1:`` checksums are content hashes, not secrets: kept.
* Anthropic API object ids (``msg_01...``, ``toolu_01...``,
  ``srvtoolu_01...``, ``req_01...``) are kept: they are ids, not secrets.
* Base64 of short things (``SGVsbG8=``) is too short to matter; long base64
  blobs (data URIs, k8s ``Secret`` data) *are* redacted as ``high-entropy``.
* Stripe publishable keys (``pk_live_``/``pk_test_``) are public by design
  (they ship in web pages) and are kept; so are SSH public keys
  (``ssh-ed25519 AAAAC3NzaC1lZDI1NTE5...``).  Base64 lines of PEM
  certificates / public keys are not special-cased and come out as
  ``high-entropy`` (harmless over-redaction).
* ``secret-assignment`` replaces only the value, keeping the name, for
  ``NAME=value``, ``NAME: value``, ``"name": "value"``, ``name := "v"``,
  ``name => 'v'``, ``export NAME=value``, ``--password value``,
  ``name: str = "v"`` and ``Authorization: Basic <v>`` when the *name*
  contains secret/token/passw/passphrase/pwd/api_key/apikey/api-key/
  private_key/credential/auth.  When the name's last word names a secret
  (``db_password``, ``apiKey``, ``GITHUB_TOKEN``, ``signing_key``: ``_strength``)
  the value is a secret whatever it looks like (``Summer2024Pass``, ``letmein``
  in an INI file, ``secret``), unless it is a placeholder or code (a call, a
  type annotation, a variable: ``_code_not_value``).  Also by their place:
  ``.netrc``/``.pgpass``/``redis.conf`` passwords, a Kubernetes Secret's data,
  YAML block scalars, values wrapped onto a second line, and keys by name
  (``ENCRYPTION_KEY=<hex>``).  Not treated as secrets:
  - names that are clearly metadata: ``*_type``, ``*_count``, ``max_tokens``,
    ``*_file``/``*_path``/``*_url``/``*_endpoint``, ``tokenizer``,
    ``author``/``authority``/``authenticated``, ``PWD``/``OLDPWD``, ...;
  - placeholder values: empty, ``${DB_PASSWORD}``, ``$TOKEN``,
    ``${{ secrets.X }}``, ``{{ token }}``, ``<your-token>``, ``%(pw)s``,
    ``***``, ``xxxx``, ``...``, ``your_api_key_here``, ``changeme``,
    ``changeit``, ``placeholder``, ``example``, ``null``/``None``/``true``/
    ``false``/``undefined``, numbers, and a few config enum words
    (``basic``, ``oauth2``, ``required``, ``invalid``, ...);
  - code, not data: ``token = get_token()``, ``password=self.password``,
    ``api_key=api_key`` (an identifier that itself names a secret),
    ``tokens_start = pre_loc`` (an identifier after a spaced ``=``),
    ``f(auth_token=environment_key)`` (keyword argument), ``{"page_token":
    next_page}``, ``token.map = ...`` (attribute of an object), paths
    (``PASSWORD_FILE=/run/secrets/db``), type annotations (``password: str``,
    ``tokens: ParseResults``, ``x: TypeAlias = ...``), strings that are
    themselves names or enum values (``ENV_API_KEY = "ANTHROPIC_API_KEY"``,
    ``"refresh_token"``, ``"oidc_federation"``), URNs (``oauth:grant-type``),
    CSS colours, and prose after a colon or flag (``Password: must be at
    least 8 characters``, ``the --password option``).  A plain word after
    ``name:`` counts as a value only YAML-style: name first on its line,
    nothing after the word.
  - the word in prose ("reset your password", "bearer tokens expire").
  Over-redaction of a weak password is preferred to a leak of a strong one,
  but code identifiers are left alone because users search for them.
* ``bearer-token``: the credential after ``Bearer`` when it has 12+ chars
  with a digit, or 20+ chars.  ``Bearer $TOKEN`` / ``${TOKEN}`` / ``<token>``
  are kept.
* An unquoted value runs to the next whitespace or quote, whatever it holds
  (``DB_PASSWORD=Xk9mP2&vL8qRt4`` is redacted whole), except: in a URL query
  or JDBC parameter list (the name follows ``?``, ``&`` or ``;``) the next
  separator ends it; in JSON-escaped text an escaped newline/tab/quote ends
  it; and a trailing ``, ; . : ! ?`` or a closing bracket the value did not
  open is left outside (``f(password=x)``), unless the value ends its
  ``NAME=value`` / ``name: value`` line.  ``get_token()``, ``os.environ.get(``,
  ``Optional[str]`` and ``{user:`` are code, not values.
* Google Docs/Drive/Sheets ids and IPFS CIDs are ids, not secrets: kept.
* Limits: a secret with no vendor prefix, no secret-ish name and no
  randomness (``hunter2`` on its own line) cannot be told from prose.
* ``url-password`` keeps scheme, user and host:
  ``postgres://app:[redacted:url-password]@db:5432/x``.  A token used as the
  *user* part (``https://ghp_...@github.com``) is caught by its own prefix.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter

from recall.core.lazy_re import lazy  # every pattern below compiles when first used

__all__ = ["redact", "redact_counts", "redact_stated", "KINDS", "REDACTION_VERSION"]

# The version of these rules. Bump it whenever a change makes them redact more: the history
# stored under an older version (the archive, the index, state.db's session facts, memories)
# is re-redacted once, in the background (indexer/reredact_archive.py, docs/redaction.md).
#   1: the rules before issue 17's audit
#   2: the vendor formats of gitleaks/trufflehog/detect-secrets, Basic credentials, command-line
#      passwords, unquoted values that no longer stop at & ; , ( ) { } [ ] < > \
#   3: (issue 28) a value under a name whose head is a secret is one whatever it looks like
#      (Summer2024Pass, letmein in an INI file), .netrc, .pgpass, redis.conf, a Kubernetes
#      Secret's data, registry logins, values wrapped onto a second line, keys by name
#   4: (issue 35) a .pgpass line inside a sentence, "the deploy pw is ...", jdbc:oracle:thin
#      user/password, SSHPASS=, twilio Client(sid, token), "secret = word" alone on its line,
#      a URL password holding # < >, strong passwords that start like a flag, a home path or
#      a call (-Az=Uv|8t/0o, ~vUEw6t, cTFUaF1(w)
#   5: (issue 46) Basic credentials wrapped, URL-encoded or concatenated, built from a literal
#      (b64encode(b"user:PW")), auth=("user", "PW") and HTTPBasicAuth; curl -su/-ku/-U, a password
#      quoted apart from its user, a curl continued over lines, httpie -a, argv lists; sshpass
#      options with arguments before -p; YAML anchors and tags before a value, a value on the
#      next line, container env lists; codes, PINs, combinations, tokens, keys and secrets
#      said in a sentence ("the door code is ...", "PIN: 4821", "sandbox token: tok_...")
REDACTION_VERSION = 5

KINDS = (
    "anthropic-key",
    "openai-key",
    "aws-access-key",
    "aws-secret-key",
    "github-token",
    "gitlab-token",
    "slack-token",
    "stripe-key",
    "bearer-token",
    "jwt",
    "private-key",
    "url-password",
    "secret-assignment",
    "high-entropy",
    # vendor formats from the public rule sets (gitleaks, trufflehog, detect-secrets)
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
    "npm-token",
    "pypi-token",
    "google-api-key",
    "google-oauth",
    "sendgrid-key",
    "grafana-token",
    "docker-token",
    "doppler-token",
    "atlassian-token",
    "linear-key",
    "vendor-token",
    "basic-auth",
    "cli-password",
)

_MARK = "[redacted:"
_MAX_PASSES = 4

# Span priorities: lower wins when spans overlap.
_P_PEM, _P_PREFIX, _P_JWT, _P_BEARER, _P_URL, _P_ASSIGN, _P_BASIC, _P_ENTROPY = range(8)

# --------------------------------------------------------------------------
# <private> blocks
# --------------------------------------------------------------------------
# The tag as typed, HTML-escaped (&lt;private&gt;, as in a fetched page or a tool's
# HTML output), as a numeric entity, JSON-escaped (\u003c) or full-width.
_LT = r"(?:<|&lt;|&#0*60;|&#x0*3c;|\\u003c|\uff1c)"
_GT = r"(?:>|&gt;|&#0*62;|&#x0*3e;|\\u003e|\uff1e)"
_PRIV_TAG = lazy(_LT + r"\s*(/)?\s*private(?:\s[^<>]*?)?(/)?\s*" + _GT, re.I)
_PRIV_HINTS = ("<", "&lt", "&#", "\\u003c", "\uff1c")


def _may_hold_private(low: str) -> bool:
    """A cheap test on lowercased text before the tag regex runs: the word and an opening
    bracket in one of the tag's spellings."""
    return "private" in low and any(h in low for h in _PRIV_HINTS)


def _strip_private(text: str) -> tuple[str, int]:
    out: list[str] = []
    depth = 0
    last = 0
    blocks = 0
    for m in _PRIV_TAG.finditer(text):
        closing = m.group(1) is not None
        if not closing and m.group(2) is not None:  # <private/>: empty element
            if depth == 0:
                out.append(text[last : m.start()])
                out.append(" ")
                last = m.end()
                blocks += 1
            continue
        if closing:
            if depth == 0:
                # A closer with no opener ends a block opened in an earlier message
                # (an unclosed <private> hides the rest of its own message): what
                # comes before it (back to the previous block) is private too.
                # Nothing leaked wins over keeping a message that only talks about
                # the tag.
                out.append(" ")
                last = m.end()
                blocks += 1
                continue
            depth -= 1
            if depth == 0:
                last = m.end()
        else:
            if depth == 0:
                out.append(text[last : m.start()])
                out.append(" ")
                blocks += 1
            depth += 1
    if blocks == 0:
        return text, 0
    if depth == 0:
        out.append(text[last:])
    return "".join(out), blocks


def private_open_after(text: str, open_before: bool = False) -> bool:
    """Whether a ``<private>`` block is still open at the end of ``text`` (``open_before``: one
    was open when it began). A closer with no open block is ignored, as ``redact`` does."""
    if not _may_hold_private(text.lower()):
        return open_before
    depth = 1 if open_before else 0
    for m in _PRIV_TAG.finditer(text):
        if m.group(1) is not None:
            depth = max(0, depth - 1)
        elif m.group(2) is None:  # an opener (``<private/>`` opens nothing)
            depth += 1
    return depth > 0


def _remove_private(text: str) -> tuple[str, int]:
    total = 0
    for _ in range(4):
        text, n = _strip_private(text)
        total += n
        # Every opener present before the strip was consumed, so an opener
        # found now was glued together by the removal (contrived input).
        if n == 0 or not any(t.group(1) is None for t in _PRIV_TAG.finditer(text)):
            return text, total
    # Pathological nesting: fail closed, drop from the first opener on.
    for m in _PRIV_TAG.finditer(text):
        if m.group(1) is None:
            return text[: m.start()] + " ", total + 1
    return text, total


# --------------------------------------------------------------------------
# Long runs of token characters: vendor prefixes and high entropy live here.
# --------------------------------------------------------------------------
# A separator char, then a run of >= 20 token chars that contains at least one
# upper-case letter.  The leading separator gives sre a charset prefix so text
# is skipped quickly, and requiring an upper-case letter drops the common
# lower-case runs (paths, snake_case, kebab-case) in C: every vendor token
# except Slack's hex ``xoxp-`` ones and every high-entropy candidate has one
# (a random 20-char base62 string lacks upper case with p < 0.00002).
_RUN_FIND = lazy(r"[^A-Za-z0-9+/_\-](?=[A-Za-z0-9+/_\-]{20})([a-z0-9+/_\-]*+[A-Z][A-Za-z0-9+/_\-]*+)")
_RUN_HEAD = lazy(r"(?=[A-Za-z0-9+/_\-]{20})[a-z0-9+/_\-]*+[A-Z][A-Za-z0-9+/_\-]*+")
_SLACK_XOX = lazy(r"x(?<![A-Za-z0-9].)ox[abposre]-[A-Za-z0-9\-]{10,}", re.S)

# Every alternative starts with a literal (so sre gets a charset prefix) and
# then checks, by a fixed-width lookbehind, that the token does not start in
# the middle of a word: that keeps "task-..." out and the scan linear.  The
# kind is derived from the first characters (_prefixed_kind).
_B = r"(?<![A-Za-z0-9].)"
_PREFIXED = lazy(
    r"s" + _B + r"k-ant-[A-Za-z0-9_\-]{20,}"
    r"|s" + _B + r"k-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"
    r"|s" + _B + r"k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|r" + _B + r"k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|w" + _B + r"hsec_[A-Za-z0-9+/]{20,}"
    r"|A" + _B + r"(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|g" + _B + r"h[pousr]_[A-Za-z0-9]{30,}"
    r"|g" + _B + r"ithub_pat_[A-Za-z0-9_]{30,}"
    r"|g" + _B + r"l(?:pat|dt|rt|ptt|ft|oas|soat|cbt|imt|agent)-[A-Za-z0-9_\-]{20,}"
    r"|x" + _B + r"app-[0-9]-[A-Za-z0-9\-]{10,}",
    re.S,
)
_DOT_TAIL = lazy(r"(?:\.[A-Za-z0-9_\-]+)+")  # routable gitlab tokens
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

_SLACK_HOOK_PATHS = ("com/services/", "com/workflows/", "com/triggers/")

_DIGIT = lazy(r"[0-9]")
_HEXISH = lazy(r"(?:0[xX])?[0-9a-fA-F_\-]+")
_HEX_SEG = lazy(
    r"(?<![A-Za-z0-9])(?:[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![A-Za-z0-9])"
)
# "Words": lower-case runs (optionally Capitalised), long digit runs (dates,
# versions) and stand-alone acronyms.  Random base62 rarely has many.
_WORD = lazy(r"[A-Z]?[a-z]{3,}|[0-9]{4,}|(?<![A-Za-z])[A-Z]{3,}(?![A-Za-z])")
_CLASS_RUN = lazy(r"[A-Z]+|[a-z]+|[0-9]+")
_NOT_SECRET_RUN = lazy(
    r"(?:sha1|sha256|sha384|sha512)-"  # SRI / npm integrity
    r"|pk_(?:live|test)_"  # Stripe publishable keys are public by design
    # SSH *public* key blobs (authorized_keys, *.pub): the base64 encodes the
    # key type, "ssh-rsa" / "ssh-ed25519" / "ecdsa-sha2-..." / "ssh-dss"
    r"|AAAA(?:B3NzaC1yc2E|C3NzaC1lZDI1NTE5|E2VjZHNhLXNoYTItbmlzdHA|B3NzaC1kc3M)"
    r"|(?:msg|toolu|srvtoolu|req|msgbatch|file|batch|compact)_01[A-Za-z0-9]{16,40}$"
)


def _mixed(s: str) -> bool:
    return not s.islower() and not s.isupper() and _DIGIT.search(s) is not None


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _random_looking(run: str, minlen: int = 32) -> bool:
    core = run.rstrip("=")[:4096]  # a prefix is representative; bounds the cost
    if len(core) < minlen or not _mixed(core) or _HEXISH.fullmatch(core):
        return False
    if _NOT_SECRET_RUN.match(core):
        return False
    if _HEX_SEG.search(core):  # drop hashes/uuids embedded in paths/urls
        core = _HEX_SEG.sub("", core)
        if len(core) < minlen or not _mixed(core):
            return False
    n = len(core)
    if sum(map(len, _WORD.findall(core))) >= 0.6 * n:
        return False
    # random text switches between upper/lower/digit on ~60% of adjacent
    # pairs; identifiers and paths on far fewer
    if len(_CLASS_RUN.findall(core)) - 1 < 0.3 * (n - 1):
        return False
    return _entropy(core) >= 3.8


_PLAIN_SEG = lazy(r"[a-z]*|[0-9]*|v[0-9]+")


def _trim_path(text: str, s: int, e: int) -> tuple[int, int]:
    """Keep plain leading/trailing path segments of a flagged run out of the
    replacement (``discord.com/api/webhooks/123/<token>``).  Only pure
    lowercase words or numbers are peeled off, and only while what remains
    still looks random, so no meaningful part of a base64 secret leaks."""
    for _ in range(8):
        cut = text.find("/", s, e)
        if cut < 0 or not _PLAIN_SEG.fullmatch(text, s, cut) or not _random_looking(text[cut + 1 : e]):
            break
        s = cut + 1
    for _ in range(8):
        cut = text.rfind("/", s, e)
        if cut < 0 or not _PLAIN_SEG.fullmatch(text, cut + 1, e) or not _random_looking(text[s:cut]):
            break
        e = cut
    return s, e


def _openai_ok(tok: str) -> bool:
    body = tok.split("-", 1)[1]
    return len(body) >= 40 or _mixed(body)


def _prefixed_kind(tok: str) -> str:
    c = tok[0]
    if c == "s":
        if tok.startswith("sk-ant-"):
            return "anthropic-key"
        if tok[2] == "-":
            return "openai-key"
        return "stripe-key"
    if c == "r" or c == "w":
        return "stripe-key"
    if c == "A":
        return "aws-access-key"
    if c == "g":
        return "gitlab-token" if tok[1] == "l" else "github-token"
    return "slack-token"


# Vendor formats from the public rule sets (gitleaks' rules, trufflehog's detectors,
# detect-secrets' plugins): (prefix, kind, pattern of the whole token).  A token starts a
# run of token characters (checked with one ``str.startswith`` per run) or, for the dotted
# ones, follows ``<prefix>.`` (checked when a run starts right after a dot).  Each
# pattern ends where the token does; what follows must not be a token character.
_VENDOR_TABLE = (
    ("dapi", "databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9]+)?"),
    ("key-", "mailgun-key", r"key-[a-f0-9]{32}"),
    ("shpat_", "shopify-token", r"shpat_[a-fA-F0-9]{32}"),
    ("shpss_", "shopify-token", r"shpss_[a-fA-F0-9]{32}"),
    ("shpca_", "shopify-token", r"shpca_[a-fA-F0-9]{32}"),
    ("shppa_", "shopify-token", r"shppa_[a-fA-F0-9]{32}"),
    ("dop_v1_", "digitalocean-token", r"dop_v1_[a-f0-9]{64}"),
    ("doo_v1_", "digitalocean-token", r"doo_v1_[a-f0-9]{64}"),
    ("dor_v1_", "digitalocean-token", r"dor_v1_[a-f0-9]{64}"),
    ("PMAK-", "postman-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("NRAK-", "newrelic-key", r"NRAK-[A-Z0-9]{27}"),
    ("NRJS-", "newrelic-key", r"NRJS-[a-f0-9]{19}"),
    ("NRII-", "newrelic-key", r"NRII-[A-Za-z0-9_\-]{32}"),
    ("LTAI", "alibaba-key", r"LTAI[A-Za-z0-9]{20}"),
    ("AGE-SECRET-KEY-1", "age-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("SK", "twilio-token", r"SK[0-9a-fA-F]{32}"),
    ("sbp_", "supabase-token", r"sbp_[a-f0-9]{40}"),
    ("sb_secret_", "supabase-token", r"sb_secret_[A-Za-z0-9_\-]{20,}"),
    ("sntryu_", "sentry-token", r"sntryu_[a-f0-9]{64}"),
    ("sntrys_", "sentry-token", r"sntrys_[A-Za-z0-9+/=_\-]{40,}"),
    ("hf_", "huggingface-token", r"hf_(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])[A-Za-z0-9]{30,40}"),
    ("api_org_", "huggingface-token", r"api_org_[A-Za-z]{34}"),
    ("npm_", "npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("pypi-AgEIcHlwaS5vcmc", "pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("AIza", "google-api-key", r"AIza[A-Za-z0-9_\-]{35}"),
    ("GOCSPX-", "google-oauth", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    ("1//0", "google-oauth", r"1//0[A-Za-z0-9_\-]{40,}"),
    ("glsa_", "grafana-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("glc_", "grafana-token", r"glc_[A-Za-z0-9+/]{32,}={0,2}"),
    ("dckr_pat_", "docker-token", r"dckr_pat_[A-Za-z0-9_\-]{27,}"),
    ("ATATT3", "atlassian-token", r"ATATT3[A-Za-z0-9_=\-]{100,}"),
    ("ATCTT3", "atlassian-token", r"ATCTT3[A-Za-z0-9_=\-]{100,}"),
    ("ATBB", "atlassian-token", r"ATBB[A-Za-z0-9]{32}"),
    ("lin_api_", "linear-key", r"lin_api_[A-Za-z0-9]{40}"),
    ("xai-", "vendor-token", r"xai-[A-Za-z0-9]{80}"),
    ("gsk_", "vendor-token", r"gsk_[A-Za-z0-9]{52}"),
    ("r8_", "vendor-token", r"r8_[A-Za-z0-9]{37}"),
    ("tskey-", "vendor-token", r"tskey-(?:api|auth|client|webhook)-[A-Za-z0-9\-]{20,}"),
    ("figd_", "vendor-token", r"figd_[A-Za-z0-9_\-]{40}"),
    ("pnu_", "vendor-token", r"pnu_[A-Za-z0-9]{36}"),
    ("rubygems_", "vendor-token", r"rubygems_[a-f0-9]{48}"),
    ("xkeysib-", "vendor-token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("sq0atp-", "vendor-token", r"sq0atp-[A-Za-z0-9_\-]{22,}"),
    ("sq0csp-", "vendor-token", r"sq0csp-[A-Za-z0-9_\-]{40,}"),
    ("FLWSECK", "vendor-token", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X"),
    ("ntn_", "vendor-token", r"ntn_[A-Za-z0-9]{40,}"),
    ("pul-", "vendor-token", r"pul-[a-f0-9]{40}"),
    ("CLOJARS_", "vendor-token", r"CLOJARS_[a-z0-9]{60}"),
    ("lsv2_", "vendor-token", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("pcsk_", "vendor-token", r"pcsk_[A-Za-z0-9_]{40,}"),
    ("oy2", "vendor-token", r"oy2[a-z0-9]{43}"),
    ("HRKU-", "vendor-token", r"HRKU-[A-Za-z0-9_\-]{40,}"),
)
# after a dot: "hvs.<run>", "SG.<run>.<run>", ...
_VENDOR_DOTTED = (
    ("hvs.", "vault-token", r"hvs\.[A-Za-z0-9_\-]{24,}"),
    ("hvb.", "vault-token", r"hvb\.[A-Za-z0-9_\-]{24,}"),
    ("SG.", "sendgrid-key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    ("ya29.", "google-oauth", r"ya29\.[A-Za-z0-9_\-]{30,}"),
    ("dp.pt.", "doppler-token", r"dp\.pt\.[A-Za-z0-9]{40,}"),
    ("dp.st.", "doppler-token", r"dp\.st\.(?:[a-z0-9\-_]{2,35}\.)?[A-Za-z0-9]{40,}"),
    ("dp.ct.", "doppler-token", r"dp\.ct\.[A-Za-z0-9]{40,}"),
    ("dp.sa.", "doppler-token", r"dp\.sa\.[A-Za-z0-9]{40,}"),
    ("dt0c01.", "vendor-token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
)
_TOKEN_END = r"(?![A-Za-z0-9_\-])"


def _vendor_index(table) -> dict:
    out: dict = {}
    for prefix, kind, pattern in table:
        out.setdefault(prefix, []).append((kind, lazy(pattern + _TOKEN_END)))
    return out


_VENDOR = _vendor_index(_VENDOR_TABLE)
_VENDOR_STARTS = tuple(_VENDOR)
_VENDOR_DOT = _vendor_index(_VENDOR_DOTTED)
_VENDOR_DOT_ENDS = tuple(_VENDOR_DOT)


def _vendor_at(text: str, s: int):
    """(start, end, kind) of a vendor token starting the run at ``s`` (or just before it,
    for the dotted prefixes), else None."""
    if text[s : s + 2] in _VENDOR_HEADS and text.startswith(_VENDOR_STARTS, s):
        for prefix, rules in _VENDOR.items():
            if text.startswith(prefix, s):
                for kind, rx in rules:
                    m = rx.match(text, s)
                    if m is not None:
                        return s, m.end(), kind
    if s and text[s - 1] == "." and text.endswith(_VENDOR_DOT_ENDS, 0, s):
        for prefix, rules in _VENDOR_DOT.items():
            ps = s - len(prefix)
            if ps >= 0 and text.startswith(prefix, ps) and (ps == 0 or text[ps - 1] not in _ALNUM):
                for kind, rx in rules:
                    m = rx.match(text, ps)
                    if m is not None:
                        return ps, m.end(), kind
    return None


_VENDOR_HEADS = frozenset(p[:2] for p in _VENDOR_STARTS)
# the formats whose token can have no upper-case letter (hex bodies): only runs starting
# with one of these are worth a look among the (many) lower-case runs
_LOWER_VENDOR_STARTS = tuple(
    p for p, _k, rx in _VENDOR_TABLE if p.islower() and re.fullmatch(r"[a-z0-9_\-]+", p) and "A-Z" not in rx
)
_LOWER_VENDOR_BYTES = tuple(p.encode("ascii") for p in _LOWER_VENDOR_STARTS)


# ids that look random but are not secrets, told by what comes before them: Google
# Docs/Drive/Sheets ids and IPFS content ids are what users search for.
_PUBLIC_ID_HOSTS = (
    "docs.google.",
    "drive.google.",
    "sheets.google.",
    "slides.google.",
    "forms.google.",
    "script.google.",
    "/ipfs/",
    "/ipns/",
    "ipfs://",
    "ipns://",
)
_IPFS_CID = lazy(r"Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,}|z[1-9A-HJ-NP-Za-km-z]{46,}")


def _public_id(text: str, s: int, run: str) -> bool:
    if _IPFS_CID.fullmatch(run.rstrip("/").rsplit("/", 1)[-1]):
        return True
    lo = s - 48 if s > 48 else 0
    window = text[lo : s + 8]  # the run may start with the "//" of "ipfs://"
    for host in _PUBLIC_ID_HOSTS:
        if host in window:
            return True
    return False


# Runs are found on a translated copy: token chars become "a", everything
# else " ", and ``bytes.find`` looks for 20 a's in a row (memchr speed).  For
# ASCII text byte offsets are character offsets, so that copy also gives the
# run boundaries; other text takes the regex route.
_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_RUN_TABLE = bytes(0x61 if b in _RUN_BYTES else 0x20 for b in range(256))
_RUN_NEEDLE = b"a" * 20


def _scan_runs(text: str, spans: list) -> None:
    if "xox" in text:
        for m in _SLACK_XOX.finditer(text):
            spans.append((m.start(), m.end(), _P_PREFIX, "slack-token"))
    if text.isascii():
        t = text.encode("ascii").translate(_RUN_TABLE)
        i = t.find(_RUN_NEEDLE)
        while i >= 0:  # i starts a run: otherwise the needle would be found at i - 1
            e = t.find(b" ", i + 20)
            if e < 0:
                e = len(t)
            # runs without upper case hold no candidates, but for a few vendor formats
            if not text[i:e].islower() or text.startswith(_LOWER_VENDOR_STARTS, i):
                _check_run(text, i, e, spans)
            i = t.find(_RUN_NEEDLE, e)
        return
    raw = text.encode("utf-8", "surrogatepass")
    t = raw.translate(_RUN_TABLE)
    i = t.find(_RUN_NEEDLE)
    if i < 0:
        return
    m = _RUN_HEAD.match(text)
    if m is not None:
        _check_run(text, 0, m.end(), spans)
    for m in _RUN_FIND.finditer(text):
        _check_run(text, m.start(1), m.end(), spans)
    # lower-case vendor tokens: looked for on the bytes (offsets differ from the text's,
    # but a run is a run), and only on a hit located in the text
    while i >= 0:
        e = t.find(b" ", i + 20)
        if e < 0:
            e = len(t)
        if raw.startswith(_LOWER_VENDOR_BYTES, i) and raw[i:e].islower():
            for m in _ANY_RUN.finditer(text):
                if m.group().islower() and text.startswith(_LOWER_VENDOR_STARTS, m.start()):
                    _check_run(text, m.start(), m.end(), spans)
            return
        i = t.find(_RUN_NEEDLE, e)


_ANY_RUN = lazy(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{20,}")


def _check_run(text: str, s: int, e: int, spans: list) -> None:
    n = len(text)
    if text[s : s + 2] in _VENDOR_HEADS or text[s - 1 : s] == ".":
        v = _vendor_at(text, s)
        if v is not None:
            spans.append((v[0], v[1], _P_PREFIX, v[2]))
            if v[1] >= e:
                return
    hit = False
    p = s
    while True:
        pm = _PREFIXED.search(text, p, e)
        if pm is None:
            break
        ts, te = pm.span()
        p = te
        tok = pm.group()
        kind = _prefixed_kind(tok)
        if kind == "openai-key" and not _openai_ok(tok):
            continue
        if kind == "gitlab-token" and te == e and te < n and text[te] == ".":
            dm = _DOT_TAIL.match(text, te)
            if dm:
                te = dm.end()
                p = te
        spans.append((ts, te, _P_PREFIX, kind))
        hit = True
    if hit:
        return
    if text.startswith(_SLACK_HOOK_PATHS, s) and text.endswith("hooks.slack.", 0, s):
        cut = text.index("/", s + 4) + 1
        if e - cut >= 8:
            spans.append((cut, e, _P_PREFIX, "slack-token"))
        return
    if e - s >= 32:
        te = e
        while te < n and text[te] == "=" and te - e < 3:
            te += 1
        if text.endswith("h1:", 0, s):  # go.sum checksum
            return
        run = text[s:te]
        slashes = run.count("/")
        if slashes >= 3 and slashes * 12 > len(run):
            # Path-like (base64 has one "/" per 64 chars): judge each segment
            # on its own so "xybp888/iOS-SDKs/blob/master/iPhoneOS13" stays.
            off = s
            for seg in run.split("/"):
                if len(seg) >= 24 and _random_looking(seg, 24) and not _public_id(text, off, seg):
                    spans.append((off, off + len(seg), _P_ENTROPY, "high-entropy"))
                off += len(seg) + 1
        elif _random_looking(run) and not _public_id(text, s, run):
            s, te = _trim_path(text, s, te)
            spans.append((s, te, _P_ENTROPY, "high-entropy"))


# --------------------------------------------------------------------------
# JWT, PEM, bearer, URL passwords
# --------------------------------------------------------------------------
# the lookbehind sits after the first literal to keep sre's literal prefix
_JWT = lazy(
    r"e(?<![A-Za-z0-9_\-].)yJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*"
    r"(?:\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+)?",  # JWE has five parts
    re.S,
)

_PEM_BEGIN = lazy(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazy(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# Body of a truncated block: base64 lines, armor headers, blank lines, with
# real or JSON-escaped newlines.
_PEM_BODY = lazy(
    r"(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z\-]*: ?[^\n\\]*)?"
    r"(?=[ \t]*(?:\r?\n|\\r?\\n|$|[\"'])))*"
)

_BEARER = lazy(r"bearer[ \t]+(?!\[redacted:)([a-z0-9\-._~+/]+=*)")
_BEARER_I = lazy(_BEARER.pattern, re.I)

_URL_PW = lazy(r"://([^\s:@/?#\[\]\"'<>]*):(?!\[redacted:)([^\s@/?\"']+)@(?=[A-Za-z0-9\[])")


def _scan_pem(text: str, spans: list) -> None:
    pos = 0
    have_end = "-----END" in text
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            return
        em = _PEM_END.search(text, m.end()) if have_end else None
        if em is not None:
            end = em.end()
        else:
            have_end = False
            end = _PEM_BODY.match(text, m.end()).end()
        spans.append((m.start(), end, _P_PEM, "private-key"))
        pos = end


def _scan_jwt(text: str, spans: list) -> None:
    for m in _JWT.finditer(text):
        spans.append((m.start(), m.end(), _P_JWT, "jwt"))


def _scan_bearer(text: str, low: str | None, spans: list) -> None:
    it = _BEARER.finditer(low) if low is not None else _BEARER_I.finditer(text)
    for m in it:
        s, e = m.span(1)
        if m.start() and text[m.start() - 1] in _ALNUM:
            continue
        tok = text[s:e]
        if (len(tok) >= 12 and _DIGIT.search(tok)) or len(tok) >= 20:
            spans.append((s, e, _P_BEARER, "bearer-token"))


def _scan_url(text: str, spans: list) -> None:
    for m in _URL_PW.finditer(text):
        pw = m.group(2)
        if _placeholder(pw):
            continue
        spans.append((m.start(2), m.end(2), _P_URL, "url-password"))


# --------------------------------------------------------------------------
# Formats a run of token characters cannot hold, each behind its own literal
# --------------------------------------------------------------------------
_DJANGO = lazy(r"django-insecure-[^\s\"'`]{20,}")
# Azure AD client secrets: 3 chars, a digit, "Q~", 31-34 chars (gitleaks azure-ad-client-secret)
_AZURE_AD = lazy(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])")
# Azure SAS signatures (storage account keys are long base64: high-entropy catches them)
_AZURE_SIG = lazy(r"(?<![A-Za-z0-9])sig=([A-Za-z0-9%+/=_\-]{16,})")
_HEX32 = lazy(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])")
_TWILIO_SID = lazy(r"AC(?<![A-Za-z0-9]..)[0-9a-f]{32}(?![A-Za-z0-9])")  # (literal first: fast)
# "Basic <base64 of user:password>" anywhere (a header without a name, prose, curl -H)
_BASIC = lazy(r"basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", re.I)
# passwords on command lines: curl -u user:pw / --user user:pw, sshpass -p pw,
# mysql-family -pPW (no space: "-p" alone prompts)
_CLI_USER = lazy(
    r"(?<![A-Za-z0-9_\-])(?:-u|--user|--proxy-user)(?:[ \t]+|=)?(?:\\{0,2}(?P<q>[\"']))?[^\s:\"'@/]{1,64}:"
    r"(?P<v>(?(q)[^\n\"']{1,256}|[^\s\"']{1,256}))"
)
_SSHPASS = lazy(
    r"sshpass(?:[ \t]+-[^p\s]\S{0,64}){0,8}[ \t]+-p[ \t]*(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)
# registry logins: docker/podman/buildah/skopeo/nerdctl/oras/helm login -p PW (--password: _FLAG)
_REGISTRY_LOGIN = lazy(
    r"(?:docker|podman|buildah|skopeo|nerdctl|oras|crane|helm(?:[ \t]+registry)?)[ \t]+login\b"
    r"[^\n|;&]{0,300}?[ \t](?:-p|--password)(?:[ \t]+|=)"
    r"(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)
# echo PW | docker login --password-stdin
_ECHO_LOGIN = lazy(
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"'|]{1,256}))"
    r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?[\w\-]+(?:[ \t]+registry)?[ \t]+login\b[^\n]{0,200}--password-stdin"
)
# redis-cli -a PW
_REDIS_CLI = lazy(
    r"redis-cli\b[^\n|;&]{0,300}?[ \t]-a[ \t]+(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)
_MYSQL = lazy(
    r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,300}?[ \t]-p(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))",
    re.I,
)


def _scan_literals(text: str, low: str, spans: list) -> None:
    # Each detector sits behind the cheapest test that cannot miss it: a rare single
    # character first (memchr speed), then its literal.
    if "~" in text and "Q~" in text:
        for m in _AZURE_AD.finditer(text):
            spans.append((m.start(), m.end(), _P_PREFIX, "azure-secret"))
    if "&" in text and "sig=" in text:  # a SAS URL always has sv=...&sig=
        for m in _AZURE_SIG.finditer(text):
            spans.append((m.start(1), m.end(1), _P_PREFIX, "azure-sas"))
    if "insecure" in low:
        for m in _DJANGO.finditer(text):
            s, e = m.span()
            e = _trim_tail(text, s + 16, e)
            spans.append((s, e, _P_PREFIX, "django-secret"))
    # a Twilio auth token is 32 hex with no prefix: known by the name nearby, or by the
    # account SID (AC + 32 hex) it goes with
    if "twilio" in low or ("AC" in text and _TWILIO_SID.search(text)):
        for m in _HEX32.finditer(text):
            spans.append((m.start(), m.end(), _P_PREFIX, "twilio-token"))
    if "basic" in low:
        for m in _BASIC.finditer(text):
            if _basic_credential(m.group(1)):
                spans.append((m.start(1), m.end(1), _P_BASIC, "basic-auth"))
    if " -" not in text:  # every command-line form below has a flag after a space
        return
    if "-u" in text:  # also --user, --proxy-user
        for m in _CLI_USER.finditer(text):
            if not _http_line(text, m.start()):
                continue  # docker run -u node:node, sudo -u: a user and group, not a password
            s, e = m.span("v")
            if not m.group("q"):
                e = _trim_tail(text, s, e)
            while e > s and text[e - 1] == "\\":  # the escape of a JSON-escaped closing quote
                e -= 1
            value = text[s:e]
            if e - s >= 3 and not value.isdigit() and not _placeholder(value):  # -u 1000:1000 is uid:gid
                spans.append((s, e, _P_ASSIGN, "cli-password"))
    if (" -p" in text or "--password" in text) and "login" in low:
        for rx in (_REGISTRY_LOGIN, _ECHO_LOGIN):
            for m in rx.finditer(text):
                s, e = m.span("qv") if m.group("qv") is not None else m.span("v")
                if not _placeholder(text[s:e], 2) and not _NOT_A_VALUE.fullmatch(text[s:e]):
                    spans.append((s, e, _P_ASSIGN, "cli-password"))
    if " -a" in text and "redis-cli" in low:
        for m in _REDIS_CLI.finditer(text):
            s, e = m.span("qv") if m.group("qv") is not None else m.span("v")
            if not _placeholder(text[s:e], 2) and not _NOT_A_VALUE.fullmatch(text[s:e]):
                spans.append((s, e, _P_ASSIGN, "cli-password"))
    if " -p" not in text:  # sshpass -p PW, mysql -pPW
        return
    if "sshpass" in low:
        for m in _SSHPASS.finditer(text):
            s, e = m.span("qv") if m.group("qv") is not None else m.span("v")
            if not _placeholder(text[s:e]):
                spans.append((s, e, _P_ASSIGN, "cli-password"))
    if "mysql" in low or "mariadb" in low:
        for m in _MYSQL.finditer(text):
            s, e = m.span("qv") if m.group("qv") is not None else m.span("v")
            if e - s >= 3 and not _placeholder(text[s:e]):
                spans.append((s, e, _P_ASSIGN, "cli-password"))


def _http_line(text: str, at: int) -> bool:
    """Is the command line around ``at`` an HTTP client's (curl, wget, a URL on it)?"""
    lo = text.rfind("\n", at - 300 if at > 300 else 0, at) + 1
    hi = text.find("\n", at, at + 500)
    line = text[lo : hi if hi >= 0 else at + 500].lower()
    return "curl" in line or "wget" in line or "http" in line or "://" in line


def _basic_credential(b64: str) -> bool:
    """Is ``b64`` base64 of ``user:password`` (what a Basic credential is)?"""
    import base64
    import binascii

    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if b":" not in raw:
        return False
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return decoded.isprintable()


# --------------------------------------------------------------------------
# NAME = value assignments
# --------------------------------------------------------------------------
_KW_ALT = (
    r"secret|token(?!iz)|passw|passphrase|pwd|api[_\-]?key|private[_\-]?key|credential"
    r"|auth(?!or(?!iz)|ent)"
    r"|(?<![a-z])pass(?![a-z])|(?<![a-z])pw(?![a-z])"  # DB_PASS, SMTP_PW (not bypass, compass)
)
_KEYWORD = lazy(_KW_ALT)
_KEYWORD_I = lazy(_KW_ALT, re.I)
# literals whose presence gates the keyword detectors; each keyword of
# _KW_ALT starts with one of them
_KW_LITERALS = ("token", "secret", "pass", "auth", "pwd", "api", "credential", "private", "pw")

_ASSIGN = lazy(
    r"(?:" + _KW_ALT + r")"
    r"(?P<rest>[a-z0-9_.\-]{0,64}+)"  # possessive: no backtracking into names
    r"(?P<nq>\\{0,2}[\"'])?"
    r"(?:"
    r"(?P<ann>[ \t]*:[ \t]*(?:str|string|bytes|secretstr|optional\[str\]|str[ \t]*\|[ \t]*none)[ \t]*(?==))?"
    r"[ \t]*(?P<sep>:=|=>|=(?!=[\s=])|:(?!:|//))[ \t]*"
    r")"
    r"(?P<scheme>(?:bearer|basic|token|digest)[ \t]+)?"
    r"(?!\\{0,2}[\"'`]?\[redacted:)"
    r"(?:(?P<oq>\\{0,2}[\"'`])(?P<qv>[^\n]{0,1024}?)(?P=oq)"
    # a quoted value wrapped onto a second line
    r"|(?P<wq>[\"'])(?P<wv>[^\n\"'`\\]{1,512}\n[^\n\"'`\\]{1,512})(?P=wq)"
    r"|(?P<bv>[^\s\"'`]{1,256}))"
)
_ASSIGN_I = lazy(_ASSIGN.pattern, re.I)
# "--password hunter2x": a command-line flag naming a secret, value after a space
_FLAG = lazy(
    r"--(?P<name>[a-z0-9_.\-]{0,64}?(?:" + _KW_ALT + r")[a-z0-9_.\-]{0,64}+)[ \t]+"
    r"(?!\[redacted:)(?P<bv>[^\s\"'`]{1,256})"
)
_FLAG_I = lazy(_FLAG.pattern, re.I)

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_META_NAME = lazy(
    r"(?:type|types|count|counts|len|length|size|limit|limits|max|min|file|files|path|paths|dir"
    r"|url|urls|uri|endpoint|helper|name|names|env|var|field|header|prefix|suffix|usage|used"
    r"|policy|method|methods|mode|required|enabled|disabled|ttl|expiry|expires|expires_at"
    r"|mechanism|encryption|cipher|kdf|hashing|protocol|flow|grant|complexity|strength|rotation|rounds"
    r"|iterations|reset|prompt|regex|pattern|rule|validator|validation"
    r"|expires_in|lifetime|provider|strategy|backend|scheme|realm|domain|server|host|port"
    r"|user|username|email|scope|scopes|audience|issuer|version|format|algorithm|alg|timeout"
    r"|retries|store|storage|cache|manager|service|handler|middleware|module|config|settings"
    r"|options|opts|index|idx|ids|position|offset|budget|estimate|ratio|rate|per_minute"
    r"|location|source|kind|label|description|desc|hint|message|msg|error|status|state"
    r"|error_?code)s?$"
)
_PLACEHOLDER = lazy(
    r"(?:\$\{?\{?[A-Za-z_][A-Za-z0-9_.:\-]*\}?\}?|\$\{\{.*\}\}|\$\(.*\)|\{\{.*\}\}|<[A-Za-z_][\w .\-:/|]*>|%\([A-Za-z_]+\)s"
    r"|%[A-Za-z_]+%|\{[A-Za-z_][^{}\s]*\}|(?:<[A-Za-z_][\w .\-:/|]*>[:@/ ._\-]*)+|\*+|[xX]{3,}|\.{3,}|\u2026|#+|-+|_+|\?+|your[-_ ].*|my[-_ ]?(?:secret|token|password|api[-_]?key).*"
    r"|my[-_][a-z\-_]*(?:secret|token|password|key)|.*[-_]here|\[redacted:.*"
    r"|&[A-Za-z_][A-Za-z0-9_.\-]*|!!(?:null|bool|int|float|map|seq|set|omap|timestamp)"  # a YAML anchor or tag alone
    r"|realm=.*)",  # WWW-Authenticate: Basic realm="..."
    re.S,
)
_PLACEHOLDER_WORDS = frozenset(
    """changeme change_me change-me changeit placeholder example sample dummy fake redacted
    masked hidden null none nil undefined true false yes no on off empty default
    basic bearer digest oauth oauth2 jwt saml oidc ldap sso kerberos ntlm apikey api_key
    required optional enabled disabled invalid expired missing revoked valid set unset present
    absent provided refreshed str string bytes int number bool boolean any object secretstr
    float dict list tuple optional union callable datetime uuid literal sequence mapping
    password passwd pass secret token foo bar baz""".split()
)
_NUMBER = lazy(r"[-+]?[0-9][0-9_,.]*[kKmM]?")
_DOTTED = lazy(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_IDENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_COLOR = lazy(r"(?:(?:bold|italic|underline|noinherit|bg:|border:) ?)*#[0-9a-fA-F]{3,8}")
# after "name: Word": "= ...", "| None", "[str]", ", other", ")": a type annotation
_ANNOTATION_TAIL = lazy(r"[ \t]*(?:=(?!=)|\||\[|,|\))")
# quoted or bare values that are names, not secrets: "ANTHROPIC_API_KEY",
# "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"
_NAMEISH = lazy(r"[A-Za-z_][A-Za-z_.:/\-]*")
_WORDLIKE = lazy(r"[A-Z]?[a-z]+")
# identifiers as people write them (snake_case, camelCase, PascalCase,
# CONSTANT_CASE); random tokens mix case without that structure
_CODE_IDENT = lazy(
    r"_*[a-z][a-z0-9]*(?:_[a-z0-9]+)*_*|_*[a-z]+(?:[A-Z][a-z0-9]+)+|_*[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*"
    r"|_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*"
)
_SNAKE_WORDS = lazy(r"[a-z]+(?:_[a-z]+)+")
_ONE_WORD = lazy(r"[A-Za-z][a-z]*")
_CAMEL = lazy(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
_SCHEME_IN_VALUE = lazy(r"(?i)(?:bearer|basic|token|digest)[ \t]+(?=\S)")


def _placeholder(v: str, strength: int = 0) -> bool:
    """Whether ``v`` stands for a value rather than being one. Under a name that is a
    password (``strength`` 2: ``password: secret``, ``DB_PASSWORD=password``) the words
    people really use as passwords are values."""
    if len(v) > 100:  # placeholders are short; keeps hostile input cheap
        return False
    if v.lower() in _PLACEHOLDER_WORDS:
        return strength < 2 or v not in _USED_AS_PASSWORDS
    return _PLACEHOLDER.fullmatch(v) is not None


# lower-case words of _PLACEHOLDER_WORDS that are, in a config or a compose file, the password
_USED_AS_PASSWORDS = frozenset("password passwd pass secret token admin".split())

# What a name is, by its last word (its head): ``db_password`` is a password, ``password_file``
# a file, ``auth_method`` a method. A value under a name whose head is a secret is a secret
# whatever it looks like (issue 28), unless it is a placeholder or code (see _value_span).
_NAME_WORDS = lazy(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PASSWORD_HEADS = frozenset("password passwd pass pwd pw passphrase passcode secret".split())
_SECRET_HEADS = _PASSWORD_HEADS | frozenset("token apikey credential credentials".split())
# ``<qualifier>_key``: a key that is a secret (``signing_key``), unlike ``sort_key`` or ``cache_key``
_KEY_QUALIFIERS = frozenset(
    """api secret private access auth signing encryption encrypt decryption master client app account
    service license licence webhook session consumer shared deploy admin root hmac jwt cookie
    crypto cipher aes sign signature storage""".split()
)


def _strength(name: str) -> int:
    """0: the name mentions a secret (``auth_method``, ``token_limit``); 1: it names one
    (``api_token``, ``apiKey``, ``signing_key``); 2: it names a password or secret."""
    words = _NAME_WORDS.findall(name)
    if not words:
        return 0
    head = words[-1].lower()
    if head in _PASSWORD_HEADS:
        return 2
    if head in _SECRET_HEADS:
        return 1
    if head == "key" and len(words) > 1 and words[-2].lower() in _KEY_QUALIFIERS:
        return 1
    return 0


class _Context:
    """Facts about the whole text that tell config from code, worked out when first asked."""

    __slots__ = ("text", "_ini", "_code", "_words")

    def __init__(self, text: str) -> None:
        self.text = text
        self._ini = self._code = None
        self._words: Counter | None = None

    def ini(self) -> bool:
        """An INI/TOML-style file: a ``[section]`` line."""
        if self._ini is None:
            self._ini = "[" in self.text and _INI_SECTION.search(self.text) is not None
        return self._ini

    def code(self) -> bool:
        """Source code: a definition, an import, a call ending a statement."""
        if self._code is None:
            t = self.text
            self._code = any(m in t for m in _CODE_MARKS)
        return self._code

    def elsewhere(self, word: str) -> bool:
        """``word`` appears more than once in the text, as a whole word: a variable in use."""
        if self._words is None:
            self._words = Counter(_WORD_RUN.findall(self.text[:200_000]))
        return self._words.get(word, 0) > 1


_INI_SECTION = lazy(r"(?m)^[ \t]*\[[A-Za-z0-9_. \-\"]{1,80}\][ \t]*$")
_CODE_MARKS = (
    "def ",
    "class ",
    "import ",
    "function ",
    "interface ",
    "struct ",
    "=>",
    "();",
    "self.",
    "this.",
    "const ",
    "let ",
    "var ",
    "func ",
    "return ",
    "fn ",
    "public ",
    "private ",
)
_WORD_RUN = lazy(r"[A-Za-z0-9_$]+")
# a CamelCase word that names a type (``token: AccessToken`` in a class body), by its ending
_TYPE_SUFFIX = lazy(
    r".*(?:Str|String|Type|Field|Model|Config|Settings|Info|Data|Schema|Response|Request|Results?|Provider"
    r"|Manager|Client|Session|Handler|Store|Object|Params?|Spec|Ref|Id|Base|Bytes|Value|Dict|List|Set|Map"
    r"|Enum|Literal|Callable|Protocol|Interface|Builder|Factory|Service|Context|Options|Headers?|Pair"
    r"|Tuple|Array|Sequence|Mapping|Token|Secret|Password|Key|Credentials?|Auth)"
)


def _keyword_positions(low: str) -> list[int]:
    """Start offsets of every keyword literal in ``low`` (sorted), found with
    ``str.find``, which beats one alternation regex by ~2x on ordinary text."""
    pos: list[int] = []
    for lit in _KW_LITERALS:
        if lit in low:
            i = low.find(lit)
            while i >= 0:
                pos.append(i)
                i = low.find(lit, i + 1)
    if len(pos) > 1:
        pos.sort()
    return pos


def _scan_assign(text: str, low: str | None, starts: list[int], spans: list) -> None:
    if low is not None:
        rx, hay = _ASSIGN, low
    else:  # case mapping is not 1:1 (e.g. U+0130): search the original with re.I
        rx, hay = _ASSIGN_I, text
        starts = [m.start() for m in _KEYWORD_I.finditer(text)]
    ctx = _Context(text)
    pos = 0
    for k in starts:
        if k < pos:
            continue
        m = rx.match(hay, k)
        if m is None:
            continue
        # on rejection resume right after the keyword, so that a rejected
        # match never hides an overlapping real one ("auth token=...")
        ne = pos = m.end("rest")
        if m.group("wv") is not None:
            _wrapped(text, m, ns_of(text, k), spans)
            pos = m.end()
            continue
        bare = m.group("qv") is None
        vs, ve = m.span("bv" if bare else "qv")
        sep = m.group("sep")
        scheme = m.group("scheme") is not None
        ns = ns_of(text, k)
        if text[ns - 2 if ns > 1 else 0 : ns] == "${":
            continue  # ${TOKEN:-default}, ${PASSWORD:?unset}: a shell expansion, not an assignment
        name = text[ns:ne].lower().lstrip("-.")
        if name in ("pwd", "oldpwd") or _meta_name(name):
            continue
        if "." in name and not _KEYWORD.search(name.rsplit(".", 1)[1]):
            continue  # token.map = ..., Token.Name.Builtin: ... (attribute of an object)
        strength = _strength(text[ns:ne].rsplit(".", 1)[-1])
        if bare:
            ve = _bare_end(text, vs, ve, text[ns - 1] if ns else "")
        elif m.group("qv") == "" and strength:
            continue  # password = "" (and a YAML block scalar is _scan_blocks')
        spaced = sep == "=" and text[m.start("sep") - 1] in " \t"
        span = _value_span(text, vs, ve, bare, scheme, spaced, strength)
        if span is None:
            continue
        vs, ve = span
        if bare and _code_not_value(text, ctx, m, ns, vs, ve, sep, scheme, spaced, strength):
            continue
        spans.append((vs, ve, _P_ASSIGN, _assign_kind(name)))
        if bare and strength:
            _continued(text, ve, spans)
        pos = max(pos, ve)


def ns_of(text: str, k: int) -> int:
    """The start of the name whose keyword is at ``k``: back to the start of the identifier."""
    ns = k
    floor = k - 64 if k > 64 else 0
    while ns > floor and text[ns - 1] in _NAME_CHARS:
        ns -= 1
    return ns


def _wrapped(text: str, m, ns: int, spans: list) -> None:
    """A quoted value wrapped onto two lines (``API_TOKEN="Xk9m\\nP2vL"``): each part,
    under a name that is a secret's."""
    name = text[ns : m.end("rest")]
    if not _strength(name.rsplit(".", 1)[-1]) or _meta_name(name.lower()):
        return
    vs, ve = m.span("wv")
    cut = text.index("\n", vs, ve)
    first, second = text[vs:cut].strip(), text[cut + 1 : ve].strip()
    if _placeholder(first + second, 2) or len(first + second) < 3:
        return
    for a, b in ((vs, cut), (cut + 1, ve)):
        while a < b and text[a] in " \t":
            a += 1
        while b > a and text[b - 1] in " \t":
            b -= 1
        if b > a:
            spans.append((a, b, _P_ASSIGN, "secret-assignment"))


# the rest of a value on the next line: after a backslash, or a line cut by a terminal's width
_NEXT_LINE_RUN = lazy(r"[ \t]*([^\s\"'`]{4,256})[ \t]*(?:\n|$)")


def _continued(text: str, ve: int, spans: list) -> None:
    """An unquoted secret that goes on at the start of the next line: after a trailing
    backslash, or, when its line is long (a terminal wrapped it), a next line that is one
    random-looking run."""
    if ve >= len(text) or text[ve] not in "\r\n":
        return
    nl = text.find("\n", ve)
    if nl < 0:
        return
    m = _NEXT_LINE_RUN.match(text, nl + 1)
    if m is None:
        return
    run = m.group(1)
    if text[ve - 1] != "\\":
        ls = text.rfind("\n", 0, ve) + 1
        if (
            ve - ls < 60
            or run.isalpha()
            and (run.islower() or run.isupper())
            or run.isdigit()
            or "=" in run[:-2]
            or ":" in run
        ):
            return
    spans.append((m.start(1), m.end(1), _P_ASSIGN, "secret-assignment"))


def _meta_name(name: str) -> bool:
    """A name for something about a secret, not the secret: ``token_type``, ``secret_id``."""
    return _META_NAME.search(name) is not None


_VARIABLE = lazy(r"[A-Za-z_$][A-Za-z0-9_$]*")
_OPERATOR_NEXT = lazy(r"[ \t]+(?:or|if|else|\|\||&&|\?\?|==|!=|is)[ \t]")
_PASCAL = lazy(r"[A-Z][A-Za-z]*[a-z][A-Za-z]*")
_YAML_TAG = lazy(r"![A-Za-z][\w.\-!]*")


def _code_not_value(
    text: str, ctx: "_Context", m, ns: int, vs: int, ve: int, sep: str, scheme: bool, spaced: bool, strength: int
) -> bool:
    """Whether the unquoted value text[vs:ve] is code (a variable, a type, prose) rather than
    the value of the name. Under a name that is a secret (``strength``) only what code
    could not be: an identifier in code (``token = tok``, ``password: hashedPassword,``)
    that has no digit, or one the text uses elsewhere (``tok2``), or a type name."""
    value = text[vs:ve]
    after = text[ve : ve + 1]
    if value[-1:] in ",;" and len(value) > 1:  # "password: hashedPassword," ending its line
        value, after = value[:-1], value[-1]
    line_value = sep == ":" and not scheme and _line_start(text, ns, ve)
    if sep == ":" and not scheme and vs == m.end("sep"):
        return True  # "oauth:grant-type", arn:...:secret:name, {token:056d}: YAML needs ": "
    if sep == ":" and _YAML_TAG.fullmatch(value) and text[ve : ve + 200].split("\n", 1)[0].strip():
        return True  # password: !vault |, password: !Ref DbPassword (a tag and what it reads)
    if sep == ":" and not scheme and vs > m.end("sep") and _ANNOTATION_TAIL.match(text, ve):
        return True  # password: str = ..., private_key: RSAKey | None
    if strength:
        if (
            _DOTTED.fullmatch(value)
            and (not value[0].isupper() or ctx.code())
            and (not _DIGIT.search(value) or all(map(_CODE_IDENT.fullmatch, value.split("."))))
        ):
            return True  # private_key: rsa.RSAPrivateKey, secret = cfg.Secret (not a password)
        if not _VARIABLE.fullmatch(value):
            return False
        name = text[ns : m.end("rest")].lower().rsplit(".", 1)[-1]
        v = value.lower()
        if (
            v == name
            or name.endswith(("_" + v, "-" + v))
            or (_OPERATOR_NEXT.match(text, ve) and not _DIGIT.search(value))
        ):
            return True  # password=password, credentials=credentials or self.credentials
        if ctx.ini() and (spaced or line_value):
            return False  # [database]\npassword = letmein
        code = (
            spaced
            or sep in (":=", "=>")
            or bool(m.group("nq"))
            or after in (",", ")")
            or (after == ";" and sep != "=")
            or (sep == ":" and not line_value)
            or (line_value and ctx.code())
        )
        if not code:
            if (
                line_value
                and _PASCAL.fullmatch(value)
                and (_KEYWORD.search(value.lower()) or _TYPE_SUFFIX.fullmatch(value))
            ):
                return True  # token: AccessToken, settings: AppSettings (a class body)
            return False
        if (
            spaced
            and sep == "="
            and strength == 2
            and value.isalpha()
            and len(value) >= 6
            and not ctx.code()
            and not ctx.elsewhere(value)
            and _whole_line(text, ns, ve)
        ):
            return False  # "secret = summermonkey" alone on its line, in no code: a config value
        return "_" in value or not _DIGIT.search(value) or ctx.elsewhere(value)
    if m.group("nq") and _IDENT.fullmatch(value):
        return True  # {"page_token": next_page}: a variable in a dict literal
    if _CODE_IDENT.fullmatch(value) and after in (",", ")"):
        return True  # f(auth_token=environment_key, ...): a keyword argument
    if sep == ":" and not scheme:
        if _ANNOTATION_TAIL.match(text, ve):
            return True  # Name: TypeAlias = ...
        if _CAMEL.fullmatch(value):
            return True  # tokens: ParseResults -- a type, not a value
        if value.isalpha() and not line_value:
            return True
    return spaced and _CODE_IDENT.fullmatch(value) is not None  # "tokens_start = pre_loc"


def _whole_line(text: str, ns: int, ve: int) -> bool:
    """The name starts its line (no indentation: not a statement inside a block) and the value
    ends it."""
    return (ns == 0 or text[ns - 1] == "\n") and (ve >= len(text) or text[ve] in "\r\n")


def _scan_flags(text: str, low: str | None, spans: list) -> None:
    it = _FLAG.finditer(low) if low is not None else _FLAG_I.finditer(text)
    for m in it:
        name = m.group("name")
        vs, ve = m.span("bv")
        ve = _bare_end(text, vs, ve, "")
        value = text[vs:ve]
        if _WORDLIKE.fullmatch(value) or _METAVAR.fullmatch(value) or _meta_name(name):
            continue  # "the --password option" is prose, "--token TOKEN" a usage line
        if name.endswith(("-id", "_id")) and not (_HEX_KEY.fullmatch(value) or _random_looking(value, 16)):
            continue  # --secret-id prod/db: which secret, not the secret
        if _value_span(text, vs, ve, True, False, False, _strength(name)) is not None:
            spans.append((vs, ve, _P_ASSIGN, _assign_kind(name)))


_METAVAR = lazy(r"[A-Z][A-Z_\-]*|<[A-Za-z_\-]+>")


def _assign_kind(name: str) -> str:
    if "secret" in name:
        flat = name.replace("_", "").replace("-", "").replace(".", "")
        if "secretaccesskey" in flat or "aws" in flat:
            return "aws-secret-key"
    return "secret-assignment"


def _value_span(
    text: str, vs: int, ve: int, bare: bool, scheme: bool, spaced_eq: bool, strength: int = 0
) -> tuple[int, int] | None:
    """Where the value text[vs:ve] of an assignment really is, or None when it
    is not a secret (placeholder, number, code, path, ...). ``strength``: the name is a
    secret's (``_strength``), so only a placeholder or code is not a value."""
    value = text[vs:ve]
    if not bare:
        sm = _SCHEME_IN_VALUE.match(value)
        if sm:
            vs += sm.end()
            value = text[vs:ve]
        value = value.strip()
    elif value[-1:] in ",;" and len(value) > 1:
        core = value.rstrip(",;")
        if core and _value_span(text, vs, vs + len(core), bare, scheme, spaced_eq, strength) is None:
            return None  # password=None, / token: process.env.TOKEN, (a line of code)
    if len(value) < 3 or _placeholder(value, strength) or _COLOR.fullmatch(value):
        return None
    if _NUMBER.fullmatch(value) and not (strength == 2 and value.isdigit() and len(value) >= 4):
        return None  # max_tokens: 4096 -- but a PIN or password of digits is one
    if (
        _NAMEISH.fullmatch(value)
        and _KEYWORD.search(value.lower())
        and not (strength and (bare or _ONE_WORD.fullmatch(value)))
    ):
        return None  # ENV_API_KEY = "ANTHROPIC_API_KEY", grant_type="refresh_token" (not "supersecret")
    if _SNAKE_WORDS.fullmatch(value):
        return None  # AUTH_TYPE_OIDC = "oidc_federation": an enum value
    if scheme and len(value) < 20 and value.isalpha():
        return None  # "token: Token value" is prose, not "Authorization: token <cred>"
    if bare:
        if value[0] in "/~.-$" and _NOT_A_VALUE.fullmatch(value) and not (strength and _looks_set(value)):
            return None  # path, variable or another flag
        if (_CALLISH.fullmatch(value) and not (strength and _password_callee(value))) or _STRUCTURE.fullmatch(value):
            return None  # call / subscript / type / the start of a literal: code
        if "://" in value or (_DOTTED.fullmatch(value) and all(map(_CODE_IDENT.fullmatch, value.split(".")))):
            return None  # URL (see url-password) or attribute access (self.password)
        if not strength:
            if _IDENT.fullmatch(value) and _KEYWORD.search(value.lower()):
                return None  # api_key=api_key, token = new_token
            if spaced_eq and _CODE_IDENT.fullmatch(value):
                return None  # "tokens_start = pre_loc": code assigning a variable
        elif _IDENT.fullmatch(value) and "_" in value and _KEYWORD.search(value.lower()):
            return None  # token=new_token, DB_PASSWORD=db_password (a name, not a value)
    return vs, ve


def _looks_set(value: str) -> bool:
    """A value that starts like a flag, a hidden file or a home path but is one (``-Xk9mP2v``,
    ``.Ab3~x``, ``~vUEwt6w``): a digit and a letter in it, and no path separator, or a
    character no flag or path holds (``-Az=Uv|8t/0o``)."""
    if (
        value[:2] == "--"
        or value[0] not in "-.~"
        or _DIGIT.search(value) is None
        or not any(c.isalpha() for c in value)
    ):
        return False
    return "/" not in value or any(c in _ODD for c in value)


_ODD = frozenset("|<>{}()[]^!#%&*;,\\@?$`")


def _password_callee(value: str) -> bool:
    """``cTFUaFLMHbcUN1(w``: what looks like a call under a password's name, but whose "name"
    mixes cases and digits as no function's does, and whose bracket is never closed."""
    i = min((value.find(c) for c in "([" if c in value), default=-1)
    head = value[:i] if i > 0 else value
    return (
        ")" not in value
        and "]" not in value
        and "." not in head
        and "_" not in head
        and _DIGIT.search(head) is not None
        and any(c.isupper() for c in head)
        and any(c.islower() for c in head)
    )


# An unquoted value runs to the next whitespace or quote: a strong password may hold
# any of & ; , ( ) { } [ ] < > \ and a value cut at the first one leaks the rest.
# These tell code and structure from such a value:
# get_token(), os.environ.get(, config[, Optional[str], dict[str,  (a call, subscript, type)
_CALLISH = lazy(
    r"[A-Za-z_$][\w.$]*(?:::[\w$]+)*[(\[]+[\w.$,:]*[)\]]*(?:\.[A-Za-z_$][\w$]*(?:\([\w.$,:]*\))?)*"
    r"[.,;)\]\[(]*"
)
# {user:  (a:  [a,  <<  : the start of a literal, not a value
_STRUCTURE = lazy(r"[\[{(<]+[A-Za-z_ .]*[:,)\]}>]*")
# in JSON-escaped text a value ends at an escaped newline, tab or quote
_ESCAPE_END = lazy(r"\\(?:[nrt\"']|u00)")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
# values that start like a path, a shell variable or the next flag (and are nothing else)
_NOT_A_VALUE = lazy(
    r"[~.]{0,2}/[\w.\-~/@+:%=,]*|\.[\w.\-/]*|~[\w.\-/]*|--?[A-Za-z][\w\-]*(?:=\S*)?"
    r"|\$(?:[A-Za-z_]\w*|\{.*|\(.*|[0-9@*#?$!])"
)


def _trim_tail(text: str, vs: int, ve: int) -> int:
    """End of an unquoted value without the punctuation of the sentence or code around
    it: a trailing ``, ; . : ! ?`` and closing brackets the value did not open."""
    for _ in range(3):
        if ve - vs < 2:
            break
        c = text[ve - 1]
        if c in ",;.:!?":
            ve -= 1
        elif c in _CLOSERS and text.count(c, vs, ve) > text.count(_CLOSERS[c], vs, ve):
            ve -= 1
        else:
            break
    return ve


def _bare_end(text: str, vs: int, ve: int, before: str) -> int:
    """Where an unquoted value that starts at ``vs`` really ends (``ve``: the next
    whitespace or quote). ``before`` is the character before the name: after ``?``, ``&``
    or ``;`` the name is a URL query / JDBC parameter and the next separator ends it."""
    lo = vs - 256 if vs > 256 else 0  # bounded look-back keeps hostile input linear
    ls = text.rfind("\n", lo, vs) + 1 or lo
    if "\\" in text[vs:ve] and '"' in text[ls:vs]:
        m = _ESCAPE_END.search(text, vs, ve)  # inside a JSON string
        if m is not None and m.start() > vs:
            ve = m.start()
    if before in "?&" and before:
        for sep in "&#":
            cut = text.find(sep, vs, ve)
            if cut > vs:
                ve = cut
    elif before == ";":
        cut = text.find(";", vs, ve)
        if cut > vs:
            ve = cut
    # a line that is only NAME=value / name: value (.env, YAML) keeps the whole value
    if ve >= len(text) or text[ve] in "\r\n":
        if (ls == 0 or text[ls - 1] == "\n") and _LINE_ASSIGN.match(text, ls, vs) is not None:
            return ve
    return _trim_tail(text, vs, ve)


_LINE_ASSIGN = lazy(r"[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?[\"']?[A-Za-z0-9_.\-]+[\"']?[ \t]*(?:=|:)[ \t]*$")


def _line_start(text: str, ns: int, ve: int) -> bool:
    """A plain word after ``name:`` is a value only in YAML / headers, where
    the name starts the line and nothing but a comment follows the word;
    otherwise it is prose ("your password: That is ...", "token: The ...")."""
    lo = ns - 200 if ns > 200 else 0
    ls = text.rfind("\n", lo, ns)
    if ls < 0 and lo > 0:
        return False
    if text[ls + 1 : ns].strip(" \t-*>#<|"):
        return False
    rest = text[ve : ve + 200].split("\n", 1)[0].strip()
    return not rest or rest[0] == "#"


# --------------------------------------------------------------------------
# Secrets a config file holds by its place, not by a NAME=value
# --------------------------------------------------------------------------
# a YAML block scalar (``password: >-`` then the value on the lines below)
_BLOCK_SCALAR = lazy(
    r"(?m)^([ \t]*)(?:-[ \t]+)?([A-Za-z0-9_.\-]{1,64})[ \t]*:[ \t]*(?:![^\s]*[ \t]+)?[|>][+\-]?[1-9]?[ \t]*"
    r"(?:#[^\n]*)?$"
)


_BLOCK_HINT = lazy(r":[ \t]+(?:![^\s]*[ \t]+)?[|>]")


def _scan_blocks(text: str, spans: list) -> None:
    """The lines of a YAML block scalar under a name that is a secret's."""
    for m in _BLOCK_SCALAR.finditer(text):
        name = m.group(2)
        if not _strength(name.rsplit(".", 1)[-1]) or _meta_name(name.lower()):
            continue
        indent = len(m.group(1).expandtabs())
        pos = m.end() + 1
        for _ in range(200):
            if pos >= len(text):
                break
            nl = text.find("\n", pos)
            end = nl if nl >= 0 else len(text)
            line = text[pos:end]
            body = line.strip()
            if body and len(line.expandtabs()) - len(line.expandtabs().lstrip()) <= indent:
                break
            if body and not _placeholder(body, 2):
                a = pos + len(line) - len(line.lstrip())
                spans.append((a, a + len(body), _P_ASSIGN, "secret-assignment"))
            pos = end + 1


# ~/.netrc: "machine HOST login USER password PW", on one line or several
_NETRC_LINE = lazy(
    r"(?m)^[ \t]*+(?:(?:machine|login|account|port|macdef)[ \t]++\S++[ \t]*+|default[ \t]*+"
    r"|(?:password|passwd)[ \t]++\S++[ \t]*+)++$"
)
_NETRC_PW = lazy(r"(?:^|[ \t])(?:password|passwd)[ \t]+(\S+)")
_NETRC_MACHINE = lazy(r"(?:^|\s)(?:machine[ \t]+\S|default\s)")
# ~/.pgpass: "host:port:database:user:password", a whole line
_PGPASS = lazy(
    r"(?m)^[ \t]*+(?:\*|(?=[0-9\-_\[\]]*+[A-Za-z.])[A-Za-z0-9.\-_\[\]]++):(?:[0-9]{1,5}|\*):[^:\s]++:[^:\s]++:"
    r"((?:\\.|[^\n\\])++)"
)
_PGPASS_HINT = lazy(r":(?:[0-9]{1,5}|\*):[^:\s]++:[^:\s]++:[^\s]")
# redis.conf "requirepass PW" / "masterauth PW"
_REDIS_CONF = lazy(r"(?m)^[ \t]*(?:requirepass|masterauth)[ \t]+(?:\"([^\"\n]+)\"|(\S+))")
# a Kubernetes Secret's data:/stringData: block, as YAML
_K8S_DATA = lazy(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*$")
_K8S_ITEM = lazy(r"[ \t]*+[\"']?[A-Za-z0-9_.\-]{1,253}+[\"']?[ \t]*+:[ \t]++(\S[^\n]*+)")
# ... and as JSON (kubectl get secret -o json)
_K8S_JSON_DATA = lazy(r"\"(?:data|stringData)\"[ \t]*:[ \t]*\{([^{}]{0,65536})\}")
_JSON_STRING_VALUE = lazy(r"\"[^\"\n]{1,253}\"[ \t]*:[ \t]*\"([^\"\n]+)\"")
_K8S_KIND = lazy(r"kind[\"']?[ \t]*:[ \t]*[\"']?Secret(?![A-Za-z])")


def _scan_config(text: str, low: str, spans: list, starts: list[int] = ()) -> None:
    """Files whose syntax says where the password is: .netrc, .pgpass, redis.conf, and a
    Kubernetes Secret's data (every value of it, whatever its name). ``starts``: where the
    keywords are (``_keyword_positions``): each form but .pgpass has one, so what to look
    for is told from them, not by scanning the text again."""
    netrc = redis = k8s = False
    for k in starts:
        c = low[k]
        if c == "p" and low.startswith("passw", k):
            netrc = True
            redis = redis or low.startswith("require", k - 7) if k >= 7 else redis
        elif c == "p" and k >= 7 and low.startswith("requirepass", k - 7):
            redis = True
        elif c == "a" and k >= 6 and low.startswith("masterauth", k - 6):
            redis = True
        elif c == "s" and text.startswith("Secret", k):
            k8s = True
    if netrc and ("machine" in low or "default" in low) and _NETRC_MACHINE.search(low):
        for line in _NETRC_LINE.finditer(text):
            for m in _NETRC_PW.finditer(line.group()):
                if not _placeholder(m.group(1), 2):
                    spans.append((line.start() + m.start(1), line.start() + m.end(1), _P_ASSIGN, "secret-assignment"))
    if ":" in text and text.count(":") >= 4 and _PGPASS_HINT.search(text):
        for m in _PGPASS.finditer(text):
            value = m.group(1).rstrip()
            if value and not _placeholder(value, 2):
                spans.append((m.start(1), m.start(1) + len(value), _P_ASSIGN, "secret-assignment"))
    if redis:
        for m in _REDIS_CONF.finditer(text):
            g = 1 if m.group(1) is not None else 2
            if not _placeholder(m.group(g), 2):
                spans.append((m.start(g), m.end(g), _P_ASSIGN, "secret-assignment"))
    if k8s and "data" in low and _K8S_KIND.search(text):
        _scan_k8s(text, spans)


def _scan_k8s(text: str, spans: list) -> None:
    for doc_start, doc_end in _yaml_documents(text):
        doc = text[doc_start:doc_end]
        if not _K8S_KIND.search(doc):
            continue
        for m in _K8S_DATA.finditer(doc):
            indent = len(m.group(1).expandtabs())
            pos = m.end() + 1
            for _ in range(1000):
                if pos >= len(doc):
                    break
                nl = doc.find("\n", pos)
                end = nl if nl >= 0 else len(doc)
                line = doc[pos:end]
                if line.strip():
                    if len(line.expandtabs()) - len(line.expandtabs().lstrip()) <= indent:
                        break
                    item = _K8S_ITEM.match(line)
                    value = item.group(1).rstrip() if item is not None else ""
                    if value and not _placeholder(value.strip("\"'"), 2):
                        a = doc_start + pos + item.start(1)
                        spans.append((a, a + len(value), _P_ASSIGN, "secret-assignment"))
                pos = end + 1
        for m in _K8S_JSON_DATA.finditer(doc):
            for v in _JSON_STRING_VALUE.finditer(m.group(1)):
                a = doc_start + m.start(1)
                spans.append((a + v.start(1), a + v.end(1), _P_ASSIGN, "secret-assignment"))


def _yaml_documents(text: str):
    """(start, end) of each YAML document of ``text`` (split at ``---`` lines)."""
    start = 0
    for m in re.finditer(r"(?m)^---[ \t]*$", text):
        yield start, m.start()
        start = m.end()
    yield start, len(text)


# NAME_KEY=<key material>: a key by its name (``ENCRYPTION_KEY``, ``signingKey``) holding
# what a key looks like (32+ hex, or a long run of letters and digits)
_KEY_VALUE = lazy(r"[\"']?[ \t]*(?:=|:)[ \t]*(?:base64:)?[\"']?([A-Za-z0-9+/=_\-]{16,512})(?![A-Za-z0-9+/=_\-])")
_NOT_KEY_NAMES = frozenset(
    """cache sort primary partition foreign idempotency routing shard hash range dedup dedupe lookup map
    dict row object s3 gcs blob file bucket public pub publishable ssh gpg pgp fingerprint foreign join
    index unique composite natural surrogate sequence group order redis memcache etag""".split()
)
_HEX_KEY = lazy(r"[0-9a-fA-F]{32,}")


def _scan_key_names(text: str, low: str, spans: list) -> None:
    """``NAME_KEY=<key material>`` under a name whose head is ``key`` (``ENCRYPTION_KEY``,
    ``signingKey``) that no other rule names a secret: only values that look like a key."""
    i = low.find("key")
    while i >= 0:
        e = i + 3
        ok = (
            i > 0
            and (low[i - 1] in "_.-" or (text[i] == "K" and text[i - 1].isalnum()))
            and (e >= len(text) or text[e] not in _NAME_CHARS)
        )
        m = _KEY_VALUE.match(text, e) if ok else None
        if m is not None:
            words = _NAME_WORDS.findall(text[ns_of(text, i) : e])
            v = m.group(1)
            if (
                len(words) >= 2
                and not any(w.lower() in _NOT_KEY_NAMES for w in words[:-1])
                and (
                    _HEX_KEY.fullmatch(v)
                    or _random_looking(v, 16)
                    or (
                        _DIGIT.search(v)
                        and _mixed(v.replace("-", "").replace("_", ""))
                        and not _CODE_IDENT.fullmatch(v)
                    )
                )
            ):
                spans.append((m.start(1), m.end(1), _P_ASSIGN, "secret-assignment"))
        i = low.find("key", e)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------
def _resolve(spans: list) -> list:
    """Keep non-overlapping spans, preferring lower priority, then earlier."""
    if len(spans) == 1:
        return spans
    spans.sort(key=lambda t: (t[2], t[0], -t[1]))
    starts: list[int] = []
    kept: list = []
    for sp in spans:
        s, e = sp[0], sp[1]
        i = bisect_left(starts, s)
        if i < len(starts) and starts[i] < e:
            continue
        if i > 0 and kept[i - 1][1] > s:
            continue
        starts.insert(i, s)
        kept.insert(i, sp)
    return kept


# --------------------------------------------------------------------------
# Issue 35: what an audit found leaking, each behind its literal
# --------------------------------------------------------------------------
# a .pgpass line quoted inside a sentence ("add db:5432:shop:app:PW to your ~/.pgpass")
_PGPASS_INLINE = lazy(
    r"(?<![\w.:\-])(?:\*|(?=[0-9\-_\[\]]*+[A-Za-z.])[A-Za-z0-9.\-_\[\]]++):(?:[0-9]{1,5}|\*):[^:\s]++:[^:\s]++:"
    r"((?:\\.|[^\s\\])++)"
)
# jdbc:oracle:thin:USER/PASSWORD@host
_ORACLE_THIN = lazy(r"jdbc:oracle:(?:thin|oci)[^:\s]*:([^/\s@:\"']{1,64})/([^@\s\"']{1,256})@", re.I)
# SSHPASS=PW sshpass -e / export SSHPASS=PW
_SSHPASS_ENV = lazy(r"(?<![A-Za-z0-9_])SSHPASS=(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))")
# twilio.rest.Client(account_sid, "<auth token>")
_TWILIO_CLIENT = lazy(r"Client\([^()\n]{1,120},[ \t]*[\"']([0-9a-f]{32})[\"']")
# "the deploy pw is <value>", "the staging password was <value>" in prose
_SAID = lazy(
    r"(?<![A-Za-z0-9_\-])(?:pw|pwd|passwd|password|passphrase|passcode)"
    r"[ \t]+(?:is|was|is[ \t]+now|now[ \t]+is|became)[ \t]+"
    r"(?:[\"'`](?P<qv>[^\n\"'`]{3,256})[\"'`]|(?P<v>[^\s\"'`]{3,256}))",
    re.I,
)
_SAID_NOT = frozenset(
    """a an the this that these those not now no still also too very only just being
    correct incorrect wrong right invalid valid required optional empty missing blank unset set stored
    hashed encrypted hidden secret same different long short weak strong secure insecure case sensitive
    expired reset changed rotated saved there here in on at of for from to with without by as it its
    your my our their his her unknown known given shown printed masked redacted ignored never always
    null none nil undefined true false ok fine good bad enough mandatory needed necessary accepted
    rejected checked compared sent used generated random visible plain plaintext what which""".split()
)
_SAID_WORDISH = lazy(r"[a-z]+(?:ed|ing|ly|able|ible)")


def _said_value(v: str) -> bool:
    """Whether ``v`` after "pw is" reads as a password rather than a word of the sentence."""
    core = v.rstrip(",;.:!?)")
    if (
        len(core) < 4
        or core.lower() in _SAID_NOT
        or _placeholder(core)
        or core.startswith(_MARK)
        or (core[0] in "{<[(" and core[-1] in "}>])")
        or core[0] in "$%"
        or set(core) <= set("*#x.-_?X")
    ):
        return False  # {####}, <password>, $PW, %s, ****: a template or a mask, not a value
    return not (core.isalpha() and core.islower() and _SAID_WORDISH.fullmatch(core))


def _scan_said(text: str, low: str, starts: list[int], aligned: bool, spans: list) -> None:
    """The forms above. Those that hold a keyword (pass, pw) are looked for only where
    ``_keyword_positions`` found one (``starts``)."""
    if "jdbc:oracle" in low:
        for m in _ORACLE_THIN.finditer(text):
            if not _placeholder(m.group(2)):
                spans.append((m.start(2), m.end(2), _P_URL, "url-password"))
    if "Client(" in text:
        for m in _TWILIO_CLIENT.finditer(text):
            spans.append((m.start(1), m.end(1), _P_PREFIX, "twilio-token"))
    if not starts:
        return
    if "pgpass" in low and text.count(":") >= 4:
        for m in _PGPASS_INLINE.finditer(text):
            s, e = m.span(1)
            e = _trim_tail(text, s, e)
            if e - s >= 3 and not _placeholder(text[s:e]):
                spans.append((s, e, _P_ASSIGN, "secret-assignment"))
    if "SSHPASS=" in text:
        for m in _SSHPASS_ENV.finditer(text):
            g = "qv" if m.group("qv") is not None else "v"
            if not _placeholder(m.group(g)):
                spans.append((m.start(g), m.end(g), _P_ASSIGN, "cli-password"))
    found = (
        (m for m in (_SAID.match(text, i) for i in starts if low.startswith(("pw", "pass"), i)) if m)
        if aligned
        else _SAID.finditer(text)
    )
    for m in found:
        g = "qv" if m.group("qv") is not None else "v"
        s, e = m.span(g)
        if g == "v":
            e = _trim_tail(text, s, e)
        if _said_value(text[s:e]):
            spans.append((s, e, _P_ASSIGN, "secret-assignment"))


# --------------------------------------------------------------------------
# Issue 46: basic auth, curl -u, sshpass -p, YAML passwords and secrets said in a sentence,
# in the spellings an audit's held-out corpus showed leaking; each behind its literal
# --------------------------------------------------------------------------
# Each form is found at the positions of its literal (str.find), then matched there: ordinary
# text costs a few finds.
# "Basic" then the credential wrapped onto the next line, URL-encoded (Basic%20...), or
# concatenated ('Basic ' + '<b64>'): the base64 is checked to be user:password
_BASIC_SPLIT = lazy(
    r"basic(?:[ \t]*\r?\n[ \t]*|%20|[ \t]*[\"'`][ \t]*\+[ \t]*[\"'`])([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
    re.I,
)
# base64.b64encode(b"user:PW"), Buffer.from("user:PW").toString("base64"): a Basic credential
# built in code from the literal pair (at the "(")
_B64_OF_PAIR = lazy(r"\([ \t]*b?(?P<q>[\"'])[^\s:\"'@/]{1,64}:(?P<v>[^\n\"']{1,256})(?P=q)")
_B64_CALLS = ("b64encode(", "Buffer.from(")
# requests/httpx auth=("user", "PW"), HTTPBasicAuth("user", "PW") (and Digest, Proxy): at the "("
_AUTH_PAIR = lazy(r"\([ \t]*(?P<uq>[\"'])[^\n\"']{1,64}(?P=uq)[ \t]*,[ \t]*(?P<q>[\"'])(?P<v>[^\n\"']{1,256})(?P=q)")
_AUTH_KW = lazy(r"auth[ \t]*=[ \t]*\(")  # (on the lower-case text)
_AUTH_CLASS = lazy(r"HTTP(?:Basic|Digest|Proxy)Auth\(")
# curl's -u in a cluster of short flags (-su, -ku, -sSku, -Lu), -U (--proxy-user), and the
# password quoted apart from the user (-u admin:'PW', -u "admin":"PW"): at the "-"
_CLI_USER_MORE = lazy(
    r"-(?:[A-Za-z]{0,6}u|U|-user|-proxy-user)(?:[ \t]+|=)?"
    r"(?:(?P<uq>[\"'])[^\s:\"'@/]{1,64}(?P=uq)|[^\s:\"'@/]{1,64}):"
    r"(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)
# httpie: http -a user:PW / --auth user:PW (at the "-")
_HTTPIE = lazy(r"-(?:a|-auth)(?:[ \t]+|=)[\"']?[^\s:\"'@/]{1,64}:(?P<v>[^\s\"']{1,256})")
_HTTPIE_CMD = lazy(r"(?:^|[\s;|&(`$])https?[ \t]")
# sshpass with options that take an argument before -p (-P assphrase, -d 3)
_SSHPASS_ARGS = lazy(
    r"sshpass(?:[ \t]+-[A-Za-oq-z](?:[ \t]+(?:[\"'][^\n\"']{0,64}[\"']|[^\s\-][^\s]{0,63}))?){1,8}[ \t]+-p[ \t]*"
    r"(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)
# argv lists: ["sshpass", "-p", "PW", ...], ['curl', ..., '-u', 'user:PW']
_ARGV_SSHPASS = lazy(r"sshpass[\"'][ \t]*,[ \t]*[\"']-p[\"'][ \t]*,[ \t]*(?P<q>[\"'])(?P<v>[^\n\"']{1,256})(?P=q)")
_ARGV_CURL = lazy(
    r"(?:[\"'](?:-u|--user|-U|--proxy-user)[\"'][ \t]*,[ \t]*|[\"'](?:--user|--proxy-user)=)"
    r"(?P<q>[\"']?)[^\s:\"'@/]{1,64}:(?P<v>[^\n\"']{1,256})[\"']"
)
# YAML: an anchor or a core tag before the value (password: &db_pw PW, password: !!str 1234),
# the value alone on the next, deeper line (password:\n    PW), and a container's env list
# (- name: DB_PASSWORD / value: PW; {"name": "API_TOKEN", "value": "PW"}); matched from the
# start of the line of their literal
_YAML_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]{0,80}"
_YAML_TAGGED = lazy(
    rf"[ \t]*(?:-[ \t]+)?(?P<name>{_YAML_NAME})[ \t]*:[ \t]+"
    r"(?:&[A-Za-z0-9_.\-]{1,64}[ \t]+(?:!![a-z]{1,12}[ \t]+)?|!!(?:str|binary)[ \t]+(?:&[A-Za-z0-9_.\-]{1,64}[ \t]+)?)"
    r"(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>(?![|>][\-+]?[ \t]*$)[^\s][^\n]{0,255}?))[ \t]*(?:[ \t]#[^\n]*)?(?:\r?\n|$)"
)
_YAML_NEXT_LINE = lazy(
    rf"(?P<ind>[ \t]*)(?:-[ \t]+)?(?P<name>{_YAML_NAME})[ \t]*:[ \t]*\r?\n(?P=ind)[ \t]+"
    r"(?![^\n]*:(?:[ \t]|\r?\n|$))(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"'#&*!|>\-{\[][^\s]{0,255}))[ \t]*(?:\r?\n|$)"
)
_ENV_PAIR = lazy(
    rf"(?P<ind>[ \t]*)-[ \t]+name:[ \t]*(?P<nq>[\"']?)(?P<name>{_YAML_NAME})(?P=nq)[ \t]*\r?\n"
    r"(?P=ind)[ \t]+value:[ \t]*(?:(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)|(?P<v>[^\s\"'#&*!|>][^\n]{0,255}?))[ \t]*(?:\r?\n|$)"
)
_ENV_PAIR_JSON = lazy(
    rf"name[\"'][ \t]*:[ \t]*[\"'](?P<name>{_YAML_NAME})[\"'][ \t]*,[ \t]*[\"']value[\"'][ \t]*:[ \t]*"
    r"(?P<q>[\"'])(?P<qv>[^\n\"']{1,256})(?P=q)"
)
# secrets said in a sentence: "the door code is 7r1cky...", "my PIN is 4821", "PIN: 4821",
# "the safe combination is 12-34-56", "the sandbox token: tok_9f8e...", "the api key is ...",
# "the admin secret was ..."; the value must look like one (a code: digits, or letters and
# digits; a token or key: 8+ characters, letters and digits, not a word of the sentence).
# Matched right after the noun.
_CODE_BEFORE = lazy(
    r"(?:(?<![A-Za-z0-9_\-])(?:door|gate|garage|alarm|entry|entrance|access|lock|locker|safe|building|keypad"
    r"|unlock|security|lockbox|padlock|wifi|wi-fi|voicemail|sim|phone|card)[ \t\-]+|(?<![A-Za-z0-9_\-])pin[ \t_\-]?"
    r"|(?<![A-Za-z0-9_\-])pass)$"
)
_SAID_TAIL_CODE = lazy(
    r"(?:[ \t]+(?:is|was|is[ \t]+now)[ \t]+|[ \t]*:[ \t]*)(?:(?P<q>[\"'`])(?P<qv>[^\n\"'`]{3,64})(?P=q)|(?P<v>[^\s\"'`]{3,64}))",
    re.I,
)
_KEY_BEFORE = lazy(
    r"(?<![A-Za-z0-9_\-])(?:api|access|license|licence|secret|signing|encryption|wifi|wi-fi|product|activation"
    r"|master)[ \t\-]+$"
)
_SAID_TAIL_TOKEN = lazy(
    r"(?:[ \t]+(?:is|was|is[ \t]+now)[ \t]+|[ \t]*:[ \t]+)(?:(?P<q>[\"'`])(?P<qv>[^\n\"'`]{8,256})(?P=q)|(?P<v>[^\s\"'`]{8,256}))",
    re.I,
)
_CODE_VALUE = lazy(
    r"[#*]?(?:[0-9]{3,12}|[0-9]{1,4}(?:[\-.][0-9]{1,4}){1,5}|(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])[A-Za-z0-9!@#$%^&*_\-.~+]{4,64})[#*]?"
)
_NOT_CODES = frozenset("1password 2fa mfa 4g 5g 3g wpa2 wpa3 a4 u2f".split())
_WORDISH_PART = lazy(r"[A-Za-z][a-z]{3,}")
_VERSIONISH = lazy(r"v?[0-9]+(?:\.[0-9]+)+[A-Za-z0-9.\-]*|[0-9]+(?:st|nd|rd|th|s|m|h|d|ms|min|kb|mb|gb|px|k)")


def _code_said(v: str) -> bool:
    core = v.rstrip(",;.:!?)")
    return (
        len(core) >= 3
        and _CODE_VALUE.fullmatch(core) is not None
        and core.lower() not in _NOT_CODES
        and _VERSIONISH.fullmatch(core) is None
        and not _placeholder(core)
        and not core.startswith(_MARK)
    )


def _token_said(v: str) -> bool:
    """Whether ``v`` after "the token is" / "sandbox token:" reads as a credential."""
    core = v.rstrip(",;.:!?)")
    if len(core) < 8 or core.startswith(_MARK) or _placeholder(core) or not _said_value(core):
        return False
    if any(c in core for c in "()[]{}=/\\<>$%") or "://" in core or _VERSIONISH.fullmatch(core):
        return False  # a call, a path, a template, a version: not a value
    digits = sum(c.isdigit() for c in core)
    letters = sum(c.isalpha() for c in core)
    if letters < 2 or not (digits >= 2 or (digits and len(core) >= 12 and _mixed(core))):
        return False
    parts = re.split(r"[\-_.]", core)
    if any(
        _WORDISH_PART.fullmatch(p) and (p.lower() in _SAID_NOT or _SAID_WORDISH.fullmatch(p.lower())) for p in parts
    ):
        return False  # base64-encoded, RS256-signed: words of the sentence
    if (
        _DOTTED.fullmatch(core)
        and all(map(_CODE_IDENT.fullmatch, core.split(".")))
        and all(sum(c.isdigit() for c in p) < 2 for p in core.split("."))
    ):
        return False  # an attribute (cfg.token2)
    return True


def _span_of(m: re.Match) -> tuple[int, int, bool]:
    if m.groupdict().get("qv") is not None:
        s, e = m.span("qv")
        return s, e, True
    s, e = m.span("v")
    return s, e, False


def _continued_http(text: str, at: int) -> bool:
    """Is ``at`` on a command line continued (``\\`` at the end of the lines before) from one an
    HTTP client's (``curl \\`` then ``  -u admin:PW \\``)?"""
    lo = text.rfind("\n", 0, at)
    for _ in range(20):
        if lo <= 0:
            return False
        prev_end = lo
        if text[prev_end - 1 : prev_end] == "\r":
            prev_end -= 1
        if text[prev_end - 1 : prev_end] != "\\":
            return False
        lo = text.rfind("\n", 0, prev_end)
        line = text[lo + 1 : prev_end].lower()
        if "curl" in line or "wget" in line or "://" in line:
            return True
    return False


def _finds(hay: str, lit: str):
    i = hay.find(lit)
    while i >= 0:
        yield i
        i = hay.find(lit, i + 1)


def _line_at(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _word_end(low: str, e: int) -> bool:
    return e >= len(low) or not (low[e].isalnum() or low[e] == "_")


def _add(spans: list, m: re.Match, kind: str, check, trim: bool = True, text: str = "") -> None:
    s, e, quoted = _span_of(m)
    if not quoted and trim:
        e = _trim_tail(text, s, e)
    if e > s and check(text[s:e]):
        spans.append((s, e, _P_ASSIGN, kind))


def _scan_issue46(text: str, low: str, starts: list[int], spans: list) -> None:
    _scan_http_auth(text, low, starts, spans)
    if starts and ":" in text:
        _scan_yaml_more(text, starts, spans)
    _scan_said_more(text, low, starts, spans)


def _scan_http_auth(text: str, low: str, starts: list[int], spans: list) -> None:
    """Basic credentials, curl -u and httpie -a, sshpass -p (issue 46). What has a keyword
    (auth, pass) is looked for at its positions (``starts``), the rest behind a rare literal."""
    literal = lambda v: len(v) >= 3 and not _placeholder(v)  # noqa: E731
    if "basic" in low:
        for i in _finds(low, "basic"):
            m = _BASIC_SPLIT.match(text, i)
            if m is not None and _basic_credential(m.group(1)):
                spans.append((m.start(1), m.end(1), _P_BASIC, "basic-auth"))
    for k in starts:
        if low.startswith("auth", k):
            if text.startswith("Auth(", k) and text[max(0, k - 10) : k].endswith(
                ("HTTPBasic", "HTTPDigest", "HTTPProxy")
            ):
                at = k + 4
            elif not (k and (low[k - 1].isalnum() or low[k - 1] == "_")):
                m = _AUTH_KW.match(low, k)
                at = m.end() - 1 if m is not None else -1
            else:
                continue  # (oauth=(, my_auth=()
            p = _AUTH_PAIR.match(text, at) if at >= 0 else None
            if p is not None:
                _add(spans, p, "basic-auth", literal, False, text)
        elif k >= 3 and low.startswith("sshpass", k - 3):
            for rx in (_SSHPASS_ARGS, _ARGV_SSHPASS):
                m = rx.match(text, k - 3)
                if m is not None:
                    _add(spans, m, "cli-password", lambda v: len(v) >= 2 and not _placeholder(v), False, text)
    if "(" in text and ("b64encode(" in text or "Buffer.from(" in text):
        for call in _B64_CALLS:
            for i in _finds(text, call):
                m = _B64_OF_PAIR.match(text, i + len(call) - 1)
                if m is not None:
                    _add(spans, m, "basic-auth", literal, False, text)
    curl = "curl" in low
    if not (curl or "http" in low or "wget" in low):
        return  # every form below is an HTTP client's command line
    for m in _CLI_USER_MORE.finditer(text):
        i = m.start()
        if (i and (text[i - 1].isalnum() or text[i - 1] in "_-")) or not (
            _http_line(text, i) or _continued_http(text, i)
        ):
            continue
        s, e, quoted = _span_of(m)
        if not quoted:
            e = _trim_tail(text, s, e)
            while e > s and text[e - 1] == "\\":
                e -= 1
        value = text[s:e]
        if e - s >= 3 and not value.isdigit() and not _placeholder(value):
            spans.append((s, e, _P_ASSIGN, "cli-password"))
    for lit in (" -a", " --auth"):
        if lit in text:
            for i in _finds(text, lit):
                m = _HTTPIE.match(text, i + 1)
                if m is not None and _HTTPIE_CMD.search(text, _line_at(text, i), i + 1):
                    _add(spans, m, "cli-password", literal, True, text)
    if curl and "[" in text:
        if "'-u'" in text or '"-u"' in text or "--user" in text or "'-U'" in text or '"-U"' in text:
            for m in _ARGV_CURL.finditer(text):
                _add(spans, m, "cli-password", lambda v: literal(v) and not v.isdigit(), False, text)


def _scan_yaml_more(text: str, starts: list[int], spans: list) -> None:
    """YAML anchors and tags before a value, a value on the next line, env lists (issue 46):
    each needs a secret's name, so only the lines of the keyword positions (``starts``) are
    looked at."""
    seen: set[int] = set()
    for k in starts:
        ls = _line_at(text, k)
        if ls in seen:
            continue
        seen.add(ls)
        le = text.find("\n", k)
        line = text[ls : le if le >= 0 else len(text)]
        if ":" not in line:
            continue
        if "&" in line or "!!" in line:
            m = _YAML_TAGGED.match(text, ls)
            if m is not None and _strength(m.group("name")) >= 1:
                _add(spans, m, "secret-assignment", lambda v: not _placeholder(v, 2), False, text)
        if le >= 0 and line.rstrip().endswith(":"):
            m = _YAML_NEXT_LINE.match(text, ls)
            if m is not None and _strength(m.group("name")) >= 1:
                _add(spans, m, "secret-assignment", lambda v: len(v) >= 3 and not _placeholder(v, 2), False, text)
        if "name:" in line and le >= 0:
            m = _ENV_PAIR.match(text, ls)
            if m is not None and _strength(m.group("name")) >= 1:
                _add(spans, m, "secret-assignment", lambda v: not _placeholder(v, 2), True, text)
        if "value" in line:
            n = line.rfind("name", 0, k - ls)
            if n >= 0:
                m = _ENV_PAIR_JSON.match(text, ls + n)
                if m is not None and _strength(m.group("name")) >= 1:
                    _add(spans, m, "secret-assignment", lambda v: not _placeholder(v, 2), False, text)


# right after a noun: "is", "was" or a colon (each noun is found with str.find, which beats a
# regex's scan several times over on ordinary text)
_SAID_AFTER = lazy(r"(?=[ \t]+(?:is|was)[ \t]|[ \t]*:)")


def _scan_said_more(text: str, low: str, starts: list[int], spans: list) -> None:
    """Codes, PINs, combinations, tokens, keys and secrets said in a sentence (issue 46)."""
    found = [
        (i, i + len(noun), noun)
        for noun in ("code", "combination", "key")
        if noun in low
        for i in _finds(low, noun)
        if _SAID_AFTER.match(low, i + len(noun))
    ]
    if "PIN" in text:
        found += [(i, i + 3, "pin") for i in _finds(text, "PIN") if _SAID_AFTER.match(text, i + 3)]
    for k in starts:  # token, secret: keywords, their positions known
        for noun in ("token", "secret"):
            if low.startswith(noun, k) and _SAID_AFTER.match(low, k + len(noun)):
                found.append((k, k + len(noun), noun))
    for i, e, noun in found:
        before = low[i - 1] if i else " "
        if noun == "code":
            if before not in " \t-_s" or not _CODE_BEFORE.search(low, max(0, i - 24), i):
                continue  # (encode, unicode, exit code, source code)
            tail, check = _SAID_TAIL_CODE, _code_said
        elif noun in ("pin", "combination"):  # (PIN in capitals: a lower-case pin alone is a GPIO's, pin: 13)
            if before.isalnum() or before == "_":
                continue
            tail, check = _SAID_TAIL_CODE, _code_said
        else:
            if before.isalnum() or before in "_-":
                continue
            if noun == "key" and not _KEY_BEFORE.search(low, max(0, i - 16), i):
                continue
            tail, check = _SAID_TAIL_TOKEN, _token_said
        t = tail.match(text, e)
        if t is not None:
            _add(spans, t, "secret-assignment", check, True, text)


def _pass(text: str) -> tuple[str, dict]:
    counts: dict[str, int] = {}
    low = text.lower()
    if _may_hold_private(low):
        new, nblocks = _remove_private(text)
        if nblocks:
            counts["private"] = nblocks
            text = new
            low = text.lower()

    spans: list = []
    aligned = len(low) == len(text)  # else a non 1:1 case mapping: use re.I
    starts = _keyword_positions(low)
    if starts:  # (offsets are only usable when aligned; _scan_assign re-finds them otherwise)
        _scan_assign(text, low if aligned else None, starts, spans)
        if "--" in text:
            _scan_flags(text, low if aligned else None, spans)
        if ("|" in text or ">" in text) and _BLOCK_HINT.search(text):
            _scan_blocks(text, spans)
        _scan_config(text, low, spans, starts if aligned else [m.start() for m in _KEYWORD_I.finditer(text)])
    elif ":" in text and text.count(":") >= 4:
        _scan_config(text, low, spans)  # a .pgpass line names nothing
    if "key" in low and len(low) == len(text):
        _scan_key_names(text, low, spans)
    if "bearer" in low:
        _scan_bearer(text, low if aligned else None, spans)
    if "-----BEGIN" in text:
        _scan_pem(text, spans)
    if "eyJ" in text:
        _scan_jwt(text, spans)
    if "@" in text and "://" in text:
        _scan_url(text, spans)
    _scan_literals(text, low, spans)
    _scan_said(text, low, starts, aligned, spans)
    if aligned:
        _scan_issue46(text, low, starts, spans)
    _scan_runs(text, spans)

    if not spans:
        return text, counts
    out = []
    last = 0
    for s, e, _prio, kind in _resolve(spans):
        out.append(text[last:s])
        out.append(_MARK + kind + "]")
        last = e
        counts[kind] = counts.get(kind, 0) + 1
    out.append(text[last:])
    return "".join(out), counts


def redact_counts(text: str) -> tuple[str, dict[str, int]]:
    """Redact ``text``; also return the number of replacements per kind."""
    try:
        out, counts = _pass(text)
        if not counts:
            return text, {}
        for _ in range(_MAX_PASSES - 1):
            out2, more = _pass(out)
            if not more:
                break
            for k, v in more.items():
                counts[k] = counts.get(k, 0) + v
            out = out2
        return out, counts
    except Exception:
        if not isinstance(text, str):
            raise TypeError(f"redact() expects str, got {type(text).__name__}") from None
        return _MARK + "error]", {"error": 1}


def redact(text: str) -> str:
    """Return ``text`` with secrets replaced and private blocks removed.

    The input object itself is returned when nothing needed redacting.
    """
    return redact_counts(text)[0]


# --------------------------------------------------------------------------
# What a person states: memories (``recall remember``, the model's), their rules
# --------------------------------------------------------------------------
# A memory is prose, and it goes further than a transcript line: into the project's
# CLAUDE.md block, every session's briefing and the team's server. So besides ``redact``,
# the value after a secret's name is cut wherever it stands ("secret = hunterplum" inside
# a sentence, "sandbox token: tok_9f8e..." after a comma), not only where ``redact`` is
# sure of it. One function decides for every copy (issue 46): what stays here, its
# CLAUDE.md block and what is shared with the team are cut alike.
_STATED = lazy(
    r"(?i)(?<![A-Za-z0-9_])(?:secret|passw(?:or)?d|passphrase|pwd?|token|api[ _-]?key|"
    r"access[ _-]?key|private[ _-]?key)[ \t]*(?:=|:|\bis\b|\bwas\b)[ \t]*"
    r"(?P<q>[\"'`]?)(?P<v>[^\s\"'`]{4,256})(?P=q)"
)
_NOT_STATED_VALUES = frozenset(
    """none null nil true false required optional missing empty invalid expired correct wrong
    stored rotated hashed set unset changed reset needed the a an not in on from for with and or""".split()
)


def _cut_stated(m: re.Match) -> str:
    v = m.group("v").rstrip(",;.:!?)")
    if (
        v.startswith(_MARK)
        or not any(c.isalnum() for c in v)
        or v.lower() in _NOT_STATED_VALUES
        or (v[0] in "{<$%" and not v[1:2].isalnum())
        or v.startswith(("${", "{{", "<", "$"))
    ):
        return m.group(0)
    start = m.start("v") - m.start()
    return m.group(0)[:start] + _MARK + "secret-assignment]" + m.group(0)[start + len(v) :]


def redact_stated(text: str) -> str:
    """``redact(text)``, then the value after a secret's name cut wherever it stands: the one
    redaction of a memory (or a rule) a person or the model states, for the local store,
    ``CLAUDE.md`` and the team's copy alike. The input object itself when nothing changed."""
    out = redact(text)
    if not _STATED.search(out):
        return out
    cut = _STATED.sub(_cut_stated, out)
    return out if cut == out else cut
