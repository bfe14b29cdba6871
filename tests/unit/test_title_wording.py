"""The insert table's title counts tables in words ("1 table", "4 tables"), never "table(s)"."""

from iotdb_bench.cli.results.tables.sections import title
from tests import factories


def test_the_title_says_one_table_or_several_tables():
    document = factories.document([(1, factories.insert_report([1000], 1.0))])
    assert ", key db, 1 table, " in title(document)
    document.spec = document.spec.model_copy(update={"tables": 4})
    assert ", key db, 4 tables, " in title(document)
