"""simulator/wire/text_rows.integers (which the QuestDB and VictoriaMetrics encoders use) against str() of every
value: every width from 1 to 19 digits, both signs, zero, the int64 extremes, narrow dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from iotdb_bench.simulator.wire import text_rows


def rendered(values: np.ndarray) -> list[str]:
    return [row[row != 0].tobytes().decode() for row in text_rows.integers(values)]


def edge_values() -> np.ndarray:
    powers = [10**width for width in range(19)]
    around = [value + step for value in powers for step in (-1, 0, 1)] + [2**63 - 1]
    return np.array(around + [-value for value in around] + [0], dtype=np.int64)


@pytest.mark.parametrize("values", [
    edge_values(), np.array([0]), np.array([-7]), np.arange(-10_001, 10_001), np.array([1_767_225_600_000 * 1_000_000]),
    np.array([-32767, 0, 32767], dtype=np.int16), np.array([-(2**31 - 1), 2**31 - 1, 5], dtype=np.int32),
], ids=["edges", "zero", "minus-seven", "small-range", "nanoseconds", "int16", "int32"])
def test_every_value_is_its_decimal_text(values):
    assert rendered(values) == [str(value) for value in values.tolist()]


def test_rows_are_one_width_with_padding_in_front():
    rows = text_rows.integers(np.array([5, -123, 40]))
    assert rows.shape == (3, 4)  # sign and three digits
    assert rows.tolist() == [[0, 0, 0, ord("5")], [ord("-"), ord("1"), ord("2"), ord("3")], [0, 0, ord("4"), ord("0")]]


def test_no_values_give_no_rows():
    assert text_rows.integers(np.array([], dtype=np.int64)).shape[0] == 0


@pytest.mark.parametrize("values", [np.arange(-50, 50).reshape(10, 10), np.arange(20).reshape(4, 5) * 99_991, np.array([[0, 100], [7, 9_999]])],
                         ids=["signs", "wide", "small"])
def test_a_matrix_of_values_is_each_values_text_on_a_last_axis(values):
    """Several fields of each row at once (TSBS's cpu lines): the same digits as one value at a time."""
    digits = text_rows.integers(values)
    assert digits.shape[:2] == values.shape
    assert [[cell[cell != 0].tobytes().decode() for cell in row] for row in digits] == [[str(v) for v in row] for row in values.tolist()]
