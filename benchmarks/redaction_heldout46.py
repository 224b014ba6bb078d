"""The held-out check of issue 46 item 11, written before the rules of version 5 were tuned and
not tuned on: secret placements of the five families the audit found leaking (HTTP basic
auth, ``curl -u``, ``sshpass -p``, passwords in YAML, secrets said in a sentence) in spellings
the tune corpus (``tests/support/secrets_corpus.py``, ``key_values()``) does not hold, values
from a seed and shapes of their own; and ordinary text that says the same words without a
secret (a false positive is a line ``redact`` changes).

    python -m benchmarks.redaction_heldout46 [--against REV] [--out benchmarks/redaction_v5_heldout.json]

A placement leaks when a piece of its secret survives (``tests.support.secrets_corpus.leaked``).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SEED = 46_0046
SAFE = string.ascii_letters + string.digits + "!*-_.~%^"


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


PLACEMENTS = {  # family, form -> (text, the secret as it stands in the text)
    ("basic-auth", "HTTP dump"): lambda v: (
        f"> GET /v2/_catalog HTTP/1.1\n> Host: registry.acme.io\n> Authorization: Basic {_b64('ci:' + v)}\n>",
        _b64("ci:" + v),
    ),
    ("basic-auth", "btoa literal"): lambda v: (
        f"fetch(url, {{ headers: {{ Authorization: 'Basic ' + btoa('admin:{v}') }} }})",
        v,
    ),
    ("basic-auth", "aiohttp.BasicAuth"): lambda v: (f"auth = aiohttp.BasicAuth('svc-reporting', '{v}')", v),
    ("basic-auth", "httpx auth tuple"): lambda v: (f'r = httpx.get(URL, auth=("svc-reporting", "{v}"))', v),
    ("basic-auth", "wrapped header value"): lambda v: (
        f"Authorization:\n  Basic {_b64('ops:' + v)}",
        _b64("ops:" + v),
    ),
    ("curl -u", "long options around"): lambda v: (f"curl --silent --user deploy:{v} --fail https://ci.acme.io/api", v),
    ("curl -u", "Makefile recipe"): lambda v: (f"\tcurl -fsSL -u $(CI_USER):{v} https://artifacts.acme.io/x.tgz", v),
    ("curl -u", "inside a JSON command"): lambda v: (
        '{"command": "curl -u admin:' + v + ' https://es:9200/_cat/nodes"}',
        v,
    ),
    ("curl -u", "-Lu cluster"): lambda v: (f"curl -Lu admin:{v} https://nexus.acme.io/service/rest", v),
    ("curl -u", "continued line"): lambda v: (
        f"curl -X PUT https://es:9200/idx \\\n     --user elastic:{v} \\\n     -d @m.json",
        v,
    ),
    ("sshpass -p", "JSON argv"): lambda v: ('["sshpass", "-p", "' + v + '", "scp", "db.sql", "ops@backup:"]', v),
    ("sshpass -p", "-o options after"): lambda v: (f"sshpass -p {v} ssh -o StrictHostKeyChecking=no pi@10.0.0.9", v),
    ("sshpass -p", "-v -P then -p"): lambda v: (f"sshpass -v -P 'Password:' -p {v} ssh admin@switch01", v),
    ("sshpass -p", "in a for loop"): lambda v: (f"for h in $HOSTS; do sshpass -p{v} ssh root@$h reboot; done", v),
    ("yaml", "value on the next line"): lambda v: (f"mysql:\n  user: shop\n  password:\n      {v}\n", v),
    ("yaml", "anchor then quoted value"): lambda v: (
        f'adminPassword: &admin_pw "{v}"\nreplicaPassword: *admin_pw\n',
        v,
    ),
    ("yaml", "ECS env JSON"): lambda v: ('"environment": [{"name": "API_TOKEN", "value": "' + v + '"}]', v),
    ("yaml", "k8s env, value quoted"): lambda v: (f"        - name: SMTP_PASSWORD\n          value: '{v}'\n", v),
    ("yaml", "!!str tag"): lambda v: (f"redis:\n  password: !!str {v}\n", v),
    ("prose", "garage code"): lambda v: (f"btw the garage code is {v} if you get there first", v),
    ("prose", "PIN for the card"): lambda v: (f"The PIN for the test card is {v}.", v),
    ("prose", "front door code colon"): lambda v: (f"our front door code: {v} (changes monthly)", v),
    ("prose", "passphrase for the key"): lambda v: (f"the passphrase for the signing key is {v}", v),
    ("prose", "staging api token colon"): lambda v: (f"use the staging api token: {v} for the smoke tests", v),
    ("prose", "admin secret is"): lambda v: (f"the admin secret is {v}, do not share it", v),
}
SHAPES = {  # forms whose values are codes
    ("prose", "garage code"): "code",
    ("prose", "PIN for the card"): "pin",
    ("prose", "front door code colon"): "code",
}
FORBIDDEN = {
    ("basic-auth", "btoa literal"): "':",
    ("basic-auth", "aiohttp.BasicAuth"): "'",
    ("basic-auth", "httpx auth tuple"): '"',
    ("curl -u", "inside a JSON command"): '"\\',
    ("curl -u", "Makefile recipe"): "$",
    ("sshpass -p", "JSON argv"): '"\\',
    ("yaml", "anchor then quoted value"): '"\\',
    ("yaml", "ECS env JSON"): '"\\',
    ("yaml", "k8s env, value quoted"): "'",
    ("sshpass -p", "in a for loop"): ";$",
}

#: ordinary text with the same words and no secret: none of it may change
ORDINARY = r"""
the exit code is 0 when every test passes
the status code is 404 because the route moved
the error code is ECONNRESET, the proxy drops idle sockets
the door code is in 1Password under "Office"
the PIN is printed on the back of the card
the token is valid for 24 hours
the api key is read from the environment at start-up
the secret is stored in Vault, not in the repo
the passphrase is required when the key is loaded
the combination is unique per user and never logged
the code is in src/auth/login.py
the access code is sent by SMS
the token is a JWT signed with RS256
the garage code is the same as last year's, ask Sam
the PIN for the card is on the sticky note in the safe
Authorization: Basic realm="registry"
WWW-Authenticate: Basic realm="api", charset="UTF-8"
curl -u prompts for the password when you leave it out
curl -u "$CI_USER:$CI_PASSWORD" https://ci.acme.io
curl --user "${NEXUS_USER}:${NEXUS_PASS}" -T app.jar https://nexus
sshpass -p is insecure; pass the password with -f or -e instead
sshpass -f ~/.ssh/pw.txt ssh pi@raspberrypi
sshpass -e ssh deploy@10.0.0.5
requests.get(url, auth=(user, password))
auth = HTTPBasicAuth(username, password)
auth = aiohttp.BasicAuth(login=cfg.user, password=cfg.password)
password:
  secretKeyRef:
    name: db
