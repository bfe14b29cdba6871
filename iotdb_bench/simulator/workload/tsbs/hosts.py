"""TSBS's DevOps hosts: their names and the ten tags that describe each one (TSBS's
pkg/data/usecases/devops/host.go), drawn per host from the seed with TSBS's value sets and choices;
and the draws every entity's own values come from (a truck's tags, a host's disk serial...).

A host's tags are a pure function of (seed, host index): every worker, the collector (which writes
the `tags` table) and the checker agree without talking. The values need not equal TSBS's byte for
byte, the sets and the uniform choices among them are TSBS's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from iotdb_bench.simulator.workload.events import GOLDEN, splitmix64

# The tags of every host, in TSBS's order (its MachineTagKeys).
TAG_NAMES = ("hostname", "region", "datacenter", "rack", "os", "arch", "team", "service", "service_version", "service_environment")
REGIONS = (
    ("us-east-1", ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e")),
    ("us-west-1", ("us-west-1a", "us-west-1b")),
    ("us-west-2", ("us-west-2a", "us-west-2b", "us-west-2c")),
    ("eu-west-1", ("eu-west-1a", "eu-west-1b", "eu-west-1c")),
    ("eu-central-1", ("eu-central-1a", "eu-central-1b")),
    ("ap-southeast-1", ("ap-southeast-1a", "ap-southeast-1b")),
    ("ap-southeast-2", ("ap-southeast-2a", "ap-southeast-2b")),
    ("ap-northeast-1", ("ap-northeast-1a", "ap-northeast-1c")),
    ("sa-east-1", ("sa-east-1a", "sa-east-1b", "sa-east-1c")),
)
TEAMS = ("SF", "NYC", "LON", "CHI")
OPERATING_SYSTEMS = ("Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10")
ARCHITECTURES = ("x64", "x86")
ENVIRONMENTS = ("production", "staging", "test")
RACKS, SERVICES, SERVICE_VERSIONS = 100, 20, 2  # numbered choices: "0".."99", "0".."19", "0".."1"
NAME_WIDTH = 15  # "host_" or "truck_" and up to nine digits: fixed width, like the tool's device ids
_SALT_TAGS = 0x3C6EF372FE94F82B


# draw(slot, n): for every entity, a number uniform in [0, n), its own for each slot.
Draw = Callable[[int, int], np.ndarray]


def entity_draws(seed: int, salt: int, entities: np.ndarray, slots: int = 16) -> Draw:
    """The draws of these entities for a seed (`salt`: whose draws they are): slot s of entity e is
    hashed from (e, s), so an entity's values do not depend on which others are drawn with it."""
    mixed = np.uint64((seed * int(GOLDEN) ^ salt) & 0xFFFF_FFFF_FFFF_FFFF)
    numbers = entities.astype(np.uint64) * np.uint64(slots)

    def draw(slot: int, choices: int) -> np.ndarray:
        return (splitmix64(numbers + np.uint64(slot) + mixed) % np.uint64(choices)).astype(np.int64)

    return draw


def host_name(index: int) -> str:
    return f"host_{index}"


def entity_names(entity: str, first: int, count: int) -> np.ndarray:
    """Fixed-width byte-string names of entities first..first+count-1 (host_0, truck_0...)."""
    return np.array([f"{entity}_{index}".encode() for index in range(first, first + count)], dtype=f"S{NAME_WIDTH}")


def host_index(name: str) -> int:
    """The index of a host from its name (host_12 -> 12)."""
    return int(name.removeprefix("host_"))


def host_tags(seed: int, first: int, count: int) -> list[tuple[str, ...]]:
    """The tags of hosts first..first+count-1 in TAG_NAMES order, each drawn uniformly from TSBS's
    choices (the datacenter among its region's)."""
    draw = entity_draws(seed, _SALT_TAGS, np.arange(first, first + count), slots=len(TAG_NAMES))

    def choice(tag: int, choices: int) -> list[int]:
        return draw(tag, choices).tolist()

    region = choice(1, len(REGIONS))
    datacenter = choice(2, 12)  # 12: a multiple of every region's count of datacenters (2, 3, 4)
    columns = zip(region, datacenter, choice(3, RACKS), choice(4, len(OPERATING_SYSTEMS)), choice(5, len(ARCHITECTURES)),
                  choice(6, len(TEAMS)), choice(7, SERVICES), choice(8, SERVICE_VERSIONS), choice(9, len(ENVIRONMENTS)))
    rows: list[tuple[str, ...]] = []
    for index, (r, d, rack, os, arch, team, service, version, environment) in zip(range(first, first + count), columns):
        name, datacenters = REGIONS[r]
        rows.append((host_name(index), name, datacenters[d % len(datacenters)], str(rack), OPERATING_SYSTEMS[os], ARCHITECTURES[arch],
                     TEAMS[team], str(service), str(version), ENVIRONMENTS[environment]))
    return rows
