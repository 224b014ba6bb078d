"""A corpus of fake secrets in the contexts a Claude Code transcript shows them.

Every secret is *generated* from a fixed-seed ``random.Random`` (nothing here
is a real credential, and nothing looks like one to a repository secret
scanner since the values only exist at run time).  The output is stable:
``corpus()`` returns the same list on every call and in every process.

``corpus()`` -> list of ``(kind, secret, text)``: ``kind`` is the
``[redacted:<kind>]`` label ``indexer.redact`` must produce, ``secret`` is a
substring of ``text`` that must not survive redaction.  For PEM keys the
secret is the first base64 line of the key body (tests check every line).

``benign()`` -> strings that must come out of ``redact`` unchanged.

Used by tests/indexer/test_redact.py and by the indexing test that checks no secret
reaches the index: ``from tests.support.secrets_corpus import corpus, benign``.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string

__all__ = [
    "corpus",
    "benign",
    "matrix",
    "passwords",
    "false_positives",
    "token_formats",
    "PLACEMENTS",
    "PASSWORD_FORMS",
    "SEED",
]

SEED = 20240611

_UPPER = string.ascii_uppercase
_LOWER = string.ascii_lowercase
_DIGITS = string.digits
_B62 = _UPPER + _LOWER + _DIGITS
_B64 = _B62 + "+/"
_B64URL = _B62 + "-_"
_HEX = "0123456789abcdef"
_B32 = _UPPER + "234567"


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int, mixed: bool = True) -> str:
        """n random chars; ``mixed`` insists on every class (upper, lower, digit)
        the alphabet offers, as real keys of these lengths practically always do."""
        need = [cls for cls in (_UPPER, _LOWER, _DIGITS) if mixed and any(c in cls for c in alphabet)]
        while True:
            s = "".join(self.rng.choice(alphabet) for _ in range(n))
            if all(any(c in cls for c in s) for cls in need):
                return s

    def digits(self, n: int) -> str:
        return "".join(self.rng.choice(_DIGITS) for _ in range(n))

    def hex(self, n: int) -> str:
        return "".join(self.rng.choice(_HEX) for _ in range(n))

    def password(self, n: int = 16) -> str:
        # printable, no quotes/whitespace/backslash, never a placeholder word
        alphabet = _B62 + "!#%*+-_.~^"
        return self.chars(alphabet, n)

    # vendor formats --------------------------------------------------------
    def anthropic(self) -> str:
        return "sk-ant-api03-" + self.chars(_B64URL, 93) + "AA"

    def openai_project(self) -> str:
        return "sk-proj-" + self.chars(_B64URL, 124)

    def openai_legacy(self) -> str:
        return "sk-" + self.chars(_B62, 20) + "T3BlbkFJ" + self.chars(_B62, 20)

    def openai_svcacct(self) -> str:
        return "sk-svcacct-" + self.chars(_B64URL, 100)

    def aws_access(self, prefix: str = "AKIA") -> str:
        return prefix + "".join(self.rng.choice(_B32) for _ in range(16))

    def aws_secret(self) -> str:
        return self.chars(_B64, 40)

    def github(self, prefix: str) -> str:
        return prefix + self.chars(_B62, 36)

    def github_pat(self) -> str:
        return "github_pat_" + self.chars(_B62, 22) + "_" + self.chars(_B62, 59)

    def gitlab(self) -> str:
        return "glpat-" + self.chars(_B62 + "-_", 20)

    def slack_bot(self) -> str:
        return f"xoxb-{self.digits(11)}-{self.digits(13)}-{self.chars(_B62, 24)}"

    def slack_user(self) -> str:
        return f"xoxp-{self.digits(11)}-{self.digits(11)}-{self.digits(13)}-{self.hex(32)}"

    def slack_app(self) -> str:
        return f"xapp-1-A{self.chars(_UPPER + _DIGITS, 10, False)}-{self.digits(13)}-{self.hex(64)}"

    def slack_hook_path(self) -> str:
        t = "T" + self.chars(_UPPER + _DIGITS, 8, False)
        b = "B" + self.chars(_UPPER + _DIGITS, 10, False)
        return f"{t}/{b}/{self.chars(_B62, 24)}"

    def stripe(self, prefix: str) -> str:
        return prefix + self.chars(_B62, 99 if prefix.startswith("sk") else 24)

    def jwt(self, payload: dict) -> str:
        def enc(obj) -> str:
            raw = json.dumps(obj, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).decode().rstrip("=")

        sig = base64.urlsafe_b64encode(self.rng.randbytes(32)).decode().rstrip("=")
        return enc({"alg": "HS256", "typ": "JWT"}) + "." + enc(payload) + "." + sig

    def pem_body(self, nbytes: int, width: int = 64) -> list[str]:
        b = base64.b64encode(self.rng.randbytes(nbytes)).decode()
        return [b[i : i + width] for i in range(0, len(b), width)]


def _pem(label: str, lines: list[str], newline: str = "\n", headers: list[str] = ()) -> str:
    parts = [f"-----BEGIN {label}-----", *headers, *lines, f"-----END {label}-----"]
    return newline.join(parts)


def corpus() -> list[tuple[str, str, str]]:
    g = _Gen(SEED)
    out: list[tuple[str, str, str]] = []

    def add(kind: str, secret: str, text: str) -> None:
        assert secret in text, (kind, secret)
        out.append((kind, secret, text))

    # --- anthropic ---------------------------------------------------------
    k = g.anthropic()
    add(
        "anthropic-key",
        k,
        "$ curl https://api.anthropic.com/v1/messages \\\n"
        f'    -H "x-api-key: {k}" \\\n'
        '    -H "anthropic-version: 2023-06-01" \\\n'
        '    -H "content-type: application/json" \\\n'
        '    -d \'{"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": []}\'',
    )
    k = g.anthropic()
    add(
        "anthropic-key",
        k,
        f"Tool result (Bash: cat .env):\nNODE_ENV=development\nPORT=3000\nANTHROPIC_API_KEY={k}\nLOG_LEVEL=debug\n",
    )
    k = g.anthropic()
    add(
        "anthropic-key",
        k,
        "import anthropic\n\n"
        f'client = anthropic.Anthropic(api_key="{k}")\n'
        "resp = client.messages.create(model=MODEL, max_tokens=512, messages=msgs)\n",
    )

    # --- openai ------------------------------------------------------------
    k = g.openai_project()
    add(
        "openai-key",
        k,
        f"# settings.py\nimport os\n\nOPENAI_API_KEY = \"{k}\"\nEMBEDDING_MODEL = \"text-embedding-3-small\"\n",
    )
    k = g.openai_legacy()
    add(
        "openai-key",
        k,
        '{\n  "providers": {\n    "openai": {\n'
        f'      "api_key": "{k}",\n'
        '      "org": "org-research",\n      "timeout": 30\n    }\n  }\n}',
    )
    k = g.openai_svcacct()
    add(
        "openai-key",
        k,
        "Traceback (most recent call last):\n"
        '  File "/app/worker.py", line 88, in summarize\n'
        "    resp = client.chat.completions.create(**req)\n"
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': "
        f"'Incorrect API key provided: {k}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.', 'type': 'invalid_request_error'}}",
    )

    # --- aws ---------------------------------------------------------------
    ak, sk = g.aws_access(), g.aws_secret()
    creds = (
        "$ cat ~/.aws/credentials\n"
        "[default]\n"
        f"aws_access_key_id = {ak}\n"
        f"aws_secret_access_key = {sk}\n"
        "region = us-east-1\n"
    )
    add("aws-access-key", ak, creds)
    add("aws-secret-key", sk, creds)
    ak, sk = g.aws_access(), g.aws_secret()
    add(
        "aws-secret-key",
        sk,
        f"export AWS_ACCESS_KEY_ID={ak}\n"
        f"export AWS_SECRET_ACCESS_KEY={sk}\n"
        "export AWS_DEFAULT_REGION=eu-west-1\n"
        "aws s3 ls s3://acme-backups/",
    )
    add("aws-access-key", ak, f"export AWS_ACCESS_KEY_ID={ak}\naws sts get-caller-identity")
    ak, sk, st = g.aws_access("ASIA"), g.aws_secret(), g.chars(_B64, 356)
    sts = (
        "$ aws sts assume-role --role-arn arn:aws:iam::123456789012:role/deploy --role-session-name ci\n"
        "{\n"
        '    "Credentials": {\n'
        f'        "AccessKeyId": "{ak}",\n'
        f'        "SecretAccessKey": "{sk}",\n'
        f'        "SessionToken": "{st}",\n'
        '        "Expiration": "2024-06-11T13:37:00+00:00"\n'
        "    }\n}"
    )
    add("aws-secret-key", sk, sts)
    add("aws-access-key", ak, sts)
    add("secret-assignment", st, sts)

    # --- github ------------------------------------------------------------
    k = g.github("ghp_")
    add(
        "github-token",
        k,
        "$ git remote -v\n"
        f"origin\thttps://{k}@github.com/acme/payments-api.git (fetch)\n"
        f"origin\thttps://{k}@github.com/acme/payments-api.git (push)",
    )
    k = g.github("gho_")
    add(
        "github-token",
        k,
        "$ gh auth status --show-token\n"
        "github.com\n"
        "  ✓ Logged in to github.com account octo-dev (keyring)\n"
        "  - Active account: true\n"
        "  - Git operations protocol: https\n"
        f"  - Token: {k}\n"
        "  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'",
    )
    k = g.github_pat()
    add("github-token", k, f"# .env.local\nGITHUB_TOKEN={k}\nGITHUB_REPOSITORY=acme/payments-api\n")
    k = g.github("ghs_")
    add(
        "github-token",
        k,
        f'curl -sS -H "Authorization: token {k}" '
        "-H \"Accept: application/vnd.github+json\" https://api.github.com/repos/acme/app/pulls?state=open",
    )

    # --- gitlab ------------------------------------------------------------
    k = g.gitlab()
    add(
        "gitlab-token",
        k,
        f"$ git clone https://oauth2:{k}@gitlab.com/acme-group/infra/terraform-modules.git\n"
        "Cloning into 'terraform-modules'...\n"
        "remote: Enumerating objects: 1432, done.",
    )
    k = g.gitlab()
    add(
        "gitlab-token", k, f"variables:\n  DOCKER_DRIVER: overlay2\n  GITLAB_API_TOKEN: {k}\n  SECURE_LOG_LEVEL: info\n"
    )

    # --- slack -------------------------------------------------------------
    k = g.slack_bot()
    add(
        "slack-token", k, f"SLACK_SIGNING_SECRET_FILE=/run/secrets/slack\nSLACK_BOT_TOKEN={k}\nSLACK_CHANNEL=#deploys\n"
    )
    p = g.slack_hook_path()
    add(
        "slack-token",
        p,
        "curl -X POST -H 'Content-type: application/json' "
        "--data '{\"text\":\"Deploy of payments-api finished\"}' "
        f"https://hooks.slack.com/services/{p}",
    )
    k = g.slack_app()
    add(
        "slack-token",
        k,
        f'const app = new App({{\n  token: process.env.SLACK_BOT_TOKEN,\n  appToken: "{k}",\n  socketMode: true,\n}});',
    )
    k = g.slack_user()
    add("slack-token", k, f"WARNING slack_sdk.web.base_client: token={k} has been rate limited (retry in 30s)")

    # --- stripe ------------------------------------------------------------
    k = g.stripe("sk_live_")
    add(
        "stripe-key",
        k,
        f"import stripe\nstripe.api_key = \"{k}\"\nintent = stripe.PaymentIntent.create(amount=2000, currency='usd')",
    )
    k = g.stripe("rk_live_")
    add("stripe-key", k, f"STRIPE_RESTRICTED_KEY={k}\nSTRIPE_ACCOUNT=acct_1Nv0FGQ9RKHgCVdK\n")
    k = "whsec_" + g.chars(_B62, 32)
    add("stripe-key", k, f"> Ready! Your webhook signing secret is {k} (^C to quit)")
    k = g.stripe("sk_test_")
    add("stripe-key", k, f"stripe.error.AuthenticationError: Request req_8sHaG3kQ: Invalid API Key provided: {k}")

    # --- bearer ------------------------------------------------------------
    k = g.chars(_B64URL, 43)
    add("bearer-token", k, f'curl -sS https://api.internal.acme.io/v2/orders -H "Authorization: Bearer {k}" | jq .')
    k = g.chars(_B62 + "._~", 64)
    add(
        "bearer-token",
        k,
        "*   Trying 10.0.3.17:443...\n"
        "> GET /v1/me HTTP/2\n"
        "> Host: api.acme.io\n"
        f"> authorization: Bearer {k}\n"
        "> user-agent: curl/8.5.0\n"
        "< HTTP/2 200",
    )
    k = g.chars(_B62, 32)
    add(
        "bearer-token",
        k,
        f"const res = await fetch(`${{BASE}}/items`, {{\n  headers: {{ Authorization: 'Bearer {k}' }},\n}});",
    )

    # --- jwt ---------------------------------------------------------------
    k = g.jwt({"sub": "user_42", "role": "admin", "iat": 1718000000, "exp": 1718003600})
    add("jwt", k, f'http GET :8000/api/profile "Authorization: Bearer {k}"')
    k = g.jwt({"sid": g.hex(16), "uid": 42})
    add("jwt", k, f"< set-cookie: session={k}; Path=/; HttpOnly; Secure; SameSite=Lax")
    k = g.jwt({"iss": "https://accounts.example.com", "aud": "web", "email": "dev@example.com"})
    add(
        "jwt",
        k,
        '{\n  "access_token": "' + g.hex(8) + '",\n'
        f'  "id_token": "{k}",\n'
        '  "token_type": "Bearer",\n  "expires_in": 3599\n}',
    )

    # --- private keys -----------------------------------------------------
    lines = g.pem_body(1200, 70)
    add("private-key", lines[0], "$ cat ~/.ssh/id_ed25519\n" + _pem("OPENSSH PRIVATE KEY", lines) + "\n$ ls -la ~/.ssh")
    lines = g.pem_body(1190)
    sa = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": g.hex(40),
        "private_key": _pem("PRIVATE KEY", lines) + "\n",
        "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
    }
    add("private-key", lines[0], "$ cat gcp-key.json\n" + json.dumps(sa, indent=2))
    lines = g.pem_body(120)
    add("private-key", lines[0], "Generated key:\n" + _pem("EC PRIVATE KEY", lines) + "\nSaved to ./certs/server.key")
    lines = g.pem_body(900)
    add(
        "private-key",
        lines[0],
        "$ gpg --export-secret-keys --armor dev@example.com\n"
        + _pem("PGP PRIVATE KEY BLOCK", lines, headers=["Comment: exported by ci", ""]),
    )
    lines = g.pem_body(1190)
    add(
        "private-key",
        lines[0],
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
        + g.hex(32).upper()
        + "\n\n"
        + "\n".join(lines)
        + "\n-----END RSA PRIVATE KEY-----",
    )

    # --- url passwords ------------------------------------------------------
    pw = g.password(18)
    add(
        "url-password",
        pw,
        "Traceback (most recent call last):\n"
        '  File "/app/.venv/lib/python3.11/site-packages/sqlalchemy/engine/base.py", line 145, in __init__\n'
        "    self._dbapi_connection = engine.raw_connection()\n"
        "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
        '"db.internal" (10.0.0.12), port 5432 failed: FATAL:  password authentication failed for user "app"\n'
        f"(engine url: postgresql+psycopg2://app:{pw}@db.internal:5432/payments)",
    )
    pw = g.password(24)
    add(
        "url-password",
        pw,
        "services:\n  worker:\n    environment:\n"
        f"      - REDIS_URL=redis://:{pw}@cache:6379/0\n"
        "      - CELERY_CONCURRENCY=4\n",
    )
    pw = g.password(16)
    add(
        "url-password",
        pw,
        f'MONGO_URI = "mongodb+srv://admin:{pw}@cluster0.x1y2z.mongodb.net/test?retryWrites=true&w=majority"',
    )
    pw = g.password(12)
    add(
        "url-password",
        pw,
        f"2024-06-11 09:14:02,118 ERROR kombu.connection: Cannot connect to amqp://guest:{pw}@rabbitmq:5672//: "
        "[Errno 111] Connection refused.",
    )
    pw = g.password(20)
    add("url-password", pw, f"$ git remote set-url origin https://alice:{pw}@git.acme.io/platform/monorepo.git")

    # --- named secrets -------------------------------------------------------
    v = "django-insecure-" + g.chars(_B62 + "!@#$%^*-_=+", 50)
    add("django-secret", v, f"# config/settings.py\nDEBUG = True\nSECRET_KEY = '{v}'\nALLOWED_HOSTS = []")
    v = g.password(14)
    add(
        "secret-assignment",
        v,
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        "      POSTGRES_USER: app\n"
        f"      POSTGRES_PASSWORD: {v}\n"
        "    ports:\n      - \"5432:5432\"\n",
    )
    v = g.password(16)
    add("secret-assignment", v, f'{{\n  "db_host": "localhost",\n  "db_user": "app",\n  "db_password": "{v}"\n}}')
    v = g.password(20)
    add("secret-assignment", v, f"export DB_PASSWORD='{v}'\npsql -h localhost -U app payments")
    v = g.password(12)
    add("secret-assignment", v, f"$ mysqldump --user=root --password={v} --single-transaction shop > shop.sql")
    v = g.hex(32)
    add(
        "secret-assignment",
        v,
        f"< HTTP/1.1 200 OK\n< Content-Type: application/json\n< X-Auth-Token: {v}\n< X-Request-Id: 7f1c2d3e",
    )
    v = base64.b64encode(f"deploy:{g.password(14)}".encode()).decode()
    add("secret-assignment", v, f'curl -H "Authorization: Basic {v}" https://registry.acme.io/v2/_catalog')
    v = g.hex(64)
    add("secret-assignment", v, f'[tool.acme]\nendpoint = "https://api.acme.io"\napi_key = "{v}"\n')
    v = "GOCSPX-" + g.chars(_B64URL, 28)
    add(
        "google-oauth",
        v,
        '{"installed": {"client_id": "1234567890-abc.apps.googleusercontent.com", '
        f'"client_secret": "{v}", "redirect_uris": ["http://localhost"]}}}}',
    )
    v = "AIza" + g.chars(_B64URL, 35)
    add(
        "google-api-key",
        v,
        "const firebaseConfig = {\n"
        f'  apiKey: "{v}",\n'
        '  authDomain: "acme-app.firebaseapp.com",\n  projectId: "acme-app",\n};',
    )
    v = "npm_" + g.chars(_B62, 36)
    add("npm-token", v, f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={v}\n")
    v = "hf_" + g.chars(_LOWER + _UPPER, 34)
    add("huggingface-token", v, f"$ huggingface-cli login --token {v}\nToken is valid (permission: write).")

    # --- unnamed high-entropy strings ----------------------------------------
    v = g.chars(_B62, 48)
    add("high-entropy", v, f"Your new API key is: {v}\nStore it somewhere safe; it won't be shown again.")
    v = base64.b64encode(g.rng.randbytes(32)).decode()
    add(
        "secret-assignment",
        v,  # every value of a Secret's data (issue 28), not only random ones
        "$ kubectl get secret api-tls -o yaml\napiVersion: v1\ndata:\n"
        f"  tls.key: {v}\nkind: Secret\nmetadata:\n  name: api-tls\ntype: Opaque",
    )
    v = g.chars(_B64URL, 68)
    add("high-entropy", v, f"webhook configured: https://discord.com/api/webhooks/{g.digits(18)}/{v}")
    v = g.chars(_B62, 40)
    add("high-entropy", v, f"INFO  [session] established sid={v} peer=10.0.0.7:51234")

    return out + matrix()


# ---------------------------------------------------------------------------
# formats x placements: every vendor format of the public rule sets the redactor
# covers, in every place a transcript shows a secret
# ---------------------------------------------------------------------------
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
_DJANGO = _LOWER + _DIGITS + "!@#$%^&*(-_=+)"


def token_formats(g: _Gen) -> list[tuple[str, str]]:
    """(kind, token) for every format recognised by its own shape, with no name around it."""
    return [
        ("databricks-token", "dapi" + g.hex(32)),
        ("mailgun-key", "key-" + g.hex(32)),
        ("shopify-token", "shpat_" + g.hex(32)),
        ("shopify-token", "shpss_" + g.hex(32)),
        ("digitalocean-token", "dop_v1_" + g.hex(64)),
        ("vault-token", "hvs." + g.chars(_B64URL, 90)),
        ("vault-token", "hvs." + g.chars(_B62, 24)),
        ("postman-key", f"PMAK-{g.hex(24)}-{g.hex(34)}"),
        ("newrelic-key", "NRAK-" + g.chars(_UPPER + _DIGITS, 27)),
        ("alibaba-key", "LTAI" + g.chars(_B62, 20)),
        ("age-key", "AGE-SECRET-KEY-1" + "".join(g.rng.choice(_BECH32) for _ in range(58))),
        ("azure-secret", g.chars(_B62, 3) + g.digits(1) + "Q~" + g.chars(_B62, 10) + "_~." + g.chars(_B62, 21)),
        ("twilio-token", "SK" + g.hex(32)),
        ("supabase-token", "sbp_" + g.hex(40)),
        ("sentry-token", "sntryu_" + g.hex(64)),
        ("huggingface-token", "hf_" + g.chars(_LOWER + _UPPER, 34)),
        ("npm-token", "npm_" + g.chars(_B62, 36)),
        ("pypi-token", "pypi-AgEIcHlwaS5vcmc" + g.chars(_B64URL, 70)),
        ("google-api-key", "AIza" + g.chars(_B64URL, 35)),
        ("google-oauth", "GOCSPX-" + g.chars(_B64URL, 28)),
        ("google-oauth", "ya29." + g.chars(_B64URL, 60)),
        ("sendgrid-key", f"SG.{g.chars(_B64URL, 22)}.{g.chars(_B64URL, 43)}"),
        ("grafana-token", f"glsa_{g.chars(_B62, 32)}_{g.hex(8)}"),
        ("docker-token", "dckr_pat_" + g.chars(_B64URL, 27)),
        ("doppler-token", "dp.pt." + g.chars(_B62, 43)),
        ("atlassian-token", "ATATT3" + g.chars(_B64URL, 186)),
        ("linear-key", "lin_api_" + g.chars(_B62, 40)),
        ("vendor-token", "xai-" + g.chars(_B62, 80)),
        ("vendor-token", "gsk_" + g.chars(_B62, 52)),
        ("vendor-token", "r8_" + g.chars(_B62, 37)),
        ("vendor-token", "tskey-api-" + g.chars(_B62, 30)),
        ("anthropic-key", g.anthropic()),
        ("openai-key", g.openai_project()),
        ("aws-access-key", g.aws_access()),
        ("github-token", g.github("ghp_")),
        ("github-token", g.github_pat()),
        ("gitlab-token", g.gitlab()),
        ("slack-token", g.slack_bot()),
        ("stripe-key", g.stripe("sk_live_")),
    ]


#: where a token shows up, under a name that says nothing about secrets
PLACEMENTS = {
    "prose": lambda t: f"Here is the one from the dashboard: {t} and it works now.",
    "env": lambda t: f"# .env\nNODE_ENV=production\nSERVICE_VALUE={t}\nPORT=8080\n",
    "json": lambda t: f'{{"service": {{"value": "{t}", "region": "eu-west-1"}}}}',
    "yaml": lambda t: f"service:\n  value: {t}\n  retries: 3\n",
    "shell": lambda t: f"$ deploy --value '{t}' --region eu && echo done (value `{t}`)",
}


def _contextual(g: _Gen) -> list[tuple[str, str, str]]:
    """Formats only known by what is around them, each in five placements."""
    out = []
    sid = "AC" + g.hex(32)
    for i in range(5):
        t = g.hex(32)
        text = (
            f"The Twilio auth token is {t} (account {sid}).",
            f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={t}\n",
            f'{{"twilio": {{"account_sid": "{sid}", "auth_token": "{t}"}}}}',
            f"twilio:\n  sid: {sid}\n  auth: {t}\n",
            f'client = twilio.rest.Client("{sid}", "{t}")',
        )[i]
        out.append(("twilio-token", t, text))
    for i in range(5):
        sig = base64.b64encode(g.rng.randbytes(32)).decode().replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        url = (
            f"https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r"
            f"&se=2026-01-01T00:00:00Z&sig={sig}"
        )
        text = (
            f"Download it from {url} before it expires.",
            f"AZURE_BACKUP_URL={url}\n",
            f'{{"backup_url": "{url}"}}',
            f"backup:\n  url: {url}\n",
            f'$ curl -sS -o db.bak "{url}"',
        )[i]
        out.append(("azure-sas", sig, text))
    for i in range(5):
        v = "django-insecure-" + "".join(g.rng.choice(_DJANGO) for _ in range(50))
        text = (
            f"The generated key was {v} so rotate it.",
            f"DJANGO_SETTINGS_MODULE=app.settings\nDJANGO_KEY={v}\n",
            f'{{"django": {{"key": "{v}"}}}}',
            f"django:\n  key: {v}\n",
            f"$ python manage.py check  # key {v}",
        )[i]
        out.append(("django-secret", v, text))
    for i in range(5):
        v = base64.b64encode(f"deploy:{g.password(16)}".encode()).decode()
        text = (
            f"The proxy wants Basic {v} on every call.",
            f"upstream sends `Basic {v}` to the registry",
            f'headers = {{"X-Upstream": "Basic {v}"}}',
            f"upstream:\n  header: Basic {v}\n",
            f"$ http GET registry.acme.io/v2/ 'X-Forward: Basic {v}'",
        )[i]
        out.append(("basic-auth", v, text))
    for i in range(5):
        pw = g.password(16)
        text = (
            f"$ curl -u deploy:{pw} https://registry.acme.io/v2/_catalog",
            f"$ curl --user 'admin:{pw}' -X POST https://ci.acme.io/job/build",
            f'{{"command": "curl -sS -u \\"api:{pw}\\" https://api.acme.io/v1/me"}}',
            f"RESP=$(curl -s -u ops:{pw} https://status.acme.io)",
            f"then I ran curl --user=bot:{pw} https://hooks.acme.io and it answered 200",
        )[i]
        out.append(("cli-password", pw, text))
    for i in range(5):
        pw = g.password(16)
        text = (
            f"$ sshpass -p {pw} ssh root@10.0.0.5 uptime",
            f"$ sshpass -p '{pw}' scp dump.sql backup@db:/srv/",
            f"sshpass -v -p {pw} rsync -a ./site/ web@host:/var/www/",
            f'{{"command": "sshpass -p {pw} ssh deploy@host"}}',
            f"I used sshpass -p {pw} to get in",
        )[i]
        out.append(("cli-password", pw, text))
    for i in range(5):
        pw = g.password(16)
        text = (
            f"$ mysql -uroot -p{pw} shop",
            f"$ mysqldump -u app -p{pw} --all-databases > dump.sql",
            f"$ mysql -h db -u app -p'{pw}' -e 'select 1'",
            f"docker exec db mariadb -uroot -p{pw} -e 'show databases'",
            f'{{"command": "mysqladmin -u root -p{pw} status"}}',
        )[i]
        out.append(("cli-password", pw, text))
    for i in range(5):
        pw = g.chars(_B62 + "!*-_.~", 16)
        text = (
            f"jdbc:mysql://db:3306/shop?user=app&password={pw}&useSSL=true",
            f"jdbc:sqlserver://db:1433;databaseName=shop;user=sa;password={pw};encrypt=true",
            f"spring.datasource.url=jdbc:postgresql://db:5432/shop?user=app&password={pw}\n",
            f'{{"url": "jdbc:postgresql://db/shop?password={pw}"}}',
            f"The app connects with jdbc:mariadb://db/shop?user=app&password={pw} today.",
        )[i]
        out.append(("secret-assignment", pw, text))
    return out


def matrix() -> list[tuple[str, str, str]]:
    """``(kind, secret, text)``: every token format in every placement, then the formats
    known by their context."""
    g = _Gen(SEED + 2)
    out = [(kind, tok, place(tok)) for kind, tok in token_formats(g) for place in PLACEMENTS.values()]
    return out + _contextual(g)


#: characters a generated password may hold: every one that used to end an unquoted value
PASSWORD_ALPHABET = _B62 + "!#%*+-_.~^&;,(){}[]<>\\@=:?/|$"

#: the three unquoted forms of issue 17: a .env line, YAML, a --password flag
PASSWORD_FORMS = {
    "env": lambda pw: f"NODE_ENV=production\nDB_PASSWORD={pw}\nDB_PORT=5432\n",
    "yaml": lambda pw: f"database:\n  host: db.internal\n  password: {pw}\n  port: 5432\n",
    "flag": lambda pw: f"$ pg-admin --user app --password {pw} --host db.internal",
}


def passwords(n: int = 200) -> list[tuple[str, str, str]]:
    """``(form, password, text)``: ``n`` random 16-character passwords per unquoted form."""
    g = _Gen(SEED + 3)
    out = []
    for form, make in PASSWORD_FORMS.items():
        for _ in range(n):
            pw = g.chars(PASSWORD_ALPHABET, 16)
            out.append((form, pw, make(pw)))
    return out


def false_positives() -> list[str]:
    """Random-looking ids that are not secrets and that users search for: they must come
    out of ``redact`` unchanged."""
    g = _Gen(SEED + 4)
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    out = []
    for _ in range(5):
        doc = "1" + g.chars(_B64URL, 43)
        cid0 = "Qm" + "".join(g.rng.choice(b58) for _ in range(44))
        cid1 = "bafybei" + "".join(g.rng.choice(_LOWER + "234567") for _ in range(52))
        out += [
            f"the spec is at https://docs.google.com/document/d/{doc}/edit?usp=sharing",
            f"https://docs.google.com/spreadsheets/d/{doc}/edit#gid=0",
            f"shared folder https://drive.google.com/drive/folders/{doc}",
            f"https://drive.google.com/open?id={doc}",
            f"ipfs://{cid0}",
            f"pinned {cid0} to the cluster",
            f"https://ipfs.io/ipfs/{cid0}/index.html",
            f"ipfs://{cid1}/metadata.json",
        ]
    out += [
        "token = get_token(session)",
        "requests.get(url, auth=(user, password), timeout=10)",
        "password: Optional[str] = None",
        "def check(token: dict[str, int]) -> bool:",
        'config = {"auth": {"user": name}}',
        "$ git push -u origin main",
        "$ docker run -u 1000:1000 -v $(pwd):/src image",
        "$ docker run --rm -u node:node -v $(pwd):/app node:20 npm test",
        "$ sudo -u postgres:postgres psql",
        "$ mysql -u root -p shop",
        "$ mysql -P 3306 -h db -u app -p",
        "$ sshpass -f ~/.sshpass ssh host",
        "Basic auth is configured in the proxy; see the Basic usage section.",
        "export DB_PASSWORD=$DB_PASSWORD_FROM_VAULT",
        "TOKEN=${TOKEN:-default}",
        "password=$(cat /run/secrets/db)",
        "if (password) { login(user, password); }",
    ]
    return out


def benign() -> list[str]:
    """Strings that ``redact`` must return unchanged (and as the same object)."""
    g = _Gen(SEED + 1)
    sha = g.hex(40)
    sha256 = g.hex(64)
    integrity = "sha512-" + base64.b64encode(g.rng.randbytes(64)).decode()
    ssh_pub = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + g.rng.randbytes(32)).decode()
    return [
        f"commit {sha}\nAuthor: Jane Doe <jane@example.com>\nDate:   Tue Jun 11 09:14:02 2024 +0200",
        f"git checkout {sha[:7]} && git cherry-pick {sha}",
        "Merge: 1a2b3c4 5d6e7f8",
        '{"sessionId": "5f0c3a4e-8d2b-4c6f-9a1e-2b3c4d5e6f70", "uuid": "0b9e7c1a-3f2d-4e5b-8a6c-7d8e9f0a1b2c"}',
        "/home/user/projects/recall/indexer/redact.py",
        "/Users/JaneDoe/Library/Application Support/Code/User/settings.json",
        r"C:\Users\Bob\AppData\Local\Temp\pytest-of-bob\pytest-12\test_index0",
        "tests/test_indexer.py::test_indexing_same_line_twice_never_duplicates PASSED [ 42%]",
        "class AbstractSingletonProxyFactoryBean2Impl extends HTTP2ServerConnectionManagerFactoryV3 {}",
        f"https://github.com/anthropics/claude-code/blob/{sha}/src/Components/UserProfile2.tsx#L10",
        "git@github.com:acme/payments-api.git",
        "ssh://git@github.com/acme/payments-api.git and https://github.com/acme/payments-api.git",
        "echo SGVsbG8= | base64 -d",
        "Python 3.11.7, numpy==1.26.4, tantivy 0.22.0, release v2.3.0-rc.1+build.5",
        "color: #ff00aa; background: rgba(0, 0, 0, 0.5); border: 1px solid #333;",
        f"FROM python:3.11-slim@sha256:{sha256}",
        "npm install --save-dev typescript@5.4.2 && npm ci && npm run build",
        f'"node_modules/left-pad": {{"version": "1.3.0", "integrity": "{integrity}"}}',
        "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=",
        f"$ cat ~/.ssh/id_ed25519.pub\nssh-ed25519 {ssh_pub} dev@laptop",
        "Please reset your password from the settings page; tokens expire after 24 hours.",
        "password=",
        "DB_PASSWORD=${DB_PASSWORD}",
        "token: <your-token>",
        "password: changeme",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "token = get_token(session)",
        "def login(username: str, password: str) -> Token:",
        "client.messages.create(model=MODEL, max_tokens=4096)",
        '{"usage": {"input_tokens": 1234, "output_tokens": 56}, "stop_reason": "end_turn"}',
        'curl -H "Authorization: Bearer $TOKEN" -H "X-Api-Key: ${API_KEY}" https://api.example.com',
        "The tokenizer splits on whitespace; bearer tokens are validated by the auth middleware.",
        "author: Jane Doe <jane@example.com>",
        '{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "message_id": "msg_01XFDUDYJgAACzvnptvVoYEL"}',
        'pytest -k "test_redact and not slow" -q',
        "2024-05-01T12:34:56.789Z INFO [worker-3] processed 1500 messages in 0.42s",
        "pod/api-7d4b9c8f6-x2k4j   1/1     Running   0          3h12m",
        "model: claude-sonnet-4-5-20250929",
        "at com.example.service.UserService.authenticate(UserService.java:42)",
        "SSH_AUTH_SOCK=/tmp/ssh-XXXXabc123/agent.1234\nPWD=/work/main\nOLDPWD=/work",
        'export PATH="$HOME/.local/bin:$PATH"',
        "Store it in AWS Secrets Manager, never in code.",
        '{"access_token_url": "https://oauth2.googleapis.com/token", "token_type": "Bearer"}',
        "https://example.com/api/v1/users?page=2&limit=50",
        "http://localhost:8080/health returned 200",
        "password = ''  # set via env",
        "Password: must be at least 12 characters long",
        "secret_name: prod/payments/db",
        "XAUTHORITY=/home/user/.Xauthority",
        "",
        "ok",
    ]


# ---------------------------------------------------------------------------
# issue 28: values under a secret-named key, whatever they look like
# ---------------------------------------------------------------------------
_WORDS = (
    "summer winter spring autumn dragon monkey shadow master sunshine princess football "
    "baseball welcome liverpool chelsea arsenal pepper ginger coffee banana orange purple "
    "silver golden tiger falcon rocket castle garden harbor meadow forest river ocean "
    "thunder blizzard marble velvet copper cobalt maple cedar willow breeze horizon"
).split()
_SYMBOLS = "!#%*+-_.~^@$&"


def _human(g: _Gen) -> str:
    """A password as people choose them: words, a year or a few digits, a symbol, leetspeak."""
    w1, w2 = g.rng.choice(_WORDS), g.rng.choice(_WORDS)
    year = str(g.rng.randint(1960, 2026))
    n = g.digits(g.rng.randint(1, 4))
    sym = g.rng.choice("!#$%&*@?")
    leet = w1.translate(str.maketrans("aeiost", "@3!05+"))
    shapes = (
        w1.capitalize() + year + w2.capitalize(),  # Summer2024Pass
        w1.capitalize() + n,  # Fluffy123
        w1.capitalize() + n + sym,  # Welcome1!
        w1 + w2,  # letmein-style, lower case only
        w1.capitalize() + w2.capitalize(),  # MyDogRex-style, no digit
        leet.capitalize(),  # P@55w0rd-style
        f"{w1}-{w2}-{g.digits(2)}",  # correct-horse-42
        w1 + n,  # dragon12
        w1.capitalize() + sym + year,  # Spring#2022
        w1.upper() + n,  # MONKEY77
    )
    return g.rng.choice(shapes)


def _random_value(g: _Gen) -> str:
    return g.chars(PASSWORD_ALPHABET, g.rng.randint(16, 24))


def _netrc(v: str) -> str:
    return f"$ cat ~/.netrc\nmachine api.heroku.com\n  login deploy@acme.io\n  password {v}\n"


def _k8s(v: str) -> str:
    user = base64.b64encode(b"app").decode()
    return (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\ntype: Opaque\n"
        f"data:\n  username: {user}\n  password: {base64.b64encode(v.encode()).decode()}\n"
    )


#: form -> (template of the value, the alphabet of its random values or None for the default,
#: how the stored secret is derived from the value)
KEY_VALUE_FORMS = {
    "yaml-password": lambda v: f"database:\n  host: db.internal\n  password: {v}\n  port: 5432\n",
    "yaml-api_key": lambda v: f"service:\n  endpoint: https://api.acme.io\n  api_key: {v}\n",
    "yaml-token": lambda v: f"auth:\n  user: deploy\n  token: {v}\n",
    "ini-password": lambda v: f"[database]\nhost = db.internal\npassword = {v}\nport = 5432\n",
    "toml-password": lambda v: f'[database]\nhost = "db.internal"\npassword = "{v}"\n',
    "tfvars-password": lambda v: f'region      = "eu-west-1"\ndb_password = "{v}"\n',
    "netrc": _netrc,
    "netrc-one-line": lambda v: f"machine github.com login octo password {v}\n",
    "k8s-secret-data": _k8s,
    "docker-login": lambda v: f"$ docker login -u deploy -p {v} registry.acme.io\nLogin Succeeded",
    "pgpass": lambda v: f"$ cat ~/.pgpass\ndb.internal:5432:shop:app:{v}\n",
    "wrapped-quoted": lambda v: f'export API_TOKEN="{v[: len(v) // 2]}\n{v[len(v) // 2 :]}"\n',
    "wrapped-yaml-block": lambda v: f"deploy:\n  password: >-\n    {v}\n  region: eu\n",
    "wrapped-backslash": lambda v: f"export API_TOKEN={v[: len(v) // 2]}\\\n{v[len(v) // 2 :]}\n",
    "wrapped-terminal": lambda v: (
        ("DEPLOYMENT_PIPELINE_SERVICE_ACCOUNT_TOKEN=" + v)[:60]
        + "\n"
        + ("DEPLOYMENT_PIPELINE_SERVICE_ACCOUNT_TOKEN=" + v)[60:]
        + "\n$ "
    ),
    "k8s-secret-json": lambda v: (
        '{"apiVersion": "v1", "kind": "Secret", "data": {"username": "YXBw", '
        f'"password": "{base64.b64encode(v.encode()).decode()}"}}}}'
    ),
    "redis-requirepass": lambda v: f"# redis.conf\nbind 127.0.0.1\nrequirepass {v}\nmaxmemory 2gb\n",
    "docker-password-stdin": lambda v: f"$ echo '{v}' | docker login -u deploy --password-stdin registry.acme.io",
    "hex-under-_KEY": lambda v: f"ENCRYPTION_KEY={v}\nLOG_LEVEL=info\n",
    "authorization-basic": lambda v: "Authorization: Basic " + base64.b64encode(f"admin:{v}".encode()).decode(),
    "curl-u": lambda v: f"$ curl -u admin:{v} https://registry.acme.io/v2/_catalog",
    "env-db-password": lambda v: f"DB_HOST=db.internal\nDB_PASSWORD={v}\nDB_PORT=5432\n",
    "env-db-pass": lambda v: f"DB_HOST=db.internal\nDB_PASS={v}\nSMTP_PW={v}\n",
    "jdbc": lambda v: f"jdbc:postgresql://db:5432/shop?user=app&password={v}&ssl=true",
    "mysql-p": lambda v: f"$ mysql -u root -p{v} shop",
    "sshpass": lambda v: f"$ sshpass -p {v} ssh root@10.0.0.5 uptime",
    "twilio-auth-token": lambda v: f"TWILIO_ACCOUNT_SID=AC{'0' * 32}\nTWILIO_AUTH_TOKEN={v}\n",
    "twilio-client-pair": lambda v: f'client = Client("AC{"1f" * 16}", "{v}")\nclient.messages.create(to=to, body=b)',
    # issue 35: the forms an audit found leaking, in the spellings people use
    "pgpass-in-a-sentence": lambda v: f"Add db.internal:5432:shop:app:{v} to your ~/.pgpass and retry.",
    "pw-is-prose": lambda v: f"FYI the deploy pw is {v} until Friday",
    "password-is-prose": lambda v: f"The staging password is {v} for now.",
    "secret-spaced-eq": lambda v: f"secret = {v}\n",
    "env-spaced-eq": lambda v: f"DB_PASSWORD = {v}\n",
    "env-db-pwd": lambda v: f"DB_HOST=db.internal\nDB_PWD={v}\n",
    "env-database-url": lambda v: f"DATABASE_URL=postgres://app:{v}@db:5432/shop\n",
    "jdbc-oracle-thin": lambda v: f"jdbc:oracle:thin:scott/{v}@db.internal:1521:ORCL",
    "sshpass-env": lambda v: f"$ SSHPASS={v} sshpass -e ssh deploy@10.0.0.5",
    "twilio-client-variable": lambda v: f"client = Client(account_sid, '{v}')\n",
    # issue 46: basic auth, curl -u, sshpass -p, YAML and secrets said in a sentence, as they leaked
    "basic-auth-wrapped": lambda v: "Authorization: Basic\n    " + base64.b64encode(f"admin:{v}".encode()).decode(),
    "basic-auth-concat": lambda v: (
        "headers = {'Authorization': 'Basic ' + '" + base64.b64encode(f"admin:{v}".encode()).decode() + "'}"
    ),
    "basic-auth-b64encode": lambda v: f'token = base64.b64encode(b"admin:{v}").decode()',
    "requests-auth-tuple": lambda v: f"r = requests.get(url, auth=('admin', '{v}'))",
    "http-basic-auth-call": lambda v: f"session.auth = HTTPBasicAuth('admin', '{v}')",
    "curl-su-cluster": lambda v: f"$ curl -su admin:{v} https://registry.acme.io/v2/_catalog",
    "curl-u-quoted-password": lambda v: f"$ curl -u admin:'{v}' https://registry.acme.io/v2/",
    "curl-continued-line": lambda v: f"curl -X POST \\\n  -u admin:{v} \\\n  https://ci.acme.io/job/build",
    "curl-proxy-U": lambda v: f"curl -U proxyuser:{v} -x http://proxy:3128 https://pypi.org/simple/",
    "curl-argv": lambda v: f"subprocess.run(['curl', '-fsS', '-u', 'admin:{v}', url], check=True)",
    "httpie-a": lambda v: f"$ http -a admin:{v} GET https://api.acme.io/v1/me",
    "sshpass-P-then-p": lambda v: f"$ sshpass -P assphrase -p {v} ssh deploy@10.0.0.5",
    "sshpass-argv": lambda v: f"subprocess.run(['sshpass', '-p', '{v}', 'ssh', 'root@10.0.0.5'])",
    "yaml-anchor": lambda v: f"database:\n  password: &db_pw {v}\n  replica_password: *db_pw\n",
    "yaml-str-tag": lambda v: f"database:\n  password: !!str {v}\n",
    "yaml-next-line": lambda v: f"database:\n  password:\n    {v}\n  port: 5432\n",
    "k8s-env-value": lambda v: f"env:\n  - name: DB_PASSWORD\n    value: {v}\n  - name: DB_HOST\n    value: db\n",
    "door-code-prose": lambda v: f"the door code is {v}, see you at 9",
    "alarm-code-colon": lambda v: f"alarm code: {v}",
    "pin-prose": lambda v: f"my PIN is {v} for the staging card",
    "pin-colon": lambda v: f"PIN: {v}",
    "combination-prose": lambda v: f"the safe combination is {v}",
    "token-said": lambda v: f"the token is {v} until the rotation",
    "named-token-colon": lambda v: f"sandbox token: {v} (for the staging API)",
    "api-key-said": lambda v: f"the api key is {v}",
    "secret-said": lambda v: f"the webhook secret was {v} before I rotated it",
}
#: what of the value ends up in the text (and must not survive)
_STORED = {
    "k8s-secret-data": lambda v: base64.b64encode(v.encode()).decode(),
    "authorization-basic": lambda v: base64.b64encode(f"admin:{v}".encode()).decode(),
    "wrapped-quoted": lambda v: v[: len(v) // 2] + "\n" + v[len(v) // 2 :],
    "wrapped-backslash": lambda v: v[: len(v) // 2] + "\\\n" + v[len(v) // 2 :],
    "wrapped-terminal": lambda v: (
        ("DEPLOYMENT_PIPELINE_SERVICE_ACCOUNT_TOKEN=" + v)[42:60]
        + "\n"
        + ("DEPLOYMENT_PIPELINE_SERVICE_ACCOUNT_TOKEN=" + v)[60:]
    ),
    "k8s-secret-json": lambda v: base64.b64encode(v.encode()).decode(),
    "basic-auth-wrapped": lambda v: base64.b64encode(f"admin:{v}".encode()).decode(),
    "basic-auth-concat": lambda v: base64.b64encode(f"admin:{v}".encode()).decode(),
}
#: forms whose values have a fixed shape
_SHAPED = {
    "twilio-client-variable": lambda g: g.hex(32),
    "hex-under-_KEY": lambda g: g.hex(40),
    "twilio-auth-token": lambda g: g.hex(32),
    "twilio-client-pair": lambda g: g.hex(32),
    "door-code-prose": lambda g: _code(g),
    "alarm-code-colon": lambda g: _code(g),
    "pin-prose": lambda g: g.digits(g.rng.choice((4, 6))),
    "pin-colon": lambda g: g.digits(g.rng.choice((4, 5, 6, 8))),
    "combination-prose": lambda g: "-".join(g.digits(2) for _ in range(3)),
    "token-said": lambda g: _token(g),
    "named-token-colon": lambda g: _token(g),
    "api-key-said": lambda g: _token(g),
    "secret-said": lambda g: _token(g),
}


def _code(g: _Gen) -> str:
    """A door or alarm code: digits, or letters and digits (``7r1ckyD00rC0de``)."""
    if g.rng.random() < 0.5:
        return g.digits(g.rng.choice((4, 5, 6)))
    leet = g.rng.choice(_WORDS).translate(str.maketrans("aeiost", "431057")) + g.digits(2)
    return leet if any(c.isdigit() for c in leet) else leet + "7"


def _token(g: _Gen) -> str:
    """A token as services hand them out: a short prefix and random letters and digits."""
    body = g.chars(_B62 if g.rng.random() < 0.5 else _HEX, g.rng.randint(12, 24))
    return g.rng.choice(("tok_", "sk_test_", "key-", "", "st.")) + body


#: characters a form's syntax does not allow in a value (a .netrc, .pgpass or URL query)
_FORBIDDEN = {
    "pgpass": ":\\",
    "pgpass-in-a-sentence": ":\\",
    "jdbc-oracle-thin": "@/",
    "env-database-url": "@/?",
    "jdbc": "&#;",
    "curl-u": ":",
    "netrc": "#",
    "netrc-one-line": "#",
    "ini-password": ";#",
    "toml-password": "\\",
    "tfvars-password": "\\$",
    "wrapped-quoted": "\\$",
    "wrapped-backslash": "\\",
    "wrapped-terminal": "\\",
    "docker-password-stdin": "'",
    "redis-requirepass": "\"",
    "curl-u-quoted-password": "'",
    "curl-argv": "'\\",
    "requests-auth-tuple": "'\\",
    "http-basic-auth-call": "'\\",
    "sshpass-argv": "'\\",
    "basic-auth-b64encode": '"\\',
    "curl-continued-line": "\\",
    "yaml-anchor": "#",
    "yaml-str-tag": "#",
    "yaml-next-line": "#",
    "k8s-env-value": "#",
    "httpie-a": ":",
}


def key_values(n: int = 40) -> list[tuple[str, str, str, str]]:
    """``(form, style, secret, text)``: ``n`` values per form, half random 16-24 characters
    (``style`` "random"), half as people choose passwords (``style`` "human"), each in the
    form's text; ``secret`` is what must not survive redaction."""
    g = _Gen(SEED + 28)
    out = []
    for form, make in KEY_VALUE_FORMS.items():
        for i in range(n):
            style = "random" if i % 2 == 0 else "human"
            if form in _SHAPED:
                v, style = _SHAPED[form](g), "shaped"
            else:
                bad = _FORBIDDEN.get(form, "")
                while True:
                    v = _random_value(g) if style == "random" else _human(g)
                    if not any(c in v for c in bad):
                        break
            secret = _STORED.get(form, lambda x: x)(v)
            out.append((form, style, secret, make(v)))
    return out


