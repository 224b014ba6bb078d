"""Team memory on PostgreSQL (docs/team.md): what one developer's recall learned reaches the
whole team, through the database the team already runs.

``identity`` (a project's normalized git remote), ``local`` (this machine's join, shares
and sync state), ``items`` (what a shared project gives: the distilled layer, redacted
again), ``schema`` (the server's tables, trigger and policies), ``conn`` (psycopg, the
only importer of it), ``sync`` (push, pull, index), ``index_docs`` (team items in the local
index), ``runner`` (the service's loop), ``search`` (``recall team search``), ``forget``
(``recall forget``'s team step), ``admin`` and ``member`` (what the ``recall team``
commands do). Nothing here is on the prompt hook's path.
"""
