"""The elasticsearch module's TSBS documents (simulator/modules/elasticsearch/tsbs_layout.py): each row of
a devops batch is a JSON line of its measurement's form (time, the host's tags, the measurement's own,
its fields in TSBS's order), the integers TSBS writes as int64 JSON integers, mem's float64
percentages the same doubles, and the index mapping says those types. No server needed."""

from __future__ import annotations

import json

from iotdb_bench.simulator.modules.elasticsearch.tsbs_layout import TsbsDocuments, properties
from iotdb_bench.simulator.wire import text_rows
from iotdb_bench.simulator.workload.tsbs import USE_CASES
from iotdb_bench.simulator.workload.tsbs.hosts import TAG_NAMES, host_tags
from tests.unit.test_tsbs_generator import batches, tsbs_spec

HOSTS = 3


def test_devops_rows_are_json_documents_of_their_measurement_with_tsbs_types():
    spec = tsbs_spec(HOSTS, "30s", "2016-01-01T00:00:00Z", "2016-01-01T00:02:00Z", workers=2, shape="tsbs-devops")
    measurements = USE_CASES["tsbs-devops"].measurements
    documents = TsbsDocuments(spec.seed, HOSTS, "tsbs-devops")
    tags = host_tags(spec.seed, 0, HOSTS)
    seen = set()
    for batch in batches(spec, batch=50):  # a batch mixes measurements: each line in its own form
        lines = text_rows.compact(documents.rows(batch)).decode().splitlines()
        assert len(lines) == len(batch)
        for row, line in enumerate(lines):
            document, measurement = json.loads(line), measurements[int(batch.table_index[row])]
            host = int(batch.host[row])
            own = {name: values[0] for name, values in measurement.tag_values(spec.seed, batch.host[row : row + 1]).items()}
            assert list(document) == ["time", *TAG_NAMES, *own, *measurement.field_names]
            assert document["time"] == int(batch.timestamp_ms[row]) and [document[name] for name in TAG_NAMES] == list(tags[host])
            assert {name: document[name] for name in own} == own
            for position, (name, integer) in enumerate(zip(measurement.field_names, measurement.integer_fields)):
                value = float(batch.measurement(position)[row])
                assert document[name] == value and isinstance(document[name], int if integer else float), (measurement.name, name)
            seen.add(measurement.name)
    assert seen == {one.name for one in measurements}


def test_mapping_types_the_fields_as_tsbs_serializer_and_keeps_the_own_tags():
    mem, diskio = properties("tsbs-devops", "mem"), properties("tsbs-devops", "diskio")
    assert [name for name, kind in mem.items() if kind == {"type": "double"}] == ["used_percent", "available_percent", "buffered_percent"]
    assert diskio["serial"] == {"type": "keyword"} and diskio["reads"] == {"type": "long"}
    assert list(properties("tsbs-cpu", "cpu"))[:1 + len(TAG_NAMES)] == ["time", *TAG_NAMES]
