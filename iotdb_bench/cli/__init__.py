"""The command line: runs on the laptop, launches runs on a platform, reports the figures."""
