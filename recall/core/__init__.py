"""The foundation every floor stands on: paths under ``$RECALL_HOME``, errors, config, the log,
the service's socket client, and a long-lived process's plumbing (``process``: heap
trimming, pid locks, priorities, RSS).
"""
