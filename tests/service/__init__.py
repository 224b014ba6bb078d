"""recall/service/: the background service, its socket client, upgrades under it."""
