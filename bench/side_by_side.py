"""Scenarios 13 and 14 of bench/bench.py, side by side with what users would run
instead: (13) satcfdi parsing the shared CFDI samples and a sandbox BIG month, against
our end-to-end ingest of the same files; (14) the invoice listing's page query run by a
minimal reference (Python's sqlite3, no HTTP) as a ceiling for `GET /v1/invoices`."""

import collections
import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import subprocess
import time

SATCFDI_PYTHON = os.path.join("target", "venv-satcfdi", "bin", "python")


def _cargo_bench(root, name, *args):
    out = subprocess.run(["cargo", "bench", "--quiet", "--bench", name, "--", *args],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in re.findall(r"^(\w+) (\d+)$", out, re.M)}


def _file_sets(root, tmp):
    """The shared real CFDI, and the BIG month of scenario 5 dumped as files."""
    month = os.path.join(tmp, "month")
    n = _cargo_bench(root, "parse", "BIGA010100AAA", "--dump", month)["dumped"]
    return [("the shared real CFDI samples", os.path.normpath(os.path.join(root, "tests", "fixtures", "cfdi-samples"))),
            (f"a sandbox BIG month ({n:,} CFDI)", month)]


def satcfdi(root, tmp, row):
    """(13) satcfdi's CFDI.from_file over each file set, then our package ingest (the
    e.firma channel's storing path, bench/package.rs) of a ZIP of the same files.
    Rows go through `row(n, what, target, value, ok)`; a missing venv is a skipped row."""
    python = os.path.join(root, SATCFDI_PYTHON)
    if not os.path.exists(python):
        row(13, "satcfdi side by side", "reported", "not measured: no target/venv-satcfdi (bench/run installs it)", False)
        return
    for what, directory in _file_sets(root, tmp):
        out = subprocess.run([python, os.path.join(root, "bench", "satcfdi_parse.py"), directory],
                             capture_output=True, text=True, check=True).stdout
        theirs = json.loads(out)
        ours = _cargo_bench(root, "package", "--dir", directory)
        refused = collections.Counter(error.split(":")[0] for error in theirs["failed"].values())
        why = ", ".join(f"{n} {error}" for error, n in refused.most_common())
        row(13, f"satcfdi `CFDI.from_file`, {what}", "reported",
            f"{theirs['rate']:,.0f} docs/s ({sum(refused.values())} of {theirs['files']:,} refused"
            + (f": {why}" if why else "") + ")", True)
        row(13, "our end-to-end ingest of the same files (one ZIP, e.firma package path)", "reported",
            f"{ours['package_rate']:,.0f} docs/s = {ours['package_rate'] / theirs['rate']:.2f}x satcfdi "
            f"({ours['package_stored']:,} of {ours['package_documents']:,} stored)", True)
    shutil.rmtree(os.path.join(tmp, "month"))  # 22k files, ~180 MB


def _page_sql(root):
    """The first page of `GET /v1/invoices` as src/db/invoices builds it: the same
    columns and 69-B join (read from the source, so the two cannot drift), same filter,
    order and limit + 1."""
    source = open(os.path.join(root, "src", "db", "invoices", "view.rs")).read()

    def const(name):
        text = re.search(rf'const {name}: &str = "(.*?)";', source, re.S).group(1)
        return re.sub(r"\\\n\s*", "", text)  # Rust's line continuations

    # The `columns!` macro's entries (`Name = "sql",`), in order, as its COLUMNS joins them.
    block = re.search(r"columns! \{(.*?)\n\}", source, re.S).group(1)
    columns = ", ".join(re.findall(r'^\s*\w+ = "(.*?)",', block, re.M))
    return (f"SELECT {columns} FROM invoices{const('JOINS')} WHERE org_id = ? AND xml_processed = 1"
            " ORDER BY issued_at DESC, id DESC LIMIT 51")


def _pages(db_path, sql, org_id, seconds, out):
    """Pages per second on one connection: query, then the rows and cursor as one JSON
    text (the service renders each row as an object; this renders it as an array)."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA cache_size = -4096")  # as each of the server's connections
    n, deadline = 0, time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        rows = conn.execute(sql, (org_id,)).fetchall()
        cursor = [rows[49][8], rows[49][0]] if len(rows) > 50 else None
        page = json.dumps({"data": rows[:50], "next_cursor": cursor})
        n += bool(page)
    out.put(n / (time.perf_counter() - start))
    conn.close()


def listing_reference(root, data_dir, email, seconds):
    """(14) The page rate of the reference: on one connection, and on one process per
    core (the server's wrk figure uses both cores too)."""
    db_path = os.path.join(data_dir, "cfdi-extract.db")
    conn = sqlite3.connect(db_path)
    org_id = conn.execute("SELECT org_id FROM users WHERE email = ?", (email,)).fetchone()[0]
    conn.close()
    sql = _page_sql(root)
    result = {}
    for name, procs in (("one", 1), ("cores", os.cpu_count())):
        queue = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=_pages, args=(db_path, sql, org_id, seconds, queue))
                   for _ in range(procs)]
        for w in workers:
            w.start()
        result[name] = sum(queue.get() for _ in workers)
        for w in workers:
            w.join()
    return result


def listing_row(row, reference, ours_rps, invoices):
    cores = os.cpu_count()
    row(14, f"ceiling: the page query of `GET /v1/invoices?limit=50` in Python's sqlite3, no HTTP, "
        f"{invoices:,} invoices", "reported",
        f"{reference['one']:,.0f} pages/s on 1 connection, {reference['cores']:,.0f} on {cores}; "
        f"ours {ours_rps:,.0f} req/s = {ours_rps / reference['cores']:.0%} of it", True)
