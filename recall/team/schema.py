"""The team database: recall's tables, trigger and row-level security policies in PostgreSQL.

Everything lives in one schema, ``recall_team``, created by ``recall team init URL`` (the
database owner's connection); running it again changes nothing (every statement is
``IF NOT EXISTS`` or ``CREATE OR REPLACE``, and the version row says what is there).

``items``     one row per shared item (a typed memory, a session summary, a rule), keyed by a
              stable id the sharing machine derives; a withdrawn item stays as a tombstone
              (``deleted``, its text emptied) so every member's copy goes too.
``grants``    which role (or group role) may read and write which project (a normalized git
              remote, ``github.com/acme/shop``); ``recall team grant`` / ``revoke`` edit it.
``item_seq``  the sequence that numbers every insert or change (``seq``). The trigger takes
              it under a transaction-scoped advisory lock of the item's project, so the
              changes of one project commit in ``seq`` order and a member's cursor (per
              project, the last ``seq`` it pulled) never skips one; no row is updated for
              it (a counter row updated per item made a long push quadratic).

Row-level security: a role reads the items of the projects granted to it (directly or
through a group role it belongs to), inserts only as itself into those projects, and
changes only its own items there. No role but the owner may delete a row.
The trigger stamps ``author`` (the connected role), ``seq``, ``pushed_at`` and the
``tsv`` full-text vector, and empties a tombstone.

``recall team search`` goes through ``recall_team.search(words, any_word, n)``: under a
policy PostgreSQL cannot use the GIN index for ``@@`` (the operator is not leakproof, so
the policy's filter must run first: a sequential scan, ~0.5 s at 1M items), so this
SECURITY DEFINER function applies the same grants itself (the projects granted to the
session's role or a role it belongs to) and lets the index find the matches. It ranks the
500 newest matches (``ts_rank_cd`` reads each match's row: a word in a third of 1M items
would cost seconds to rank whole, and the 2,000 newest of schema version 2 cost ~0.2 s of
row reads at p95), looked for among the newest ``seq`` values only (a window sized from the
planner's estimate of the matches, widened until it holds them): the GIN index's matches
ANDed with the ``seq`` index's range, or a walk down ``seq`` for a common word. A statement
that changed items sends ``NOTIFY recall_team`` with an empty payload (a payload would
tell every role of the database which projects changed).
"""

from __future__ import annotations

SCHEMA = "recall_team"
CHANNEL = "recall_team"
VERSION = 3  # 2: dates must be finite (items_dates_finite); next_seq only for a granted project;
#              an origin is its first role's (origin_of_another)
#              3: search() ranks the 500 newest matches, found in a window of seq; origin_of_another
#              probes the (origin, author) index (items_origin_author) instead of walking the table

