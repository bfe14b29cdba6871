"""What the views show of the results, declared once: the figures (catalogue.py, written by formats.py)
and the tables of each document, in order (sections.py; a study's own tables: study_catalogue.py)."""