def leaked(secret: str, text: str, out: str) -> bool:
    """Whether a piece of ``secret`` (5 characters, or all of it if shorter) survives in
    ``out`` that the text around the secret does not explain (a name, the host)."""
    around = text.replace(secret, "\0")
    rest = re.sub(r"\[redacted:[a-z\-]+\]", "\0", out)
    if secret in rest:
        return True
    k = min(5, len(secret))
    return any(secret[i : i + k] in rest and secret[i : i + k] not in around for i in range(len(secret) - k + 1))


#: code, configuration, commands, logs and prose that name secrets without holding one
_ORDINARY = r"""
token = resp.json()["access_token"]
password = getpass.getpass("Password: ")
api_key = os.environ.get("OPENAI_API_KEY")
secret = os.getenv("APP_SECRET", "")
token = request.headers.get("Authorization", "").removeprefix("Bearer ")
self.token = token
self.password = None
password = password or DEFAULT_PASSWORD
token = tok
password = pw
secret = key
api_key = key
auth = auth
token = token.strip()
credentials = service_account.Credentials.from_service_account_file(path)
token = jwt.encode(payload, settings.SECRET_KEY, algorithm="HS256")
hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt())
if not token: raise AuthError("missing token")
return {"token": token, "expires_in": 3600}
const token = localStorage.getItem('token');
const { token, user } = await login(email, password);
headers.Authorization = `Bearer ${token}`;
const apiKey = process.env.STRIPE_SECRET_KEY;
res.cookie('token', token, { httpOnly: true, secure: true });
password: hashedPassword,
token: newToken,
apiKey: config.apiKey,
  secret: process.env.SESSION_SECRET,
token := os.Getenv("GITHUB_TOKEN")
Password: cfg.Password,
let token = env::var("TOKEN").expect("TOKEN must be set");
String password = System.getenv("DB_PASSWORD");
token = ENV.fetch("API_TOKEN")
password = params[:password]
export GITHUB_TOKEN=$(gh auth token)
read -s -p "Password: " PASSWORD
PGPASSWORD="$DB_PASSWORD" psql -h db -U app shop
password: str
token: Optional[str] = None
api_key: SecretStr
credentials: Credentials
auth: AuthBase | None = None
token: Token
access_token: AccessToken
password?: string;
token: string | null;
apiKey: string;
client_secret: str = Field(..., env="CLIENT_SECRET")
password: ${DB_PASSWORD}
password: "{{ db_password }}"
token: ${{ secrets.NPM_TOKEN }}
api_key: !vault |
password_file: /run/secrets/db_password
auth: basic
auth_type: oauth2
token_endpoint: https://oauth2.googleapis.com/token
token_type: bearer
tokens: 1532
max_tokens: 4096
auth: true
token_ttl: 3600
password_min_length: 12
secret_name: prod/payments/db
secretName: db-credentials
secretKeyRef:
key: password
passwordSecretRef: db-auth
auth_mechanism = SCRAM-SHA-256
password_encryption = scram-sha-256
token_expiry = 3600
; password = see vault
# password = your password here
require_password = true
  -p, --password TEXT   Password to use for the connection
  --token TOKEN         API token (or set GITHUB_TOKEN)
  --api-key KEY         Your API key
Use --password-stdin to read the password from stdin.
$ docker login -u deploy --password-stdin registry.acme.io < token.txt
$ docker login registry.acme.io
Login Succeeded
$ mysql -u root -p
Enter password:
$ psql "host=db user=app dbname=shop sslmode=require"
$ gh auth login --with-token < mytoken.txt
$ vault kv get -field=password secret/db
$ kubectl create secret generic db --from-file=password=./password.txt
$ aws secretsmanager get-secret-value --secret-id prod/db --query SecretString
The password must be at least 12 characters long.
Rotate the token every 90 days.
I reset the API key in the dashboard and updated the secret in Vault.
The token expired, so the request failed with 401.
Password: (hidden)
Token: see 1Password
Passwords are hashed with argon2id before they are stored.
We store the refresh token in an httpOnly cookie.
The secret is mounted at /var/run/secrets/kubernetes.io/serviceaccount/token.
INFO auth: user bob logged in from 10.0.0.7
WARN token expired for user 42
DEBUG password check took 212ms
ERROR invalid api key (401) for project acme
tokens: 1532 in, 210 out
Usage: 12,345 input tokens, 678 output tokens
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: search,export
kind: Secret
  name: db-credentials
        valueFrom:
          secretKeyRef:
            name: db-credentials
            key: password
      env:
        - name: DB_PASSWORD
          valueFrom:
localhost:5432
db.internal:5432/shop
2024-06-11 09:14:02 INFO started
12:30:45
root:x:0:0:root:/root:/bin/bash
fe80::1ff:fe23:4567:890a
machine learning models need data
Log in with your username and password.
default: true
login: deploy
PRIMARY_KEY=id
SORT_KEY=created_at
CACHE_KEY=user:42
PARTITION_KEY=tenant_id
S3_KEY=uploads/2024/06/report.pdf
SSH_KEY=~/.ssh/id_ed25519
GPG_KEY=0xABCDEF12
KEY_ID=kms-prod-1
REDIS_KEY_PREFIX=app:
OBJECT_KEY=images/logo.png
FOREIGN_KEY=user_id
the return code is 2 when the lint fails
the HTTP status code is 503 while the pod restarts
the error code is EACCES: the socket is root's
the door code is on the wiki page for the office
the alarm code is changed every month by facilities
the PIN is four digits and never leaves the phone
my PIN is the same as my old one, so I reset it
PIN: ask the on-call engineer
the combination is stored in the team vault
the token is refreshed by the client library
the token is an opaque string, treat it as such
the token is RS256-signed and expires in an hour
the api key is missing from the CI variables
the secret is rotated by the operator every 30 days
the webhook secret was leaked once, so we rotate it now
sandbox token: ask in #payments for a fresh one
the token: see the README section on auth
curl -su "$USER:$PASS" https://registry.acme.io/v2/
curl -u admin https://registry.acme.io/v2/  # prompts for the password
curl -U "$PROXY_USER:$PROXY_PASS" -x http://proxy:3128 https://pypi.org
http -a "$USER:$PASSWORD" GET https://api.acme.io/v1/me
sshpass -P assphrase -f ~/.ssh/pass.txt ssh deploy@10.0.0.5
subprocess.run(['sshpass', '-f', pwfile, 'ssh', host])
subprocess.run(['curl', '-u', f'{user}:{password}', url])
r = requests.get(url, auth=(user, password))
session.auth = HTTPBasicAuth(username, password)
token = base64.b64encode(f"{user}:{password}".encode()).decode()
Authorization: Basic realm="Restricted"
the header is Authorization: Basic followed by base64 of user:password
password: &default_pw
password: !!null
password:
  from_env: DB_PASSWORD
- name: DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: db
      key: password
- name: WORKERS
  value: "4"
pin: 2
led_pin: 13
combination of --force and --dry-run is refused
the key is the first column of the table
the api key header is X-Api-Key
our PIN policy is 6 digits minimum
the code is 1200 lines and needs a split
description: >-
  A small service that serves the
  public catalogue.
summary: |
  Rotated the credentials and
  redeployed the worker.
"""