# One statement per entry: run in order in one transaction by ``recall team init``.
INIT: tuple[str, ...] = (
    "CREATE SCHEMA IF NOT EXISTS recall_team",
    """CREATE TABLE IF NOT EXISTS recall_team.meta (
        key text PRIMARY KEY,
        value text NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS recall_team.grants (
        role name NOT NULL,
        project text NOT NULL,
        granted_at timestamptz NOT NULL DEFAULT now(),
        granted_by name NOT NULL DEFAULT current_user,
        PRIMARY KEY (role, project))""",
    "CREATE SEQUENCE IF NOT EXISTS recall_team.item_seq",
    """CREATE TABLE IF NOT EXISTS recall_team.items (
        id text PRIMARY KEY CHECK (length(id) BETWEEN 8 AND 80),
        project text NOT NULL CHECK (length(project) BETWEEN 1 AND 400),
        author name NOT NULL DEFAULT current_user,
        origin text NOT NULL CHECK (length(origin) BETWEEN 1 AND 64),
        kind text NOT NULL CHECK (kind IN ('memory', 'summary', 'rule')),
        mtype text NOT NULL DEFAULT '',
        content text NOT NULL DEFAULT '' CHECK (length(content) <= 20000),
        tags text[] NOT NULL DEFAULT '{}',
        created timestamptz NOT NULL,
        updated timestamptz NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        digest text NOT NULL,
        seq bigint NOT NULL DEFAULT 0,
        pushed_at timestamptz NOT NULL DEFAULT now(),
        tsv tsvector)""",
    "CREATE INDEX IF NOT EXISTS items_project_seq ON recall_team.items (project, seq)",
    "CREATE INDEX IF NOT EXISTS items_tsv ON recall_team.items USING gin (tsv)",
    "CREATE INDEX IF NOT EXISTS items_origin ON recall_team.items (origin, pushed_at)",
    "CREATE INDEX IF NOT EXISTS items_seq ON recall_team.items (seq)",
    "CREATE INDEX IF NOT EXISTS items_origin_author ON recall_team.items (origin, author)",
    # the numbering: SECURITY DEFINER, so members need no right on the sequence itself;
    # 7411 keeps these advisory locks apart from any other application's. Only a role granted
    # the project (or the tables' owner) takes its lock: another project's member cannot hold
    # a push back by calling it in an open transaction.
    """CREATE OR REPLACE FUNCTION recall_team.next_seq(proj text) RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF NOT pg_catalog.pg_has_role(session_user, (SELECT c.relowner FROM pg_catalog.pg_class c
                                                           WHERE c.oid = 'recall_team.items'::regclass), 'MEMBER')
               AND NOT EXISTS (SELECT 1 FROM recall_team.grants g JOIN pg_catalog.pg_roles r ON r.rolname = g.role
                               WHERE g.project = proj AND pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER'))
            THEN
                RAISE EXCEPTION 'permission denied for project %', proj USING ERRCODE = 'insufficient_privilege';
            END IF;
            PERFORM pg_advisory_xact_lock(7411, hashtext(proj));
            RETURN nextval('recall_team.item_seq');
        END $$""",
    "REVOKE ALL ON FUNCTION recall_team.next_seq(text) FROM PUBLIC",
    # a machine's origin belongs to the role that first wrote with it: a teammate cannot write
    # rows under another member's origin (that member would never see them, and would try to
    # withdraw them on every connect)
    # Two range probes of the (origin, author) index: the first author below the role's and the
    # first above it. An EXISTS here (what version 2 had) is planned once for every call (an SQL
    # function's plan is generic) as a scan expected to stop at once, and walked the whole table
    # whenever no other role wrote with the origin (every insert cost O(items): a bulk load of 1M
    # items timed out); ordered and limited, the index's order is the only cheap plan. The
    # argument is compared in the column's collation: the call's collation is the role name's
    # ("C"), under which the index could not be used.
    """CREATE OR REPLACE FUNCTION recall_team.origin_of_another(o text, who name) RETURNS boolean
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            SELECT (SELECT i.author FROM recall_team.items i
                    WHERE i.origin = o COLLATE "default" AND i.author < who
                    ORDER BY i.origin, i.author LIMIT 1) IS NOT NULL
                OR (SELECT i.author FROM recall_team.items i
                    WHERE i.origin = o COLLATE "default" AND i.author > who
                    ORDER BY i.origin, i.author LIMIT 1) IS NOT NULL $$""",
    "REVOKE ALL ON FUNCTION recall_team.origin_of_another(text, name) FROM PUBLIC",
    """DO $$ DECLARE r record; BEGIN
        FOR r IN SELECT DISTINCT g.role FROM recall_team.grants g JOIN pg_catalog.pg_roles p ON p.rolname = g.role
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION recall_team.origin_of_another(text, name) TO %I', r.role);
        END LOOP;
    END $$""",
    """CREATE OR REPLACE FUNCTION recall_team.stamp() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                NEW.author := current_user;
                IF recall_team.origin_of_another(NEW.origin, NEW.author) THEN
                    RAISE EXCEPTION 'origin % is another role''s machine', NEW.origin
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
            ELSE  -- who wrote it, where and from which machine never changes
                NEW.id := OLD.id; NEW.author := OLD.author; NEW.project := OLD.project;
                NEW.origin := OLD.origin;
            END IF;
            IF NEW.deleted THEN
                NEW.content := ''; NEW.tags := '{}'; NEW.mtype := '';
            END IF;
            NEW.seq := recall_team.next_seq(NEW.project);
            NEW.pushed_at := now();
            NEW.tsv := to_tsvector('english'::regconfig,
                                   NEW.content || ' ' || array_to_string(NEW.tags, ' '));
            RETURN NEW;
        END $$""",
    "DROP TRIGGER IF EXISTS items_stamp ON recall_team.items",
    """CREATE TRIGGER items_stamp BEFORE INSERT OR UPDATE ON recall_team.items
        FOR EACH ROW EXECUTE FUNCTION recall_team.stamp()""",
    """CREATE OR REPLACE FUNCTION recall_team.notify() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN PERFORM pg_notify('recall_team', ''); RETURN NULL; END $$""",
    "DROP TRIGGER IF EXISTS items_notify ON recall_team.items",
    """CREATE TRIGGER items_notify AFTER INSERT OR UPDATE ON recall_team.items
        FOR EACH STATEMENT EXECUTE FUNCTION recall_team.notify()""",
    # version 2: a date that is no date ('infinity') stopped every member's sync. Rows a
    # teammate wrote so get their push time (the trigger renumbers them: members pull them
    # again, usable now), then the table refuses such dates.
    """UPDATE recall_team.items
        SET created = CASE WHEN isfinite(created) THEN created ELSE pushed_at END,
            updated = CASE WHEN isfinite(updated) THEN updated ELSE pushed_at END
        WHERE NOT isfinite(created) OR NOT isfinite(updated)""",
    """DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint
                       WHERE conname = 'items_dates_finite' AND conrelid = 'recall_team.items'::regclass) THEN
            ALTER TABLE recall_team.items ADD CONSTRAINT items_dates_finite
                CHECK (isfinite(created) AND isfinite(updated));
        END IF;
    END $$""",
    # row-level security
    "ALTER TABLE recall_team.grants ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE recall_team.items ENABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS grants_mine ON recall_team.grants",
    # the roles this one is (or is a member of); pg_roles first, so a dropped role's grant
    # row is simply never matched
    """CREATE POLICY grants_mine ON recall_team.grants FOR SELECT USING (
        EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                WHERE r.rolname = grants.role AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')))""",
    "DROP POLICY IF EXISTS items_read ON recall_team.items",
    """CREATE POLICY items_read ON recall_team.items FOR SELECT USING (
        project IN (SELECT g.project FROM recall_team.grants g))""",
    "DROP POLICY IF EXISTS items_add ON recall_team.items",
    """CREATE POLICY items_add ON recall_team.items FOR INSERT WITH CHECK (
        author = current_user AND project IN (SELECT g.project FROM recall_team.grants g))""",
    "DROP POLICY IF EXISTS items_change ON recall_team.items",
    """CREATE POLICY items_change ON recall_team.items FOR UPDATE
        USING (author = current_user AND project IN (SELECT g.project FROM recall_team.grants g))
        WITH CHECK (author = current_user AND project IN (SELECT g.project FROM recall_team.grants g))""",
    # The newest POOL matches, found in a window of the newest ``seq`` values sized from the
    # planner's estimate of the text's matches (EXPLAIN) times the granted projects' share of the
    # items, widened (by what it found) until it holds POOL of them or is the whole table; then
    # those rows alone are ranked (by ctid, with every condition checked again: VOLATILE, as
    # EXPLAIN requires, each statement has its own snapshot, and a row changed in between is
    # simply left out). In the window PostgreSQL ANDs the GIN index's matches with the seq
    # index's range, or walks seq backwards for a common word: it reads about POOL rows,
    # where a walk from the top read POOL / (the words' frequency) rows and the GIN index alone
    # read every match (a word in 1% of 1M items: 10,000 rows, ~0.2 s). The tsquery is a literal
    # in each query, so the column's statistics plan it.
    """CREATE OR REPLACE FUNCTION recall_team.search(words text, any_word boolean, n integer)
        RETURNS TABLE (id text, project text, author name, kind text, mtype text, content text,
                       updated timestamptz, rank real)
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            pool CONSTANT integer := 500;
            q tsquery;
            mine text[];
            top bigint;
            est float8;
            span float8;
            lo bigint;
            plan json;
            vals text[];
            freqs real[];
            share float8;
            tids tid[];
        BEGIN
            IF any_word THEN
                q := to_tsquery('english', replace(plainto_tsquery('english', words)::text, ' & ', ' | '));
            ELSE
                q := websearch_to_tsquery('english', words);
            END IF;
            IF q IS NULL OR numnode(q) = 0 THEN
                RETURN;
            END IF;
            SELECT coalesce(array_agg(DISTINCT g.project), '{}') INTO mine
            FROM recall_team.grants g JOIN pg_catalog.pg_roles r ON r.rolname = g.role
            WHERE pg_catalog.pg_has_role(session_user, r.oid, 'MEMBER');
            SELECT max(i.seq) INTO top FROM recall_team.items i;
            IF top IS NULL OR cardinality(mine) = 0 THEN
                RETURN;
            END IF;
            EXECUTE format($q$EXPLAIN (FORMAT JSON) SELECT 1 FROM recall_team.items i
                WHERE i.tsv @@ %1$L::tsquery $q$, q::text) INTO plan;
            -- times the share of the items in the granted projects, from the column's most common
            -- values (the planner's own estimate of project = ANY(...) multiplies the misses as if
            -- one row could be in several projects: 19 projects of 5% each came out at 64%, and the
            -- window read 1.6 times the rows it needed)
            SELECT s.most_common_vals::text::text[], s.most_common_freqs INTO vals, freqs
            FROM pg_catalog.pg_stats s
            WHERE s.schemaname = 'recall_team' AND s.tablename = 'items' AND s.attname = 'project';
            IF vals IS NULL THEN
                share := 1;
            ELSE
                SELECT coalesce(sum(m.f), 0) INTO share FROM unnest(vals, freqs) AS m(v, f) WHERE m.v = ANY(mine);
                IF EXISTS (SELECT 1 FROM unnest(mine) AS g(p) WHERE g.p <> ALL(vals)) THEN
                    share := share + greatest(0, 1 - (SELECT sum(f) FROM unnest(freqs) AS x(f)));  -- the rest, at most
                END IF;
            END IF;
            est := greatest(coalesce((plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8, 1) * least(share, 1), 1);
            span := 1.25 * pool * top / est;  -- the seq values expected to hold POOL matches and a margin
            LOOP
                lo := CASE WHEN span >= top THEN -1 ELSE top - span::bigint END;
                EXECUTE format($q$SELECT array_agg(c.ctid) FROM (
                        SELECT i.ctid FROM recall_team.items i
                        WHERE i.tsv @@ %1$L::tsquery AND NOT i.deleted AND i.project = ANY($1) AND i.seq > $2
                        ORDER BY i.seq DESC
                        LIMIT %2$s) c $q$, q::text, pool) INTO tids USING mine, lo;
                EXIT WHEN lo < 0 OR coalesce(cardinality(tids), 0) >= pool;
                -- fewer than estimated: as many more seq values as they say are needed, 2-8 times
                span := span * least(8.0, greatest(2.0, 1.5 * pool / greatest(coalesce(cardinality(tids), 0), 1)));
            END LOOP;
            RETURN QUERY
                SELECT i.id, i.project, i.author, i.kind, i.mtype, i.content, i.updated, ts_rank_cd(i.tsv, q)
                FROM recall_team.items i
                WHERE i.ctid = ANY(tids) AND i.tsv @@ q AND NOT i.deleted AND i.project = ANY(mine)
                ORDER BY 8 DESC, i.seq DESC
                LIMIT least(greatest(n, 1), 1000);
        END $$""",
    "REVOKE ALL ON FUNCTION recall_team.search(text, boolean, integer) FROM PUBLIC",
    "REVOKE ALL ON ALL TABLES IN SCHEMA recall_team FROM PUBLIC",
    f"""INSERT INTO recall_team.meta (key, value) VALUES ('version', '{VERSION}')
        ON CONFLICT (key) DO NOTHING""",
)

