"""Views of the results: terminal tables, report.html, Markdown/CSV files and plots."""
