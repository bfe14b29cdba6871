"""The elasticsearch module's options and the constants its roles share; the base of its role classes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from iotdb_bench.simulator.modules.base import ModuleOptions, Role, http_url

if TYPE_CHECKING:
    from iotdb_bench.simulator.modules.elasticsearch import Module  # noqa: F401 (the alias at the end names it)

PRODUCT = "Elasticsearch/OpenSearch"
TOO_MANY_REQUESTS = 429
CONNECT_TIMEOUT_S = 10.0
MAX_PAGE = 10_000  # index.max_result_window: the most hits one search (or scroll page) returns
SCROLL_KEEP_ALIVE = "2m"
# Mapping types of each kind of column of the shapes (simulator/workload/shapes.py); texts are keywords (not analysed).
FIELD_TYPES = {"timestamp": {"type": "date", "format": "epoch_millis"}, "device": {"type": "keyword"}, "sensor": {"type": "short"},
               "sequence": {"type": "long"}, "float": {"type": "double"}, "int16": {"type": "short"}, "int32": {"type": "integer"},
               "text": {"type": "keyword"}}


class ElasticsearchOptions(ModuleOptions):
    hosts: list[str] = Field(default_factory=lambda: ["http://localhost:9200"], min_length=1,
                             description="URLs of the nodes (a list, or one comma-separated string); each process uses one")
    username: str | None = None
    password: str | None = None
    api_key: str | None = Field(None, description="encoded API key, sent as 'Authorization: ApiKey ...'")
    verify_certs: bool = True
    ca_certs: str | None = Field(None, description="PEM file of the CA that signed the server certificate")
    shards: int = Field(1, ge=1, le=1024)
    replicas: int = Field(1, ge=0, le=16)
    refresh_interval: str = Field("1s", pattern=r"^(-1|\d+(ms|s|m|h))$", description="index.refresh_interval; -1 = never")
    translog_durability: Literal["request", "async"] = Field("request", description="'request' fsyncs the translog before acknowledging")
    request_timeout: float = Field(120.0, gt=0, description="seconds one request may take (inserts, setup, count)")
    query_page_size: int = Field(10_000, ge=1, le=65_536, description="buckets per page of the per-device queries")
    request_cache: bool = Field(False, description="let repeated query runs be answered from the shard request cache")
    max_retries: int = Field(10, ge=0, description="retries of events rejected with 429 (bulk queue full)")
    key_order: Literal["device", "time"] = Field("device", description="--primary-key client: _id led by the device id, or by the timestamp")

    @field_validator("hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [host.strip() for host in value.split(",") if host.strip()]
        return value

    @field_validator("hosts")
    @classmethod
    def _http_urls(cls, hosts: list[str]) -> list[str]:
        return [http_url(host) for host in hosts]


SearchRole = Role["Module", ElasticsearchOptions]  # the base of the module's role classes
