"""Issue 46 item 11: the forms an audit's held-out corpus found leaking (HTTP basic auth,
``curl -u``, ``sshpass -p``, passwords in YAML, a secret said in a sentence) are redacted, and
ordinary text with the same words is not changed. The measurement over the tune corpus and
the held-out set: ``benchmarks/redaction.py``, ``benchmarks/redaction_heldout46.py``
(docs/redaction.md, version 5)."""

from __future__ import annotations

import base64

import pytest

from indexer.redact import REDACTION_VERSION, redact
from recall.team import items
from tests.support.secrets_corpus import key_values, leaked, ordinary

PW = "Xk9mP2vL8qRt"


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


LEAKED_BEFORE = [  # (text, secret): each leaked under version 4
    ("the door code is 7r1ckyD00rC0de", "7r1ckyD00rC0de"),
    ("The alarm code is 5512.", "5512"),
    ("my PIN is 4821", "4821"),
    ("PIN: 482193", "482193"),
    ("pin_code: 4821", "4821"),
    ("the safe combination is 12-34-56", "12-34-56"),
    ("sandbox token: tok_9f8e7d6c5b4a", "tok_9f8e7d6c5b4a"),
    ("the token is tok_9f8e7d6c5b4a until Friday", "tok_9f8e7d6c5b4a"),
    ("the api key is abcd1234efgh", "abcd1234efgh"),
    (f"Authorization: Basic\n    {_b64('admin:' + PW)}", _b64("admin:" + PW)),
    (f"h = {{'Authorization': 'Basic ' + '{_b64('admin:' + PW)}'}}", _b64("admin:" + PW)),
    (f"Basic%20{_b64('admin:' + PW)}", _b64("admin:" + PW)),
    (f"r = requests.get(url, auth=('admin', '{PW}'))", PW),
    (f"HTTPBasicAuth('admin', '{PW}')", PW),
    (f'base64.b64encode(b"admin:{PW}")', PW),
    (f"curl -su admin:{PW} https://x", PW),
    (f"curl -sSku admin:{PW} https://x", PW),
    (f"curl -u admin:'{PW}' https://x", PW),
    (f'curl -u "admin":"{PW}" https://x', PW),
    (f"curl -U bob:{PW} -x p:3128 https://x", PW),
    (f"curl \\\n  -u admin:{PW} \\\n  https://x", PW),
    (f"['curl', '-u', 'admin:{PW}', url]", PW),
    (f"http -a admin:{PW} GET https://x", PW),
    (f"sshpass -P assphrase -p {PW} ssh x", PW),
    (f"['sshpass', '-p', '{PW}', 'ssh', 'x']", PW),
    (f'subprocess.run(["sshpass", "-p", "{PW}", "ssh"])', PW),
    (f"password: &pw {PW}", PW),
    (f"password: !!str {PW}", PW),
    (f"db:\n  password:\n    {PW}\n  port: 5432", PW),
    (f"env:\n  - name: DB_PASSWORD\n    value: {PW}", PW),
    (f"env:\n  - name: DB_PASSWORD\n    value: \"{PW}\"", PW),
    ('{"name": "API_TOKEN", "value": "' + PW + '"}', PW),
]


@pytest.mark.parametrize("text,secret", LEAKED_BEFORE)
def test_the_forms_that_leaked_are_redacted(text, secret):
    out = redact(text)
    assert not leaked(secret, text, out), out
    assert redact(out) == out  # idempotent


ORDINARY = [
    "the exit code is 0",
    "the door code is on the wiki",
    "the token is valid for 24 hours",
    "the token is RS256-signed",
    "the secret is base64-encoded",
    "the api key is missing",
    "PIN: see the doc",
    "pin: 13",
    "the combination is unique",
    "Authorization: Basic realm=\"api\"",
    "password: &default_pw",
    "password: !!null",
    "curl -u admin https://x",
    'curl -u "$USER:$PASS" https://x',
    "sshpass -f ~/.pw ssh x",
    "requests.get(url, auth=(user, password))",
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db",
    "- name: WORKERS\n  value: \"4\"",
    "token:\n  valueFrom:\n    name: api",  # the next line is a key, not the value
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_with_the_same_words_is_kept(text):
    assert redact(text) == text


def test_the_tune_corpus_leaks_nothing_and_changes_no_ordinary_string():
    leaks = [(f, t) for f, _s, secret, t in key_values() if leaked(secret, t, redact(t))]
    assert leaks == []
    assert [t for t in ordinary() if redact(t) != t] == []


def test_the_team_copy_is_cut_by_the_same_rules():
    items._REDACTED.clear()
    out = items.scrub("the door code is 7r1ckyD00rC0de, PIN: 4821")
    assert "7r1ckyD00rC0de" not in out and "4821" not in out


def test_the_rules_version_says_they_learned_more():
    assert REDACTION_VERSION >= 5  # stored history is re-redacted once under these rules
