"""Floor 1, the foundation every other floor stands on: the standard library only (and the
package's ``__version__``), never a third-party package nor a module of another floor
(tests/house/test_architecture.py checks both). Floor 1 is what every process reads first, the
prompt hook on every prompt among them: small and cheap to import. What must run before recall
is installed, the plugin's builder, is ``recall.setup.plugin_runtime``: standard library only
too, and run by path so that no package of ours loads with it.

  ``paths``           everything under ``$RECALL_HOME``, atomic writes, the file lock
  ``errors``          the few error classes and the one-line report
  ``config``          ``config.json`` (and the last one that parsed)
  ``log``             the rotating log
  ``jsonio``          the one lenient JSON/JSONL reader: a missing or damaged file reads as a default
  ``text``            the one clipping helper: a word boundary and an ellipsis
  ``lazy_re``         regular expressions compiled when first used: an import compiles none
  ``process``         a long-lived process's plumbing, for the writer and the service: pid locks,
                      glibc arenas and trimming, CPU/IO priority, RSS
  ``service_client``  the client side of the service's socket, and its trust checks
  ``service_state``   the service's pid lock and status file, read without importing the service
  ``code_version``    a fingerprint of the installed code: the service restarts itself when it changes
  ``caller``          whose credentials a model call uses
  ``faults``          the crash tests' kill points
  ``wiring``          how recall is wired into Claude Code: ``recall setup``'s entries in the
                      settings files, recall's plugin enabled or not
"""
