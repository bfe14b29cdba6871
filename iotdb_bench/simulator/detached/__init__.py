"""Detached runs: the conductor Job and the plan it runs."""
