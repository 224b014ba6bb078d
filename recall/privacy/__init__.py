"""What the user controls about what recall keeps, done in every store at once. Exclusions, the
pause and sessions switched off live on the ingest side (``indexer.ledger``), where every
message passes.

  ``forget``          remove a selection from every store at once, one named, resumable step per
                      store (tombstones, archive, index, offsets, memories, the CLAUDE.md block,
                      session summaries, the injection log, the synthesis cache, rules' trust,
                      the team, the purge), finished after an interruption by the next forget,
                      ``recall index`` or the service
  ``redaction_pass``  the pass that re-redacts every store when the redaction rules improve
"""
