"""The berkeleydb module end to end through the CLI, on Debian's real Berkeley DB 5.3 library
(scripts/servers/install-berkeleydb.sh) through the `berkeleydb` bindings. Counts and records are
read back by the test itself with the bindings, in a process of its own after the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from iotdb_bench.simulator.wire import kv_records
from iotdb_bench.simulator.workload.events import EventGenerator
from tests.conftest import REPO_ROOT, assert_verified, downsample_minutes, rows_per_query
from tests.read_side import check_read_side

pytestmark = pytest.mark.berkeleydb

CONFIG = """\
platform: kubernetes
targets:
  bdb:
    module: berkeleydb
    platform: local
    home: env
  bdb-anywhere:
    module: berkeleydb
    home: env
"""

# Read an environment from a process of its own (one environment handle per process with DB_REGISTER):
# every record of every table, in cursor (key) order.
READER = """
import json, sys
from berkeleydb import db
env = db.DBEnv()
env.open(sys.argv[1], db.DB_CREATE | db.DB_INIT_MPOOL | db.DB_INIT_LOCK | db.DB_INIT_LOG | db.DB_INIT_TXN | db.DB_REGISTER | db.DB_RECOVER, 0o600)
out = {}
for name in sys.argv[2:]:
    table = db.DB(env)
    table.open(name + ".db", None, db.DB_BTREE, db.DB_AUTO_COMMIT, 0o600)
    cursor, records = table.cursor(), []
    record = cursor.first()
    while record is not None:
        records.append([record[0].hex(), record[1].hex()])
        record = cursor.next()
    cursor.close()
    out[name] = {"ndata": table.stat()["ndata"], "records": records}
    table.close()
env.close()
print(json.dumps(out))
"""


# Change one record behind the tool's back, from a process of its own: "change" sets the value of the
# device's earliest reading, "delete" removes its newest.
EDITOR = """
import sys
from berkeleydb import db
from iotdb_bench.simulator.wire import kv_records
home, order, action, device, value = sys.argv[1:6]
env = db.DBEnv()
env.open(home, db.DB_CREATE | db.DB_INIT_MPOOL | db.DB_INIT_LOCK | db.DB_INIT_LOG | db.DB_INIT_TXN | db.DB_REGISTER | db.DB_RECOVER, 0o600)
table = db.DB(env)
table.open("events.db", None, db.DB_BTREE, db.DB_AUTO_COMMIT, 0o600)
layout, cursor, found = kv_records.key_layout(order), table.cursor(), []
record = cursor.first()
while record is not None:
    if kv_records.decode_keys([record[0]], layout)[0]["device_id"] == device.encode():
        found.append(record)
    record = cursor.next()
cursor.close()
found.sort(key=lambda record: int(kv_records.decode_keys([record[0]], layout)[0]["timestamp"]))
if action == "change":
    key, packed = found[0]
    changed = kv_records.decode_values([packed]).copy()
    changed["temperature"] = float(value)
    table.put(key, changed.tobytes(), flags=0)
else:
    table.delete(found[-1][0])
