"""The ingest side: transcripts read, redacted, archived and written into the Tantivy index.

``message``          the ``Message`` every source gives (one archived record, one index document)
``sources/``         each agent's sessions, one module each (its folders, its files, its format:
                     Claude Code's too), and the registry of which are on (``indexer.sources``)
``transcripts``      what every source's reader shares: complete lines capped, regular files
                     only, text cleaned and cut, ``<private>`` carried, the skip reasons
``redact``           secrets -> ``[redacted:<kind>]``, ``<private>`` dropped
``archive``          the redacted record appended to the durable archive
``archive_files``    an archived line read back at its position
``schema``           the Tantivy schema, analyzers, opening the index
``documents``        the documents the index holds: message, session, memory and team documents
``state``            offsets and session facts (state.db)
``project``          canonical projects (a cwd -> its main git root; worktrees share it)
``native_memory``    Claude Code's own memory files (MEMORY.md, CLAUDE.md)
``touches``          the files each tool call wrote and what they hold now: the touches,
                     state.db's lookups, fingerprints, the paths a text names, the marks' wording
``ingest``           the writer: the ``Indexer``
``ledger``           what the user keeps out, the one check ingest makes and the one gate
                     every reader's hits pass: exclusions, the pause, ``recall: off``
                     sessions, tombstones; ``admit``, ``shown``
``forgetting``       forgetting from the archive, index and offsets, with the intent that
                     makes a forget resumable
``forget_rules``     a ``--match``/``--secret`` forget standing for the lines archived after
                     it, held as its length and digests keyed by forget.key, never the text
``vectors``          the semantic channel's vectors (vectors.db): one per embedded message,
                     dropped by every forget
``purge``            making deleted documents' bytes leave the index's segments
``reredact_archive`` re-redacting what older rules stored: the rules version on record, one
                     archive file re-redacted
``reredact_stages``  the writer's stages of that pass
"""
