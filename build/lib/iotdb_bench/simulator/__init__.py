"""The simulator: runs inside the pods (and as local processes). One package, two roles."""

__version__ = "0.1.0"
