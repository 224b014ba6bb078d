"""What the user controls about what recall keeps: forgetting from every store at once
(``forget``). Exclusions, the pause and sessions switched off live on the ingest side
(``indexer.ledger``), where every message passes."""