- name: DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: db-credentials
      key: password
- name: DB_HOST
  value: db.internal
- name: LOG_LEVEL
  value: debug
password: &default_password
  min_length: 12
replicaPassword: *admin_pw
the sandbox token: expired yesterday, generate a new one
the staging api token: see docs/auth.md
the admin secret is rotated every quarter
my PIN is the one I always use
PIN: see the onboarding doc
pin: 13
led_pin: 4
passcode_length: 6
the code is 42 lines long
the error code is 1 and the message says permission denied
the combination of both flags is not supported
the key is the user id and the value the session
the wifi is slow today
the door is locked after 8pm
the token count is 1500 for that prompt
the password reset link expires after 30 minutes
the passphrase prompt appears twice on macOS
basic auth is disabled on the public endpoint
use Basic auth only over TLS
the PIN pad is broken on terminal 3
""".strip("\n").split("\n")


def _value(rng: random.Random, shape: str | None, bad: str, i: int) -> str:
    if shape == "pin":
        return "".join(rng.choice(string.digits) for _ in range(rng.choice((4, 6))))
    if shape == "code":
        return rng.choice(
            [
                "".join(rng.choice(string.digits) for _ in range(rng.choice((4, 5, 6)))),
                "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(8, 14))),
                f"{rng.randint(10, 99)}-{rng.randint(10, 99)}-{rng.randint(10, 99)}",
            ]
        )
    while True:
        if i % 2 == 0:
            v = "".join(rng.choice(SAFE) for _ in range(rng.randint(12, 20)))
        else:
            words = "quartz heron saffron tundra lilac ember nimbus cobble fjord wren".split()
            w1, w2 = rng.choice(words), rng.choice(words)
            v = rng.choice(
                [w1.capitalize() + w2.capitalize() + str(rng.randint(1, 999)), f"{w1}{rng.randint(1980, 2026)}!"]
            )
        if not any(c in v for c in bad):
            return v


def cases():
    rng = random.Random(SEED)
    out = []
    for (family, form), make in PLACEMENTS.items():
        for i in range(20):
            v = _value(rng, SHAPES.get((family, form)), FORBIDDEN.get((family, form), ""), i)
            text, secret = make(v)
            out.append((family, form, secret, text))
    return out


def ordinary() -> list[str]:
    """The ordinary lines, and the multi-line ones joined as a file shows them."""
    lines = [line for line in ORDINARY if line.strip()]
    blocks = [
        "\n".join(ORDINARY[ORDINARY.index("password:") : ORDINARY.index("password:") + 3]),
        "\n".join(ORDINARY[ORDINARY.index("- name: DB_PASSWORD") : ORDINARY.index("- name: DB_PASSWORD") + 9]),
        "\n".join(
            ORDINARY[ORDINARY.index("password: &default_password") : ORDINARY.index("replicaPassword: *admin_pw") + 1]
        ),
    ]
    return lines + blocks


def score(redact) -> dict:
    from tests.support.secrets_corpus import leaked

    fam: dict[str, list[int]] = {}
    by_form: dict[str, int] = {}
    for family, form, secret, text in cases():
        f = fam.setdefault(family, [0, 0])
        f[1] += 1
        if leaked(secret, text, redact(text)):
            f[0] += 1
            by_form[f"{family}: {form}"] = by_form.get(f"{family}: {form}", 0) + 1
    plain = ordinary()
    changed = [t for t in plain if redact(t) != t]
    return {
        "placements": sum(v[1] for v in fam.values()),
        "leaked": sum(v[0] for v in fam.values()),
        "by_family": {k: {"leaked": v[0], "placements": v[1]} for k, v in fam.items()},
        "leaked_by_form": by_form,
        "ordinary": len(plain),
        "false_positives": len(changed),
        "false_positive_examples": [redact(t) for t in changed][:20],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", help="also score indexer/redact.py at this git revision")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from indexer.redact import REDACTION_VERSION, redact

    runs = {}
    if args.against:
        from benchmarks.redaction import _rules_at

        runs[args.against] = _rules_at(args.against).redact
    runs[f"current (v{REDACTION_VERSION})"] = redact
    results = {name: score(fn) for name, fn in runs.items()}
    for name, r in results.items():
        fams = ", ".join(f"{k} {v['leaked']}/{v['placements']}" for k, v in r["by_family"].items())
        print(
            f"{name}: {r['leaked']}/{r['placements']} placements leak ({fams}); "
            f"{r['false_positives']}/{r['ordinary']} ordinary lines changed"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
