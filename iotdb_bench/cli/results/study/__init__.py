"""A study's results: its typed document (study.json) and its rankings and score."""
