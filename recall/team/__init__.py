"""Team memory on PostgreSQL (docs/team.md): what one developer's recall learned reaches the
whole team, through the database the team already runs. Nothing here is on the prompt hook's
path: the hook reads the team's items from the local index.

  ``identity``    a project's normalized git remote
  ``local``       this machine's join, shares and sync state (``team.db``)
  ``items``       what a shared project gives: the distilled layer, redacted again, minus what
                  the user keeps out
  ``schema``      the server's tables, trigger and policies
  ``conn``        psycopg, the only importer of it
  ``sync``        push, pull, index
  ``index_docs``  team items written into the local index (their documents:
                  ``indexer.documents.team_document``)
  ``runner``      the service's sync loop
  ``search``      ``recall team search``
  ``forget``      ``recall forget``'s team step
  ``admin``       what the owner's ``recall team`` commands do (``init``, ``grant``, ``revoke``)
  ``member``      what a member's do (``join``, ``share``, ``unshare``, ``leave``, ``status``,
                  ``search``)
"""
