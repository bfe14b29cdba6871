"""Where the test time went, and what failed: per test file, the seconds its tests took (set-up
included), then every failed or erroring test with its message on one line, from the JUnit XML
files pytest wrote (scripts/test.sh). Printed last, so the end of CI's output names what failed in
either half (the cluster's half prints first and scrolls out of a tail).
Usage: python scripts/test_times.py FILE.xml..."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter

TOP = 15
# A message's lines joined with ' | ', its beginning and its end: a fixture's failure says its cause
# after a heading line, an assertion's own message may end with what a command printed last.
MESSAGE_CHARS = 800


def read_cases(paths: list[str]) -> list[ElementTree.Element]:
    cases = []
    for path in paths:
        try:
            cases.extend(ElementTree.parse(path).getroot().iter("testcase"))
        except (OSError, ElementTree.ParseError) as error:
            print(f"(no test results from {path}: {error})")
    return cases


def file_name(case: ElementTree.Element) -> str:
    parts = case.get("classname", "?").split(".")  # module path, then a test class if any
    return "/".join(part for part in parts if not part[:1].isupper()) + ".py"


def file_times(cases: list[ElementTree.Element]) -> Counter:
    times: Counter = Counter()
    for case in cases:
        times[file_name(case)] += float(case.get("time") or 0)
    return times


def shortened(message: str) -> str:
    """At most about MESSAGE_CHARS: the first two thirds and the last third, with ' ... ' between."""
    if len(message) <= MESSAGE_CHARS:
        return message
    head = MESSAGE_CHARS * 2 // 3
    return f"{message[:head]} ... {message[-(MESSAGE_CHARS - head):]}"


def problems(cases: list[ElementTree.Element]) -> list[str]:
    """'FAILED file::test: message' for every failure or error (an error at set-up and a failure of
    the same test are two lines, as pytest counts them). A message the line before gave already (the
    error of a shared fixture, repeated for each of its tests) is not given again."""
    lines = []
    previous = None
    for case in cases:
        for kind in ("failure", "error"):
            for element in case.findall(kind):
                text = [line.strip() for line in (element.get("message") or element.text or "").splitlines()]
                message = shortened(" | ".join(line for line in text if line)) or "(no message)"
                label = "FAILED" if kind == "failure" else "ERROR"
                said = "(the same as above)" if message == previous else message
                lines.append(f"{label} {file_name(case)}::{case.get('name', '?')}: {said}")
                previous = message
    return lines


def main(paths: list[str]) -> None:
    cases = read_cases(paths)
    times = file_times(cases)
    if times:
        print(f"==== test seconds per file (top {TOP} of {len(times)}; all files: {sum(times.values()):,.0f} s of test time)")
        for name, seconds in times.most_common(TOP):
            print(f"{seconds:8.0f} s  {name}")
    failed = problems(cases)
    if failed:
        print(f"==== failed tests, both halves ({len(failed)})")
        print("\n".join(failed))


if __name__ == "__main__":
    main(sys.argv[1:])
