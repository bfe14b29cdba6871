"""The starter config `iotdb-bench init` writes (cli/config_starter.py): it loads as a config, has a target
of every database module with the values the packaged config gives it, and names every option of each
module with its default. A run that uses it: tests/integration/test_init_config.py."""

from __future__ import annotations

import re

import yaml

from iotdb_bench.cli.config import DEFAULT_CONFIG, load_config
from iotdb_bench.cli.config_starter import starter_config
from iotdb_bench.simulator.modules import module_class, module_names


def blocks(text: str) -> dict[str, str]:
    """Each target's lines (its key and what is indented under it), by target name."""
    found, name = {}, None
    for line in text.split("\n"):
        key = re.match(r"^  (['\w-]+):$", line)
        if key:
            name = yaml.safe_load(key[1])
            found[name] = ""
        elif name is not None and (line.startswith("    ") or not line.strip()):
            found[name] += line + "\n"
        elif name is not None and not line.startswith("  #"):
            name = None
    return found


def test_it_loads_with_a_target_of_every_module_as_the_packaged_config_sets_it(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(starter_config())
    written, packaged = load_config(path), load_config(DEFAULT_CONFIG)
    assert sorted(target.module for target in written.targets.values()) == module_names()  # one each
    for name, target in written.targets.items():
        if name in packaged.targets:
            assert target.model_dump() == packaged.targets[name].model_dump(), name
    assert written.targets["sqlite"].platform == "local" and written.targets["postgresql-local"].platform == "local"  # the local one first
    assert (written.namespace, written.image) == (packaged.namespace, packaged.image)


def test_every_option_of_every_module_is_named_with_its_default():
    text = starter_config()
    targets = blocks(text)
    config = yaml.safe_load(text)
    for name, settings in config["targets"].items():
        options = module_class(settings["module"]).Options.model_fields
        block = targets[name]
        for option, field in options.items():
            if option in settings:
                assert re.search(rf"^    {option}: ", block, re.M), (name, option)
            else:
                shown = yaml.safe_dump({option: field.default}, default_flow_style=True).strip()[1:-1]
                assert f"    # {shown}" in block, (name, option, shown)


def test_options_are_explained_by_their_descriptions_or_what_they_accept():
    text = starter_config()
    assert re.search(r"# journal_mode: wal +# one of wal, delete, truncate, memory, off", text)  # a Literal
    assert re.search(r"# create_indices: false +# true or false", text)
    assert re.search(r"# busy_timeout_ms: 60000 +# >= 0", text)  # a bound
    questdb = blocks(text)["questdb-local"]
    assert "# how the tables are partitioned by their designated timestamp; one of HOUR, DAY, WEEK, MONTH, YEAR" in questdb  # a description
    assert "#   existing_secret: Kubernetes Secret holding the env vars the options reference" in text  # the tool's own keys
    assert "'null':" in text  # a name YAML would read as null is quoted
