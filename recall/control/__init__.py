"""The service seen from outside: its unit files (a systemd user unit, a launchd agent) and the
service manager (``units``), install, start, stop, remove and status (``lifecycle``), and
``recall index`` done by the running service (``index``). The service's pid lock and status
file are read through ``recall.core.service_state``. Progress goes to callbacks the caller
passes in; nothing here imports the command line."""
