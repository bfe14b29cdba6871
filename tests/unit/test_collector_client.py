"""The workers' collector client against a real HTTP server (uvicorn) that closes idle keep-alive
connections quickly, as the collector does after its keep-alive timeout."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn
from fastapi import FastAPI, HTTPException

from iotdb_bench.cli.run.platforms.local import free_port
from iotdb_bench.simulator.collector_client import CollectorClient, CollectorError
from iotdb_bench.simulator.protocol import WorkerHello

IDLE_CLOSE_S = 0.3


@pytest.fixture
def server():
    received: list[int] = []
    app = FastAPI()

    @app.get("/busy")
    def busy() -> None:
        raise HTTPException(status_code=409, detail="run not finished")

    @app.post("/hello")
    def hello(update: WorkerHello) -> dict:
        received.append(update.worker)
        return {"count": len(received)}

    port = free_port()
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                             timeout_keep_alive=IDLE_CLOSE_S))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    while not instance.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}", received
    instance.should_exit = True
    thread.join(5)


def test_a_connection_the_server_closed_while_idle_is_replaced_and_nothing_is_sent_twice(server):
    url, received = server
    client = CollectorClient(url, worker=3)
    client.post("/hello", WorkerHello(worker=3))
    time.sleep(IDLE_CLOSE_S * 4)  # the server closes the kept-alive connection meanwhile
    assert client.post("/hello", WorkerHello(worker=3)) == b'{"count":2}'
    assert received == [3, 3]


def test_each_thread_keeps_its_own_connection(server):
    url, received = server
    client = CollectorClient(url, worker=1)
    threads = [threading.Thread(target=lambda: [client.post("/hello", WorkerHello(worker=1)) for _ in range(20)]) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(received) == 60


def test_an_unreachable_collector_is_one_clear_error():
    client = CollectorClient(f"http://127.0.0.1:{free_port()}", worker=0)
    with pytest.raises(CollectorError, match="unreachable"):
        client.post("/hello", WorkerHello(worker=0))


def test_a_get_returns_the_status_and_body_instead_of_raising(server):
    url, _ = server
    status, body = CollectorClient(url).get("/busy")
    assert (status, body) == (409, b'{"detail":"run not finished"}')


def test_a_get_is_tried_again_when_no_answer_comes_and_then_fails_clearly():
    client = CollectorClient(f"http://127.0.0.1:{free_port()}", get_attempts=3)
    started = time.monotonic()
    with pytest.raises(CollectorError, match="unreachable"):
        client.get("/status")
    assert time.monotonic() - started >= 0.2 + 0.4  # the pauses between the three attempts
