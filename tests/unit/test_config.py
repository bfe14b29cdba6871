"""config.yaml validation: field-level messages, every seed target present."""

import pytest

from iotdb_bench.cli.config import load_config
from iotdb_bench.cli.errors import UsageProblem

SEED_TARGETS = {
    "postgresql", "cockroachdb", "yugabyte_sql", "yugabyte_cql", "arangodb", "cassandra_sync", "cassandra_async",
    "influxdb", "timescaledb", "elasticsearch", "azure_data_explorer", "sqlite", "postgresql-local",
}


def test_shipped_config_has_every_target_and_no_plain_secret():
    config = load_config(None)
    assert set(config.targets) >= SEED_TARGETS
    for name, target in config.targets.items():
        for key, value in target.connection.items():
            if key in ("password", "token", "client_secret"):
                assert str(value).startswith("${"), f"{name}.{key} must reference the environment"


def test_env_references():
    config = load_config(None)
    assert config.targets["postgresql"].env_references() == ["PGPASSWORD"]
    assert "ADX_CLIENT_SECRET" in config.targets["azure_data_explorer"].env_references()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("targets: {a: {platform: local}}", "targets.a.module: Field required"),
        ("targets: {a: {module: Bad-Name}}", "targets.a.module"),
        # Wire encoders are not database modules: naming one is a config error, not a crash at run time.
        ("targets: {a: {module: text_rows}}", "targets.a.module: Value error, unknown database module 'text_rows'"),
        ("targets: {a: {module: base}}", "targets.a.module: Value error, unknown database module 'base'"),
        ("targets: {a: {module: sqlite, platform: moon}}", "targets.a.platform"),
        ("targets: {}\nnamespce: x", "namespce: unknown key"),
        ("targets: {}\nimage: {tag: latest}", "image.tag"),
        ("- just a list", "must hold a mapping"),
        ("targets: [unclosed", "not valid YAML"),
    ],
)
def test_invalid_config_messages(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(UsageProblem, match=message.replace(".", r"\.")):
        load_config(path)


def test_missing_config(tmp_path):
    with pytest.raises(UsageProblem, match="not found"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_target():
    with pytest.raises(UsageProblem, match="unknown target 'nope'"):
        load_config(None).target("nope")
