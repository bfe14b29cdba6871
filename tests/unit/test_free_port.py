"""The collector's port is chosen below the kernel's ephemeral range, which outgoing connections draw
from between the choice and the collector's bind (a run once failed: "address already in use")."""

from __future__ import annotations

import socket
from pathlib import Path

from iotdb_bench.cli.run.platforms.local import FIRST_CHOSEN_PORT, free_port


def test_a_chosen_port_is_free_and_below_the_ephemeral_range():
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    assert all(FIRST_CHOSEN_PORT <= port < low for port in ports), ports
    assert len(ports) > 1  # drawn at random: parallel runs rarely meet
    for port in ports:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", port))


def test_a_port_someone_listens_on_is_never_chosen(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", FIRST_CHOSEN_PORT))
        taken.listen()
        monkeypatch.setattr("iotdb_bench.cli.run.platforms.local._ephemeral_ports_start", lambda: FIRST_CHOSEN_PORT + 2)
        assert {free_port() for _ in range(10)} == {FIRST_CHOSEN_PORT + 1}
