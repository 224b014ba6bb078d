"""Connecting to the team's PostgreSQL, and saying what went wrong in one line.

The only module that imports psycopg (3, ``psycopg[binary]``); the team commands and the
service's sync thread import it, the prompt hook never does (a test checks).

The connection string is the libpq one (``postgresql://alice@db.example.com/recall``, or
``host=... dbname=...``). Its password never comes from it: libpq reads ``~/.pgpass`` (or
``PGPASSFILE``) or ``PGPASSWORD``, as every libpq user expects, and a URL holding a password
is refused by ``recall team join`` (it would be stored). Nothing here logs or prints the
string itself: output and logs name the server as ``role@host:port/database``
(``server_label``), and a driver message that quotes the string is scrubbed (``scrub``).
"""

from __future__ import annotations

import re

from recall.core.errors import RecallError, UsageError

CONNECT_TIMEOUT = 10
STATEMENT_TIMEOUT_MS = 60_000
APPLICATION = "recall"


class TeamError(RecallError):
    """The team server cannot do what was asked (unreachable, refused, not set up)."""


class NotGranted(TeamError):
    pass


def parse(url: str, *, allow_password: bool = True) -> dict:
    """The connection string's parameters; UsageError for one libpq cannot read (the message
    never repeats the string: it may hold a password)."""
    from psycopg.conninfo import conninfo_to_dict

    text = (url or "").strip()
    if not text:
        raise UsageError(
            "The URL is empty: pass your team database's connection string, e.g. postgresql://ROLE@HOST:5432/DATABASE."
        )
    try:
        info = conninfo_to_dict(text)
    except Exception:  # noqa: BLE001 - psycopg quotes the string in its message
        raise UsageError(
            "That URL is not a PostgreSQL connection string: use postgresql://ROLE@HOST:PORT/DATABASE "
            "(or libpq's host=... dbname=... user=... form)."
        ) from None
    if not allow_password and info.get("password"):
        raise UsageError(
            "The URL holds a password, and recall stores the URL: leave the password out "
            "(postgresql://ROLE@HOST/DATABASE) and put it in ~/.pgpass "
            "(HOST:PORT:DATABASE:ROLE:PASSWORD, chmod 600) or PGPASSWORD, as libpq reads them."
        )
    return {k: str(v) for k, v in info.items() if v is not None}


def server_label(info: dict, role: str | None = None) -> str:
    """``alice@db.example.com:5432/recall``: what output and logs call the server."""
    host = info.get("host") or info.get("hostaddr") or "localhost"
    if host.startswith("/"):
        host = f"[socket {host}]"
    port = info.get("port")
    user = role or info.get("user") or ""
    db = info.get("dbname") or user or "postgres"
    return f"{user + '@' if user else ''}{host}{':' + port if port else ''}/{db}"


def scrub(text: str, url: str = "", info: dict | None = None) -> str:
    """A message safe to log or print: the connection string and any password cut out."""
    text = str(text)
    if url:
        text = text.replace(url.strip(), "[connection string]")
    password = (info or {}).get("password")
    if password:
        text = text.replace(password, "[password]")
    text = re.sub(r"(password\s*=\s*)\S+", r"\1[password]", text, flags=re.I)
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]+@", r"\1[password]@", text, flags=re.I)
    return " ".join(text.split())


def connect(url: str, *, timeout: float = CONNECT_TIMEOUT, server: str = ""):
    """An autocommit connection (explicit transactions with ``conn.transaction()``), or a
    TeamError naming the cause and the next step."""
    import psycopg

    info = parse(url)
    server = server or server_label(info)
    try:
        conn = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=max(1, int(timeout)),
            application_name=APPLICATION,
            keepalives=1,
            keepalives_idle=15,
            keepalives_interval=5,
            keepalives_count=3,
        )
    except psycopg.Error as exc:
        raise explain(exc, server, url, info) from None
    try:
        conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
    except psycopg.Error as exc:
        conn.close()
        raise explain(exc, server, url, info) from None
    return conn


#: what an unreachable server means for a machine that has joined (a failed join has nothing to resume)
UNREACHABLE_TAIL = "Everything local keeps working; sync resumes by itself when it is back."


def explain(exc: BaseException, server: str, url: str = "", info: dict | None = None) -> TeamError:
    """The one-line TeamError for a driver error."""
    import psycopg
    from psycopg import errors as e

    raw = scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url, info)
    low = str(exc).lower()
    if "permission denied for schema recall_team" in low:
        return NotGranted(
            f"No team project is granted to this role on {server}: ask the owner to run "
            "`recall team grant ROLE PROJECT`."
        )
    if isinstance(exc, e.InsufficientPrivilege) or "permission denied" in low:
        return NotGranted(
            f"The team server {server} refused: {raw}. The owner grants projects with `recall team grant ROLE PROJECT`."
        )
    if (
        isinstance(exc, e.UndefinedTable)
        or isinstance(exc, e.InvalidSchemaName)
        or "recall_team" in low
        and "does not exist" in low
    ):
        return TeamError(
            f"The database {server} has no recall tables yet: its owner runs `recall team init URL` "
            "once (see docs/team.md)."
        )
    if "password authentication failed" in low or "no password supplied" in low:
        return TeamError(
            f"The team server {server} needs this role's password: put it in ~/.pgpass "
            "(HOST:PORT:DATABASE:ROLE:PASSWORD, chmod 600) or PGPASSWORD, and try again."
        )
    if "database" in low and "does not exist" in low:
        return TeamError(
            f"The team server has no such database ({raw}): check the URL's database name, or create it (docs/team.md)."
        )
    if "role" in low and "does not exist" in low:
        return TeamError(
            f"The team server has no such role ({raw}): ask its owner to create yours "
            "(docs/team.md), or fix the URL's role."
        )
    if isinstance(exc, psycopg.OperationalError) or isinstance(exc, (OSError, TimeoutError)):
        return TeamError(f"Cannot reach the team server {server} ({raw}). {UNREACHABLE_TAIL}")
    return TeamError(f"The team server {server} failed: {raw}.")


def reachable_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection itself is gone (reconnect and retry later)."""
    import psycopg

    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError, OSError, TimeoutError))
