"""Independent minimal clients of each database's fastest insert path, for benchmarks/fast_paths.py.

Each one is written without any of the tool's modules, connections or encoders (the standard
library's http.client and NumPy, or the database's own driver used directly where its fast path is
a native protocol: clickhouse_driver, psycopg2, PyMySQL, cassandra-driver, apache-iotdb), writes the
same columns and value sizes as the tool's default workload (a timestamp, a 15-byte device id, a
sequence number, a 2-decimal temperature; devices take turns), and offers: TARGET (the tool's target
it is set against), CONTRACT (when a write counts as done, and until when the rate's clock runs),
reset(), count(), drop() (removes what reset() made: fast_paths.py calls it after the database's
rounds, so nothing of the reference stays), and Writer(worker, batch) with body(index) and send(body): body() makes what send()
takes (the request's bytes over HTTP, SQL text, a driver's columns, prepared statements or tablets;
fast_paths.py times both: each batch is built and sent in the loop).
A Writer whose send() leaves requests in flight also has flush(), which waits for them (the clock runs until it returns).
COUNTABLE_WHEN_ACKNOWLEDGED = True (committed writes): the rate's clock stops at the last acknowledgement, as the tool's
run then waits for no count, and the count (which must be exact for every reference) only checks."""
