"""TSBS's `iot` use case: a fleet of trucks (TSBS's pkg/data/usecases/iot/), each reporting two
measurements every step, `readings` (where it is and how it drives: seven fields) then
`diagnostics` (fuel, load, status: three), with eight tags that describe the truck.

The fields are TSBS's distributions: latitude and longitude walk by uniform steps of at most 0.005
degrees (five decimals), elevation, velocity, heading, grade and fuel consumption by uniform steps
of 10 or 5 within their ranges (whole numbers; fuel consumption one decimal); the fuel state falls
by up to 0.001 a step and starts over at 1 when it reaches 0 (a truck refuelled, one decimal); the
load keeps its value and, with a chance of 5% a step, takes a new one in [0, 5000) (whole); the status
walks by N(0, 1) in [0, 5]. Which rows TSBS leaves out, sends late or writes with a null field or tag
is iot_rows.py's.
"""

from __future__ import annotations

import numpy as np

from iotdb_bench.simulator.workload.tsbs.hosts import entity_draws
from iotdb_bench.simulator.workload.tsbs.usecases import Field, Measurement, UseCase
from iotdb_bench.simulator.workload.tsbs.walks import clamped, lazy, normal, refilled, uniform

FLEETS = ("East", "West", "North", "South")
DRIVERS = ("Derek", "Rodney", "Albert", "Andy", "Seth", "Trish")
# TSBS's models: name, load capacity, fuel capacity, nominal fuel consumption (float32s, whole numbers).
MODELS = (("F-150", 2000.0, 200.0, 15.0), ("G-2000", 5000.0, 300.0, 19.0), ("H-2", 1500.0, 150.0, 12.0))
DEVICE_VERSIONS = ("v1.0", "v1.5", "v2.0", "v2.3")
TAGS = (("name", "text"), ("fleet", "text"), ("driver", "text"), ("model", "text"), ("device_version", "text"),
        ("load_capacity", "float"), ("fuel_capacity", "float"), ("nominal_fuel_consumption", "float"))
_SALT_TAGS = 0x8CB92BA72F3D8DD7
_GEO_STEP, _BIG_STEP, _SMALL_STEP = uniform(-0.005, 0.005), uniform(-10.0, 10.0), uniform(-5.0, 5.0)

READINGS = Measurement("readings", (
    Field("latitude", clamped(_GEO_STEP, -90.0, 90.0, 0.0, 90.0), 5),
    Field("longitude", clamped(_GEO_STEP, -180.0, 180.0, 0.0, 180.0), 5),
    Field("elevation", clamped(_BIG_STEP, 0.0, 5000.0, 0.0, 500.0), 0),
    Field("velocity", clamped(_BIG_STEP, 0.0, 100.0, 0.0), 0),
    Field("heading", clamped(_SMALL_STEP, 0.0, 360.0, 0.0, 360.0), 0),
    Field("grade", clamped(_SMALL_STEP, 0.0, 100.0, 0.0), 0),
    Field("fuel_consumption", clamped(_SMALL_STEP, 0.0, 50.0, 25.0), 1),
), salt=0x2127599BF4325C37)
DIAGNOSTICS = Measurement("diagnostics", (
    Field("fuel_state", refilled(uniform(-0.001, 0.0), 0.0, 1.0), 1),
    Field("current_load", lazy(0.0, 5000.0, chance=0.05), 0),
    Field("status", clamped(normal(0.0, 1.0), 0.0, 5.0, 0.0), None),
), salt=0x880355F21E6D1965)


def truck_tags(seed: int, first: int, count: int) -> list[tuple]:
    """The tags of trucks first..first+count-1 in TAGS order, each drawn uniformly from TSBS's
    choices (the capacities are the model's)."""
    draw = entity_draws(seed, _SALT_TAGS, np.arange(first, first + count))
    columns = zip(draw(0, len(FLEETS)).tolist(), draw(1, len(DRIVERS)).tolist(), draw(2, len(MODELS)).tolist(),
                  draw(3, len(DEVICE_VERSIONS)).tolist())
    return [(f"truck_{index}", FLEETS[fleet], DRIVERS[driver], MODELS[model][0], DEVICE_VERSIONS[version], *MODELS[model][1:])
            for index, (fleet, driver, model, version) in zip(range(first, first + count), columns)]


IOT = UseCase("iot", "tsbs-iot", "truck", (READINGS, DIAGNOSTICS), tags=TAGS, tag_rows=truck_tags)