def ordinary() -> list[str]:
    """Ordinary strings of a transcript that must come out of ``redact`` unchanged: the
    corpora above (``benign``, ``false_positives``), the judgment calls, and code,
    configuration, commands, logs and prose that name secrets without holding one. Counted
    against the redaction rules before and after a change (``benchmarks/redaction.py``)."""
    g = _Gen(SEED + 29)
    out = list(benign()) + list(false_positives())
    out += [line for line in _ORDINARY.strip("\n").split("\n") if line.strip()]
    # the same names in the shapes code assigns and passes them
    names = (
        "password",
        "token",
        "api_key",
        "secret",
        "auth_token",
        "access_token",
        "client_secret",
        "db_password",
        "apiKey",
        "authToken",
        "refresh_token",
        "private_key",
        "secret_key",
    )
    shapes = (
        "{n} = os.environ[\"{N}\"]",
        "{n} = settings.{N}",
        "{n} = config.get(\"{n}\")",
        "{n} = kwargs.pop(\"{n}\", None)",
        "{n} = args.{n}",
        "if {n} is None:",
        "def rotate({n}: str) -> None:",
        "{n}=None,",
        "client = Client({n}={n})",
        "log.debug(\"got %s\", mask({n}))",
        "assert {n}, \"{n} is required\"",
        "{N}: ${{{{ secrets.{N} }}}}",
        "{N}=${{{N}:?set {N}}}",
        "{n}: \"${{{N}}}\"",
        "export {N}=\"$(pass show acme/{n})\"",
        "    {n} = self._{n}",
        "{n} = new_{n}",
        "{n}: <{n}>",
        "{n} = \"\"",
        "{{\"{n}\": null}}",
        "{n}: process.env.{N},",
        "echo \"{N} is set: ${{{N}:+yes}}\"",
        "unset {N}",
    )
    for n in names:
        N = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", n).upper()
        for shape in shapes:
            out.append(shape.format(n=n, N=N))
    # log lines and ids people search for
    for _ in range(40):
        sha = g.hex(40)
        out.append(
            g.rng.choice(
                (
                    f"commit {sha}",
                    f"Merge pull request #{g.rng.randint(1, 9999)} from acme/fix-{g.rng.choice(_WORDS)}",
                    f"{g.rng.randint(0, 23):02d}:{g.rng.randint(0, 59):02d}:{g.rng.randint(0, 59):02d} INFO "
                    f"request_id={g.hex(8)}-{g.hex(4)} status=200 duration_ms={g.rng.randint(1, 900)}",
                    f"docker pull ghcr.io/acme/api@sha256:{g.hex(64)}",
                    f"session {g.hex(8)}-{g.hex(4)}-{g.hex(4)}-{g.hex(4)}-{g.hex(12)} resumed",
                )
            )
        )
    return out
