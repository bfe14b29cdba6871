"""The berkeleydb module's schema and counting: --clean deletes the environment's files (refused while
another process has it open), counts are the B-trees' record counts, storage the B-tree and log files,
and after the run a checkpoint removes the log files recovery no longer needs."""

from __future__ import annotations

from iotdb_bench.simulator.modules.base import ModuleError, SchemaRole
from iotdb_bench.simulator.modules.berkeleydb.environment import environment_file, registered_processes
from iotdb_bench.simulator.modules.berkeleydb.options import BerkeleydbRole


class BerkeleydbSchema(BerkeleydbRole, SchemaRole):
    def setup(self) -> None:
        if not self.spec.clean:
            return
        module = self.module
        module.close()
        others = registered_processes(module.home)
        if others:
            raise ModuleError(f"--clean would delete the BerkeleyDB environment {module.home} while process(es) "
                              f"{', '.join(map(str, others))} still have it open: stop them first")
        for path in module.home.iterdir():
            if environment_file(path) and path.name != "DB_CONFIG":
                path.unlink()
        module.open_environment()
        module.env.txn_checkpoint()

    def server_version(self) -> str:
        # Embedded: the library the bindings were built against is the database engine.
        return str(self.module.db.DB_VERSION_STRING)

    def count(self) -> int:
        return sum(table.stat()["ndata"] for table in self.module.tables.values())

    def server_counters(self) -> dict[str, int] | None:
        # BerkeleyDB counts transactions, not records; the record count read by the library stands in.
        return {"rows": self.count()}

    def storage_bytes(self) -> int | None:
        module = self.module
        module.env.memp_sync()  # pages still in the shared cache reach the files first
        tables = sum((module.home / f"{name}.db").stat().st_size for name in module.tables)
        # A log file is created at its full size and filled as the log grows: the blocks it holds count.
        return tables + sum(path.stat().st_blocks * 512 for path in module.home.glob("log.*"))

    def tidy_after_run(self) -> None:
        """A checkpoint, then every log file recovery no longer needs is removed (the current one
        stays); the last process out also removes the shared regions (their largest file is the size
        of the cache): the next process to open the environment creates them again."""
        module, db = self.module, self.module.db
        module.env.txn_checkpoint(0, 0, db.DB_FORCE)
        module.env.log_archive(db.DB_ARCH_REMOVE)
        module.close()
        if not registered_processes(module.home):
            db.DBEnv().remove(str(module.home))
