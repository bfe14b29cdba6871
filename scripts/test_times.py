"""Where the test time went: per test file, the seconds its tests took (set-up included), from the
JUnit XML files pytest wrote (scripts/test.sh). Usage: python scripts/test_times.py FILE.xml..."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter

TOP = 15


def file_times(paths: list[str]) -> Counter:
    times: Counter = Counter()
    for path in paths:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            print(f"(no test times from {path}: {error})")
            continue
        for case in root.iter("testcase"):
            parts = case.get("classname", "?").split(".")  # module path, then a test class if any
            module = [part for part in parts if not part[:1].isupper()]
            times["/".join(module) + ".py"] += float(case.get("time") or 0)
    return times


def main(paths: list[str]) -> None:
    times = file_times(paths)
    if not times:
        return
    print(f"==== test seconds per file (top {TOP} of {len(times)}; all files: {sum(times.values()):,.0f} s of test time)")
    for name, seconds in times.most_common(TOP):
        print(f"{seconds:8.0f} s  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
