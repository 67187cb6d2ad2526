"""Determined itself: the master, its database, master.yaml by section, resource pools."""
