"""The typed results: the document saved as results.json and the figures derived from it (no rendering)."""
