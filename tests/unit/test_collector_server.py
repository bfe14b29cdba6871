"""The collector's HTTP server runs on uvicorn's C HTTP parser and event loop, which it picks by
itself when they are installed (simulator/requirements.txt): with the pure-Python ones each request
costs the collector about 1.7 times the CPU, and 1,000 workers post progress every second."""

from __future__ import annotations

import uvicorn
from fastapi import FastAPI


def test_uvicorn_picks_the_c_http_parser():
    config = uvicorn.Config(FastAPI())  # the collector leaves `http` at its default, "auto"
    config.load()
    assert config.http_protocol_class.__name__ == "HttpToolsProtocol"


def test_uvicorn_picks_uvloop():
    factory = uvicorn.Config(FastAPI()).get_loop_factory()  # `loop` left at "auto" as well
    assert factory is not None and factory.__module__.startswith("uvloop")
