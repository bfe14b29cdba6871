"""Queries beyond the tool's six: their parameters, drawn per execution from what the tool wrote
(parameters.py), prepared for the timed call in one place (executions.py), and TSBS's DevOps query
types with their expected answers (tsbs_devops.py)."""
