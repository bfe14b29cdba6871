"""The project's tests. A regular package, so that `tests` names this folder even when an installed
distribution ships a top-level `tests` package of its own (apache-iotdb 2.0.11 does)."""
