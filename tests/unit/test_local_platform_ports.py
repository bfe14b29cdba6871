"""The collector's port on the local platform: reserved from its choice until the collector listens."""

from __future__ import annotations

import asyncio
import socket

import pytest

from iotdb_bench.cli.run.platforms.local import free_port, reserve_port


def test_a_reserved_port_is_refused_to_another_runs_choice_and_open_to_the_collectors_server():
    with reserve_port() as reservation:
        port = reservation.getsockname()[1]
        with socket.socket() as another_choice, pytest.raises(OSError):
            another_choice.bind(("127.0.0.1", port))  # what reserve_port and free_port try first

        async def collector_listens() -> bytes:
            # as the collector's server binds (asyncio's create_server sets SO_REUSEADDR)
            server = await asyncio.get_running_loop().create_server(asyncio.Protocol, host="127.0.0.1", port=port)
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            server.close()
            await server.wait_closed()
            return b"listened"

        assert asyncio.run(collector_listens()) == b"listened"


def test_a_free_port_is_let_go_for_the_server_that_asked():
    port = free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()