table.close()
env.close()
"""


@pytest.fixture(scope="module")
def library():
    """Fails (never skips) without the library and its bindings."""
    try:
        from berkeleydb import db
    except ImportError as error:
        pytest.fail(f"the berkeleydb bindings are missing ({error}); run scripts/servers/install-berkeleydb.sh, then scripts/venv.sh")
    assert db.version()[:2] == (5, 3), db.version()


@pytest.fixture
def bdb(library, tmp_path, cli):
    (tmp_path / "config.yaml").write_text(CONFIG)

    def run(*args: str, target: str = "bdb"):
        return cli(*args, "--config", "config.yaml", "--target", target, timeout=300)

    return run


def stored(home, *tables: str) -> dict[str, dict]:
    import json

    done = subprocess.run([sys.executable, "-c", READER, str(home), *tables], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for table in found.values():
        table["records"] = [(bytes.fromhex(key), bytes.fromhex(value)) for key, value in table["records"]]
    return found


def decoded(records, order: str) -> tuple[np.ndarray, np.ndarray]:
    layout = kv_records.key_layout(order)
    return kv_records.decode_keys([k for k, _ in records], layout), kv_records.decode_values([v for _, v in records])


@pytest.mark.parametrize(("workers", "batch", "order"), [(1, None, "device"), (4, None, "time"), (1, "1000", "time"), (4, "1000", "device")])
def test_insert_modes_store_every_event_in_key_order(bdb, tmp_path, workers, batch, order):
    per_worker = 400 if batch is None else 3000
    args = ["insert", "-w", str(workers), "-r", "1", "--num-inserts", str(per_worker), "--extra-option", f"key_order={order}"]
    reports = assert_verified(bdb(*args, *(["--batch", batch] if batch else [])), [workers * per_worker])
    calls = workers * (per_worker if batch is None else per_worker // 1000)
    assert reports[0]["figures"]["latency"]["calls"] == calls
    assert reports[0]["insert_mode"] == ("single inserts" if batch is None else "puts in one transaction, size 1000") + f", {order}-first keys"
    assert reports[0]["server"]["storage_bytes"] > workers * per_worker * 43  # 27-byte key + 16-byte value, plus the tree
    assert reports[0]["conditions"]["server_version"].startswith("Berkeley DB 5.3.")  # Debian's libdb5.3, as the library names itself

    table = stored(tmp_path / "env", "events")["events"]
    assert table["ndata"] == len(table["records"]) == workers * per_worker
    keys, values = decoded(table["records"], order)
    if order == "device":
        # Seed 004's scan check: the cursor walks each device's readings in time order.
        assert np.all(keys["device_id"][1:] >= keys["device_id"][:-1])
        same_device = keys["device_id"][1:] == keys["device_id"][:-1]
        assert np.all(keys["timestamp"][1:][same_device] > keys["timestamp"][:-1][same_device])
    else:
        assert np.all(keys["timestamp"][1:] >= keys["timestamp"][:-1])
    # The records are exactly the generated events.
    for worker in range(workers):
        expected = EventGenerator(1, worker, 10).batch(0, per_worker)
        mine = np.char.startswith(keys["device_id"], f"w{worker:06d}-".encode())
        by_sequence = np.argsort(values["sequence_number"][mine])
        assert np.array_equal(values["sequence_number"][mine][by_sequence], expected.sequence_number)
        assert np.array_equal(values["temperature"][mine][by_sequence], expected.temperature)
        assert np.array_equal(keys["timestamp"][mine][by_sequence].astype(np.int64), expected.timestamp_ms)
        assert np.array_equal(keys["device_id"][mine][by_sequence], expected.device_id)
        assert np.all(keys["sensor"] == 0)


@pytest.mark.parametrize("order", ["device", "time"])
def test_queries_walk_the_b_tree(bdb, order):
    assert_verified(bdb("insert", "-w", "2", "-r", "1", "--batch", "500", "--num-inserts", "1500", "--devices-per-worker", "7",
                        "--extra-option", f"key_order={order}"), [3000])
    # The query reads the key order stored with the data, whatever the option says.
    result = bdb("query", "-w", "1", "-r", "2", "--extra-option", "key_order=device")
    assert result.query_rows() == rows_per_query(14, downsample_minutes(1500, 7))  # every answer checked and right
    assert f"keys: {order} first" in " ".join(result.results()["runs"][0]["report"]["notes"])


@pytest.mark.parametrize("order", ["device", "time"])
def test_scan_and_answers_then_a_change_and_a_deletion_behind_the_tools_back(bdb, tmp_path, order):
    assert_verified(bdb("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "3000", "--extra-option", f"key_order={order}"),
                    [6000])

    def edit(action: str, device: str, value: float = 0.0) -> None:
        done = subprocess.run([sys.executable, "-c", EDITOR, str(tmp_path / "env"), order, action, device, str(value)], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        assert done.returncode == 0, done.stderr

    check_read_side(lambda task, *args: bdb(task, "-r", "1", *args), lambda device, value: edit("change", device, value),
                    lambda device: edit("delete", device), 3000)


def test_four_tables_prefill_and_steps(bdb, tmp_path):
    assert_verified(bdb("insert", "-w", "4", "-r", "1", "--batch", "1000", "--num-inserts", "2000", "--tables", "multiple",
                        "--prefill", "4000"), [12_000])
    tables = stored(tmp_path / "env", "events0", "events1", "events2", "events3")
    devices = [set(decoded(t["records"], "device")[0]["device_id"].tolist()) for t in tables.values()]
    assert sum(t["ndata"] for t in tables.values()) == 12_000
    assert sum(map(len, devices)) == len(set().union(*devices)) == 40  # a device always in the same table

    # Steps: cleaned before the first only; each step continues the event streams.
    reports = assert_verified(bdb("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "1000", "--steps", "2",
                                  "--tables", "multiple"), [2000, 4000])
    assert [r["verification"]["count_before"] for r in reports] == [0, 2000]

    # A new command with --no-clean generates the same events again: refused, not overwritten.
    result = bdb("insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "1000", "--no-clean", "--tables", "multiple")
    assert result.code == 1
    assert "the event of device w000000-d000000 at 1767225600000 ms is stored already" in result.stderr
    assert sum(t["ndata"] for t in stored(tmp_path / "env", "events0", "events1", "events2", "events3").values()) == 4000


def test_a_killed_process_leaves_a_usable_environment(bdb, tmp_path):
    # A worker-like process (worker 7's events) commits one batch into a new environment, then dies
    # (SIGKILL) inside the next transaction, holding its locks, its pages dirty in the shared cache.
    script = textwrap.dedent("""
        import sys, time
        from iotdb_bench.simulator.workload.events import EventGenerator
        from iotdb_bench.simulator.modules import module_class
        from iotdb_bench.simulator.spec import RunSpec
        spec = RunSpec(run_id="crash", task="insert", target="bdb", module="berkeleydb", workers=1, clean=False,
                       connection={"home": sys.argv[1]}, batch=500)
        module = module_class("berkeleydb")(spec)
        module.connect()
        module.writer.insert_batch(module.writer.prepare_batch(EventGenerator(1, 7, 10).batch(0, 500)))
        txn = module.env.txn_begin()
        for key, value in zip(*module.writer.prepare_batch(EventGenerator(1, 7, 10).batch(500, 500))[0][1:]):
            module.tables["events"].put(key, value, txn=txn)
        print("in transaction", flush=True)
        time.sleep(600)
    """)
    process = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "env")], stdout=subprocess.PIPE, text=True,
                               cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        assert process.stdout.readline().strip() == "in transaction"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()

    # The next run's collector recovers: the committed batch stays, the open transaction is gone.
    reports = assert_verified(bdb("insert", "-w", "2", "-r", "1", "--batch", "1000", "--num-inserts", "1000", "--no-clean"), [2500])
    assert reports[0]["verification"]["count_before"] == 500
    keys, values = decoded(stored(tmp_path / "env", "events")["events"]["records"], "device")
    crashed = np.char.startswith(keys["device_id"], b"w000007-")
    assert sorted(values["sequence_number"][crashed].tolist()) == list(range(500))
    # The crashed process wrote its 500 events outside any insert run of the tool: no record vouches
    # for them, so the answers are not checked, and say why.
    queried = bdb("query", "-w", "1", "-r", "1")
    assert queried.code == 0, queried.stderr
    assert {row["query"]: row["rows"] for row in queried.results()["queries"]} == rows_per_query(30, downsample_minutes(1000))
    assert set(queried.answers().values()) == {("not checked", "the tables held 500 events before the tool's first recorded insert (written by something else)")}


def test_clean_refuses_while_another_process_has_the_environment_open(bdb, tmp_path):
    assert_verified(bdb("insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "1000"), [1000])
    holder = subprocess.Popen([sys.executable, "-c", READER.replace("env.close()", "print('open', flush=True); sys.stdin.read()"),
                               str(tmp_path / "env"), "events"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "open\n"
        result = bdb("insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "1000")
        assert result.code == 1
        assert f"--clean would delete the BerkeleyDB environment env while process(es) {holder.pid} still have it open" in result.stderr
    finally:
        holder.communicate("", timeout=60)  # closes stdin: the holder closes the environment and exits
    assert stored(tmp_path / "env", "events")["events"]["ndata"] == 1000  # nothing was deleted
    assert_verified(bdb("insert", "-w", "1", "-r", "1", "--batch", "1000", "--num-inserts", "1000"), [1000])


def test_refusals_are_one_line(bdb, tmp_path):
    result = bdb("insert", "-w", "1", "-r", "1", "--platform", "kubernetes", target="bdb-anywhere")
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "target 'bdb-anywhere' runs only on the local platform: BerkeleyDB is embedded" in result.stderr
    for mode in ("sql", "uuid", "none"):
        result = bdb("insert", "-w", "1", "-r", "1", "--primary-key", mode)
        assert result.code == 2 and f"module 'berkeleydb' does not support --primary-key {mode}" in result.stderr

    result = bdb("query", "-w", "1", "-r", "1")
    assert result.code == 1 and "there is no BerkeleyDB environment env: insert events first" in result.stderr
    (tmp_path / "env").mkdir()
    result = bdb("query", "-w", "1", "-r", "1")
    assert result.code == 1 and "the BerkeleyDB environment env holds no tables: insert events first" in result.stderr

    assert_verified(bdb("insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100", "--extra-option", "key_order=time"), [100])
    result = bdb("insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100", "--no-clean")
    assert result.code == 1 and "the tables in env have time-first keys: --no-clean needs key_order=time" in result.stderr

    (tmp_path / "env" / "notes.txt").write_text("mine")
    result = bdb("insert", "-w", "1", "-r", "1", "--batch", "100", "--num-inserts", "100")
    assert result.code == 1 and "env holds files that are not BerkeleyDB's (e.g. notes.txt)" in result.stderr
    assert (tmp_path / "env" / "notes.txt").exists()


# -- workloads (issue 10) ------------------------------------------------------------------------

def test_sensors_are_the_keys_sensor_and_measurements_widen_the_value(bdb, tmp_path):
    assert_verified(bdb("insert", "-w", "2", "-r", "1", "--batch", "500", "--num-inserts", "1500", "--sensors", "3", "--measurements", "4",
                        "--order", "random", "--out-of-order", "0.05", "--devices-per-worker", "4"), [3000])
    table = stored(tmp_path / "env", "events")["events"]
    keys, values = decoded(table["records"], "device")
    assert set(keys["sensor"].tolist()) == {0, 1, 2} and len({(k["device_id"], k["sensor"]) for k in keys}) == 2 * 4 * 3
    assert values.dtype.names == ("sequence_number", "temperature", "m1", "m2", "m3")
    for worker in range(2):  # every sequence number once, the late ones included
        mine = np.char.startswith(keys["device_id"], f"w{worker:06d}-".encode())
        assert np.array_equal(np.sort(values["sequence_number"][mine]), np.arange(1500))
    # the queries read one temperature per device: data of several sensors and measurements is refused
    refused = bdb("query", "-w", "1", "-r", "1")
    assert refused.code == 1 and "query refused" in refused.stderr and "--measurements 4, --sensors 3" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_duration_run_and_refused_workloads(bdb):
    result = bdb("insert", "-w", "2", "-r", "1", "--duration", "2", "--batch", "200")
    assert result.code == 0, result.stderr
    assert result.results()["runs"][0]["report"]["verification"]["ok"]
    for args, message in ((["--schema", "light"], "does not support --schema light"),
                          (["--commit-interval", "1"], "does not support --commit-interval: a writer chosen as a deadlock victim")):
        refused = bdb("insert", "-w", "1", *args)
        assert refused.code == 2 and f"module 'berkeleydb' {message}" in refused.stderr


def test_without_its_optional_driver_the_target_says_which_file_to_install(tmp_path):
    """The bindings are optional (requirements-berkeleydb.txt): hidden from the interpreter, the run is
    refused before it starts, in one line that names the file."""
    blocker = (
        "import sys\n"
        "class NoBerkeleyDB:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'berkeleydb':\n"
        "            raise ModuleNotFoundError(\"No module named 'berkeleydb'\")\n"
        "sys.meta_path.insert(0, NoBerkeleyDB())\n"
        "sys.argv = ['run.py', 'insert', '--target', 'berkeleydb', '-w', '1', '-r', '1', '--num-inserts', '100']\n"
        "from iotdb_bench.cli.commands.entry import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") <= 1 and "Traceback" not in done.stderr
    assert "requirements-berkeleydb.txt" in done.stderr
    assert not (tmp_path / "results").exists()


def test_a_run_leaves_its_tables_and_one_log_file(bdb, tmp_path):
    reports = assert_verified(bdb("insert", "-w", "2", "-r", "1", "--num-inserts", "2000", "--batch", "100"), [4000])
    home = tmp_path / "env"
    left = sorted(path.name for path in home.iterdir())
    assert not [name for name in left if name.startswith("__db.0")], left  # the shared regions (one is the cache's size) are gone
    assert len([name for name in left if name.startswith("log.")]) == 1, left  # the log recovery still needs, no older one
    # the storage figure, read before the tidying, counted the log's blocks beside the B-tree
    assert reports[0]["server"]["storage_bytes"] > (home / "events.db").stat().st_size + 100_000
    # the next process creates the regions again
    assert bdb("query", "-r", "1").code == 0