# What ``recall team grant`` gives a role besides its grant row (idempotent).
ROLE_PRIVILEGES: tuple[str, ...] = (
    "GRANT USAGE ON SCHEMA recall_team TO {role}",
    "GRANT SELECT, INSERT, UPDATE ON recall_team.items TO {role}",
    "GRANT SELECT ON recall_team.grants TO {role}",
    "GRANT SELECT ON recall_team.meta TO {role}",
    "GRANT EXECUTE ON FUNCTION recall_team.next_seq(text) TO {role}",
    "GRANT EXECUTE ON FUNCTION recall_team.origin_of_another(text, name) TO {role}",
    "GRANT EXECUTE ON FUNCTION recall_team.search(text, boolean, integer) TO {role}",
)

# What ``recall team revoke`` takes back once a role has no grant left.
ROLE_REVOKE: tuple[str, ...] = (
    "REVOKE ALL ON recall_team.items FROM {role}",
    "REVOKE ALL ON recall_team.grants FROM {role}",
    "REVOKE ALL ON recall_team.meta FROM {role}",
    "REVOKE ALL ON FUNCTION recall_team.next_seq(text) FROM {role}",
    "REVOKE ALL ON FUNCTION recall_team.origin_of_another(text, name) FROM {role}",
    "REVOKE ALL ON FUNCTION recall_team.search(text, boolean, integer) FROM {role}",
    "REVOKE ALL ON SCHEMA recall_team FROM {role}",
)
