"""The service seen from outside. The service's pid lock and status file are read through
``recall.core.service_state``. Progress goes to callbacks the caller passes in; nothing here
imports the command line.

  ``units``      the unit files (a systemd user unit, a launchd agent), the service manager,
                 the ``recall`` executable they run
  ``lifecycle``  install, start, stop, remove, the unit's status
  ``index``      ``recall index`` done by the running service, its progress by callback
"""
