"""Checks of the database installs in dbinstall/: they parse, they place the databases on the
dedicated database nodes, they keep passwords out of the files, and the README covers them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

DBINSTALL = Path(__file__).resolve().parents[2] / "dbinstall"
ROLE_KEY = "iotdb-bench/role"
ROLE_VALUE = "database"

# file -> does it describe database pods (and so must carry the placement)?
YAML_FILES = {
    "postgresql-values.yaml": True,
    "cockroachdb-values.yaml": True,
    "yugabyte-values.yaml": True,
    "arangodb-deployment.yaml": True,
    "k8ssandra-values.yaml": False,  # the operators only
    "k8ssandra-cluster.yaml": True,
    "influxdb-values.yaml": True,
    "timescaledb-values.yaml": True,
    "timescaledb-prerequisites.yaml": False,  # certificate issuer
    "elastic-deployment.yaml": True,
    "mongodb-community.yaml": True,
    "iotdb-standalone.yaml": True,
    "clickhouse-installation.yaml": True,
    "questdb-values.yaml": True,
    "victoriametrics-values.yaml": True,
}
PASSWORD_KEYS = re.compile(r"(password|token|secretkey|^patroni_.*)$", re.IGNORECASE)
# Keys whose value names a Secret (namespace/secret/key) instead of holding a password.
SECRET_REFERENCE_KEYS = re.compile(r"/k8s_secret_password$")


def load(name: str) -> list[Any]:
    return [doc for doc in yaml.safe_load_all((DBINSTALL / name).read_text()) if doc is not None]


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a nested structure of dicts and lists."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key), value
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def database_toleration(tolerations: Any) -> bool:
    return isinstance(tolerations, list) and any(
        t.get("key") == ROLE_KEY
        and t.get("effect") == "NoSchedule"
        and (t.get("operator") == "Exists" or t.get("value") == ROLE_VALUE)
        for t in tolerations
    )


@pytest.mark.parametrize("name", list(YAML_FILES))
def test_file_parses(name):
    assert load(name), f"{name} is empty"


@pytest.mark.parametrize("name", [n for n, is_db in YAML_FILES.items() if is_db])
def test_database_pods_go_to_database_nodes(name):
    pairs = [pair for doc in load(name) for pair in walk(doc)]
    selectors = [v for k, v in pairs if k in ("nodeSelector", "nodeAffinityLabels")]
    assert any(isinstance(s, dict) and s.get(ROLE_KEY) == ROLE_VALUE for s in selectors), (
        f"{name}: no nodeSelector/nodeAffinityLabels {ROLE_KEY}={ROLE_VALUE}"
    )
    tolerations = [v for k, v in pairs if k == "tolerations"]
    assert tolerations, f"{name}: no tolerations"
    assert all(database_toleration(t) for t in tolerations), f"{name}: a toleration list misses the database taint"


@pytest.mark.parametrize("name", list(YAML_FILES))
def test_no_password_in_plain_text(name):
    for doc in load(name):
        for key, value in walk(doc):
            if PASSWORD_KEYS.search(key) and not SECRET_REFERENCE_KEYS.search(key) and isinstance(value, (str, int)) and str(value):
                pytest.fail(f"{name}: {key} holds a literal value; passwords belong in Secrets")


@pytest.mark.parametrize("name", [n for n, is_db in YAML_FILES.items() if is_db])
def test_placement_fragments_are_valid_kubernetes(name):
    """Each nodeSelector / tolerations fragment, put into a Pod, passes the Kubernetes schema."""
    for doc in load(name):
        for key, value in walk(doc):
            if key not in ("nodeSelector", "tolerations"):
                continue
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "check"},
                "spec": {"containers": [{"name": "c", "image": "i"}], key: value},
            }
            kubernetes_validate.validate(pod, "1.33", strict=True)


def test_elasticsearch_pod_template_is_valid_kubernetes():
    (es,) = load("elastic-deployment.yaml")
    for node_set in es["spec"]["nodeSets"]:
        template = {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": node_set["name"]},
            "template": node_set["podTemplate"],
        }
        kubernetes_validate.validate(template, "1.33", strict=True)
        assert node_set["podTemplate"]["metadata"]["labels"][ROLE_KEY] == ROLE_VALUE


def test_cassandra_write_timeout_is_ten_seconds():
    (cluster,) = load("k8ssandra-cluster.yaml")
    assert cluster["spec"]["cassandra"]["config"]["cassandraYaml"]["write_request_timeout_in_ms"] == 10000


def test_postgresql_password_comes_from_the_benchmark_secret():
    values = load("postgresql-values.yaml")[0]
    assert values["auth"]["existingSecret"] == "iotdb-bench-postgresql"
    assert values["auth"]["secretKeys"]["adminPasswordKey"] == "PGPASSWORD"


def test_azure_data_explorer_terraform():
    main = (DBINSTALL / "azure_data_explorer" / "main.tf").read_text()
    variables = (DBINSTALL / "azure_data_explorer" / "variables.tf").read_text()
    assert 'resource "azurerm_kusto_cluster"' in main
    assert "var.sku_name" in main and "var.sku_capacity" in main
    assert "var.service_principal_name" in main
    for variable in ("subscription_id", "service_principal_name", "sku_name", "sku_capacity", "database_name"):
        assert f'variable "{variable}"' in variables, variable


def test_readme_table_and_commands_cover_every_file():
    readme = (DBINSTALL / "README.md").read_text()
    head = readme[: readme.index("\n## ")]
    assert "| target | service DNS name" in head
    for target in ("postgresql", "cockroachdb", "yugabyte_ysql", "yugabyte_ycql", "arangodb", "cassandra",
                   "influxdb", "timescaledb", "elasticsearch", "adx", "mongodb", "iotdb", "clickhouse",
                   "questdb", "victoriametrics"):
        assert f"| `{target}` |" in head, target
    for name in YAML_FILES:
        assert f"dbinstall/{name}" in readme, f"README has no install command for {name}"
    assert "azure_data_explorer" in readme


def test_iotdb_statefulset_is_valid_kubernetes_and_serves_the_target():
    service, statefulset = load("iotdb-standalone.yaml")
    for document in (service, statefulset):
        kubernetes_validate.validate(document, "1.33", strict=True)
    assert service["metadata"]["name"] == "iotdb-datanode" and service["spec"]["ports"][0]["port"] == 6667
    assert statefulset["spec"]["template"]["metadata"]["labels"][ROLE_KEY] == ROLE_VALUE


def test_clickhouse_password_comes_from_the_benchmark_secret():
    (installation,) = load("clickhouse-installation.yaml")
    assert installation["metadata"]["name"] == "iotbench"  # the operator's service: clickhouse-iotbench
    users = installation["spec"]["configuration"]["users"]
    assert users["iotbench/k8s_secret_password"] == "default/iotdb-bench-clickhouse/CLICKHOUSE_PASSWORD"
    (template,) = installation["spec"]["templates"]["podTemplates"]
    assert template["metadata"]["labels"][ROLE_KEY] == ROLE_VALUE
