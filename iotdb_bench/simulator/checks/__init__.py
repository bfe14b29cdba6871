"""Checks: the expected answers the workers keep, and the comparison with what the database returns."""
