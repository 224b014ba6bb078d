"""The foundation every floor stands on: paths under ``$RECALL_HOME``, errors, config, the log
and the service's socket client.
"""
