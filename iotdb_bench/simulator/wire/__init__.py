"""Wire formats shared by database modules: binary COPY, SQL text, NDJSON and line-protocol rows.

None of them is a database module, so none can be named as a target's module in the config.
"""
