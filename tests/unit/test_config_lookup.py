"""Which config file a command reads: --config, then $IOTBENCH_CONFIG (what the user named), then
./config.yaml when the current folder has one, then the packaged default; a file named but missing is
one line naming who named it; the run's conditions say which file it was."""

from __future__ import annotations

import pytest

from iotdb_bench.cli.config import CONFIG_ENV, DEFAULT_CONFIG, load_config
from iotdb_bench.cli.errors import UsageProblem
from iotdb_bench.cli.results import run_conditions
from tests import factories


def config_text(target: str) -> str:
    return f"targets: {{{target}: {{module: sqlite, platform: local, path: {target}.sqlite3}}}}\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return tmp_path


def test_the_packaged_default_when_nothing_else_is_there(folder):
    config = load_config(None)
    assert "postgresql-local" in config.targets
    assert config.source.path == str(DEFAULT_CONFIG) and config.source.phrase() == "config the packaged default"


def test_the_current_folder_s_config_yaml_comes_before_the_packaged_one(folder):
    (folder / "config.yaml").write_text(config_text("here"))
    config = load_config(None)
    assert list(config.targets) == ["here"]
    assert (config.source.path, config.source.chosen_by, config.source.phrase()) == ("./config.yaml", "the current folder", "config ./config.yaml")


def test_what_the_user_names_wins_over_the_current_folder(folder, monkeypatch):
    (folder / "config.yaml").write_text(config_text("here"))
    (folder / "named.yaml").write_text(config_text("named"))
    (folder / "from-env.yaml").write_text(config_text("from_env"))
    monkeypatch.setenv(CONFIG_ENV, "from-env.yaml")
    assert list(load_config(None).targets) == ["from_env"]
    assert load_config(None).source.phrase() == "config from-env.yaml (IOTBENCH_CONFIG)"
    named = load_config(folder / "named.yaml")  # --config
    assert list(named.targets) == ["named"] and named.source.chosen_by == "--config"


def test_a_named_file_that_is_missing_says_who_named_it(folder, monkeypatch):
    monkeypatch.setenv(CONFIG_ENV, str(folder / "nope.yaml"))
    with pytest.raises(UsageProblem, match=r"config file .*nope\.yaml \(IOTBENCH_CONFIG\) not found"):
        load_config(None)
    with pytest.raises(UsageProblem, match=r"^config file other\.yaml not found$"):
        load_config("other.yaml")


def test_a_broken_config_in_the_current_folder_is_named_as_such(folder):
    (folder / "config.yaml").write_text("targets: [unclosed")
    with pytest.raises(UsageProblem, match=r"^config file \./config\.yaml is not valid YAML"):
        load_config(None)
    (folder / "config.yaml").write_text(config_text("here"))
    with pytest.raises(UsageProblem, match=r"unknown target 'sqlite'; targets in the config \(config \./config\.yaml\): here"):
        load_config(None).target("sqlite")


def test_the_conditions_name_the_config_file(folder):
    (folder / "config.yaml").write_text(config_text("here"))
    document = factories.document([(1, factories.insert_report([1000], 1.0))])
    assert "config" not in run_conditions.caption(document)  # results saved before the file was recorded say nothing
    document.environment.config = load_config(None).source
    assert run_conditions.caption(document).endswith("; config ./config.yaml.")
    assert ("Config file", "./config.yaml (chosen by: the current folder)") in run_conditions.facts(document)
