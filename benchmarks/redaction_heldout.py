"""A small held-out check of the redaction rules (issue 35 item 8), written after the rules were
tuned and run once: secret placements in spellings the tune corpus (``tests/support/secrets_corpus.py``)
does not hold, and strong passwords from a seed and an alphabet it does not use.

    python -m benchmarks.redaction_heldout [--against REV]

A placement leaks when a piece of its secret survives (``tests.support.secrets_corpus.leaked``).
"""

from __future__ import annotations

import argparse
import base64
import random
import string
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SEED = 35_0035
SAFE = string.ascii_letters + string.digits + "!*-_.~"
STRONG = string.ascii_letters + string.digits + "!#$%&()*+,-./:;<=>?@[]^_{|}~"


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


PLACEMENTS = {  # form -> (text, the secret as it stands in the text)
    "basic-auth, curl -H lower case": lambda v, h: (
        f"curl -H 'authorization: basic {_b64('ops:' + v)}' https://ci",
        _b64("ops:" + v),
    ),
    "basic-auth, Proxy-Authorization": lambda v, h: (
        f"Proxy-Authorization: Basic {_b64('squid:' + v)}",
        _b64("squid:" + v),
    ),
    "curl -u quoted": lambda v, h: (f'curl -fsS -u "robot:{v}" https://nexus.acme.io/repo', v),
    "curl --user=": lambda v, h: (f"curl --user=robot:{v} https://nexus.acme.io/repo", v),
    ".env POSTGRES_PASSWORD": lambda v, h: (f"POSTGRES_USER=app\nPOSTGRES_PASSWORD={v}\n", v),
    ".env MYSQL_ROOT_PASSWORD": lambda v, h: (f"MYSQL_DATABASE=shop\nMYSQL_ROOT_PASSWORD={v}\n", v),
    "PGPASSWORD= psql": lambda v, h: (f"$ PGPASSWORD={v} psql -h db -U app shop", v),
    "jdbc sqlserver": lambda v, h: (f"jdbc:sqlserver://db:1433;databaseName=shop;password={v};encrypt=true", v),
    "jdbc userinfo": lambda v, h: (f"jdbc:mysql://app:{v}@db:3306/shop", v),
    "mysql --password=": lambda v, h: (f"$ mysql -h db -u app --password={v} shop", v),
    "mysql -p quoted": lambda v, h: (f"$ mysqldump -uapp -p'{v}' shop > shop.sql", v),
    "sshpass -p quoted": lambda v, h: (f"$ sshpass -p'{v}' ssh ops@bastion", v),
    "twilio yaml": lambda v, h: (f"twilio:\n  account_sid: AC{h}\n  auth_token: {v}\n", v),
    "twilio json": lambda v, h: ('{"accountSid": "AC' + h + '", "authToken": "' + v + '"}', v),
    "yaml password quoted": lambda v, h: (f'db:\n  password: "{v}"\n', v),
    "yaml list password": lambda v, h: (f"users:\n  - name: app\n    password: {v}\n", v),
    "yaml PASSWORD upper": lambda v, h: (f"PASSWORD: {v}\n", v),
    "pgpass star in prose": lambda v, h: (f"my ~/.pgpass has *:*:*:postgres:{v} in it", v),
    "password was prose": lambda v, h: (f"the old admin password was {v} before the reset", v),
}
SHAPES = {"twilio yaml": "hex", "twilio json": "hex"}
FORBIDDEN = {
    "curl -u quoted": '":',
    "curl --user=": ":",
    "jdbc sqlserver": ";",
    "jdbc userinfo": "@/:",
    "mysql -p quoted": "'",
    "sshpass -p quoted": "'",
    "pgpass star in prose": ":\\",
    "yaml password quoted": '"\\',
}


def _human(rng: random.Random) -> str:
    words = "orchid basalt granite lantern velvet harbor pepper maple falcon comet".split()
    w1, w2 = rng.choice(words), rng.choice(words)
    return rng.choice(
        [
            w1.capitalize() + str(rng.randint(1970, 2026)) + "!",
            w1.capitalize() + w2.capitalize() + str(rng.randint(1, 99)),
            f"{w1}.{w2}.{rng.randint(10, 99)}",
        ]
    )


def cases():
    rng = random.Random(SEED)
    out = []
    for form, make in PLACEMENTS.items():
        for i in range(20):
            h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
            if SHAPES.get(form) == "hex":
                v = "".join(rng.choice("0123456789abcdef") for _ in range(32))
            else:
                bad = FORBIDDEN.get(form, "")
                while True:
                    v = "".join(rng.choice(SAFE) for _ in range(rng.randint(14, 22))) if i % 2 == 0 else _human(rng)
                    if not any(c in v for c in bad):
                        break
            text, secret = make(v, h)
            out.append((form, secret, text))
    return out


def strong(n: int = 600):
    rng = random.Random(SEED + 1)
    forms = (
        lambda p: f"APP_DB_PASSWORD={p}\n",
        lambda p: f"app:\n  db_password: {p}\n",
        lambda p: f"$ migrate --db-password {p} --yes",
    )
    out = []
    for i in range(n):
        while True:
            p = "".join(rng.choice(STRONG) for _ in range(rng.randint(14, 20)))
            if any(c.isupper() for c in p) and any(c.islower() for c in p) and any(c.isdigit() for c in p):
                break
        out.append((p, forms[i % 3](p)))
    return out


def score(redact) -> dict:
    from tests.support.secrets_corpus import leaked

    per: dict[str, int] = {}
    for form, secret, text in cases():
        if leaked(secret, text, redact(text)):
            per[form] = per.get(form, 0) + 1
    pw = sum(1 for p, text in strong() if leaked(p, text, redact(text)))
    return {"placements": len(cases()), "leaked": sum(per.values()), "by_form": per, "strong": 600, "strong_leaked": pw}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from indexer.redact import redact

    runs = {"current": redact}
    if args.against:
        from benchmarks.redaction import _rules_at

        runs = {args.against: _rules_at(args.against).redact, **runs}
    for name, fn in runs.items():
        r = score(fn)
        print(
            f"{name}: {r['leaked']}/{r['placements']} placements leak {r['by_form']}; "
            f"{r['strong_leaked']}/{r['strong']} strong passwords leak"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
