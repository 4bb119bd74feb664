"""`bench/run scale`: the capacity point past the default run (issue 16). Seeds
BENCH_INVOICES (5000000 for the documented run) through sandbox extractions, then
prints the figures /docs/operations' capacity section rests on: seeding rate and peak
RSS, disk per invoice after a checkpoint (scenario 12), and the listing at that scale
(scenario 3: first page, filtered, changes since a point). Writes nothing: the rows
go into BENCHMARKS.md's notes by hand, with the date.

BENCH_SCALE_DIR=<dir> keeps the seeded data there instead of deleting it, and a later
run with the same directory measures disk and listing again without seeding (at 5M,
seeding is most of the run's half hour)."""

import os
import subprocess
import tempfile
import urllib.parse

import bench


def listing(server, creds, entity_id):
    """(3) at this scale: p99 and requests/s of the three listing queries."""
    auth = f"Authorization: {bench.basic(creds)}"
    _, newest = bench.call(server, "GET", "/v1/invoices?limit=1", creds)
    since = urllib.parse.quote(newest["data"][0]["updated_at"])
    paths = {
        "first page": "/v1/invoices?limit=50",
        "filtered (entity, March 2024, type I)":
            f"/v1/invoices?limit=50&entity_id={entity_id}&issued_from=2024-03-01&issued_to=2024-03-31&type=I",
        "changes since a point": f"/v1/invoices?limit=50&order=updated_at_asc&updated_since={since}",
    }
    out = {}
    for what, path in paths.items():
        bench.call(server, "GET", path, creds)
        runs = bench.repeat(lambda: bench.wrk(server.base + path, header=auth))
        out[what] = (bench.median_of(runs, "p99"), bench.median_of(runs, "rps"))
    return out


def main():
    keep = os.environ.get("BENCH_SCALE_DIR")
    tmp = keep or tempfile.mkdtemp(prefix="cfdi-bench-")
    data_dir = os.path.join(tmp, "main")
    seeded = os.path.exists(os.path.join(data_dir, "cfdi-extract.db"))
    server = bench.Server(data_dir)
    if seeded:
        big = ("big@bench.mx", "bench-password")  # what new_user(..., "Big") made
        bench.log(f"measuring the data seeded before in {data_dir}")
    else:
        big = bench.new_user(data_dir, "Big")
        bench.log(f"seeding about {bench.MILLION} invoices")
        n, seconds = bench.seed(server, big, "M", bench.MILLION)
        seed_peak = server.peak()
        bench.log(f"seeded {n} invoices in {seconds:.0f}s, peak RSS {seed_peak:.0f} MiB")
    server.stop()
    disk = bench.scenario_disk(data_dir)
    n = disk["invoices"]
    server = bench.Server(data_dir)
    _, first = bench.call(server, "GET", "/v1/entities?limit=1", big)
    rows = listing(server, big, first["data"][0]["id"])
    peak = server.peak()
    server.stop()
    if not seeded:
        print(f"| seeding | {n:,} invoices in {seconds:,.0f} s = {n / seconds:,.0f} invoices/s, peak RSS {seed_peak:.0f} MiB |")
    for row in bench.disk_rows(disk)[:1]:
        print(f"| {row[1]} | {row[3]} |")
    for what, (p99, rps) in rows.items():
        print(f"| listing, {what}, {n:,} invoices | p99 {p99:.1f} ms, {rps:,.0f} req/s |")
    print(f"| peak RSS while listing | {peak:.0f} MiB |")
    if not keep:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
