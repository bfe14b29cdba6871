"""The arangodb module's options and the key generators of its collections; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from iotdb_bench.simulator.modules.base import ModuleOptions, Role
from iotdb_bench.simulator.spec import PrimaryKey

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.arangodb import Module  # noqa: F401 (the alias at the end names it)

# `none`: seed 002's slim shape has no key of its own; ArangoDB still gives each document a generated _key.
KEY_GENERATORS = {PrimaryKey.db: "traditional", PrimaryKey.client: "traditional", PrimaryKey.uuid: "uuid", PrimaryKey.none: "traditional"}


class ArangoOptions(ModuleOptions):
    url: str = Field("http://127.0.0.1:8529", description="coordinator URL(s), comma-separated")
    username: str = "root"
    password: str | None = None
    database: str = "_system"
    shard_count: int | None = Field(None, ge=1)
    replication_factor: int = Field(1, ge=1)
    sync: bool = Field(False, description="waitForSync on the collections and every write")
    batch_api: Literal["document", "import"] = "document"
    create_indices: bool = False
    request_timeout: float = Field(120, gt=0)
    key_order: Literal["device", "time"] = Field("device", description="--primary-key client: _key led by the device id, or by the timestamp")


ArangodbRole = Role["Module", ArangoOptions]  # the base of the module's role classes
