#!/usr/bin/env python3
"""Benchmarks of cfdi-extract: builds nothing itself (bench/run does), starts the release
binary on temp data dirs, seeds it through the real ingestion path (sandbox extractions),
runs each scenario RUNS times, prints a table and writes BENCHMARKS.md.

Every target is a ratio or a bound measured side by side in the same run; every figure
is the median of the runs. Nothing here asserts timings in the test suite.
"""

import atexit
import base64
import http.client
import json
import os
import urllib.parse
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone

import accountant
import deliveries
import list_69b
import side_by_side
from status_fake import StatusFake

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# BENCH_BIN: another binary to measure (e.g. a copy of the one before a change).
BIN = os.environ.get("BENCH_BIN") or os.path.join(ROOT, "target", "release", "cfdi-extract")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
DURATION = int(os.environ.get("BENCH_SECONDS", "8"))
MILLION = int(os.environ.get("BENCH_INVOICES", "1000000"))
BIG_DAYS_PER_ENTITY = 500  # ~500 invoices a day -> ~250k per entity
STATUS_INVOICES = int(os.environ.get("BENCH_STATUS_INVOICES", "2000"))
# `bench/run engines`: invoices seeded before its listing rows.
ENGINE_INVOICES = int(os.environ.get("BENCH_ENGINE_INVOICES", "100000"))


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --- the service -------------------------------------------------------------------


SERVERS = []


@atexit.register
def stop_all():
    """A failed run must not leave a server seeding in the background."""
    for server in SERVERS:
        if server.proc.poll() is None:
            server.proc.kill()


class Server:
    def __init__(self, data_dir, *extra, binary=None):
        self.data_dir = data_dir
        args = [binary or BIN, "serve", "--data-dir", data_dir, "--port", "0", "--sim-latency", "0ms",
                "--webhook-timeout", "5s", *extra]
        # Warnings and errors only (RUST_LOG is the server's default), kept beside the
        # data directory so a failed run can be explained.
        self.log_path = data_dir.rstrip("/") + ".log"
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(self.log_path, "a"), text=True)
        SERVERS.append(self)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on http://([\d.]+):(\d+)", line)
        if not m:
            raise RuntimeError(f"server did not start: {line!r}")
        self.host, self.port = m.group(1), int(m.group(2))
        self.base = f"http://{self.host}:{self.port}"
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def status(self, field):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # MiB
        return 0.0

    def rss(self):
        return self.status("VmRSS")

    def peak(self):
        return self.status("VmHWM")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def cli(data_dir, *args, stdin=None):
    out = subprocess.run([BIN, *args, "--data-dir", data_dir], input=stdin, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def new_user(data_dir, name):
    org = cli(data_dir, "org", "create", name)
    email = f"{name.lower()}@bench.mx"
    cli(data_dir, "user", "create", "--org", org, "--email", email, "--password-stdin", stdin="bench-password\n")
    return email, "bench-password"


def basic(creds):
    return "Basic " + base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()


def call(server, method, path, creds=None, body=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if creds:
        headers["Authorization"] = basic(creds)
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    res = conn.getresponse()
    data = res.read()
    conn.close()
    return res.status, (json.loads(data) if data else None)


def wait_for(predicate, timeout, what):
    """Polls `predicate` until it is truthy; `what` may be a callable, so the error
    can say how far it got."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what() if callable(what) else what}")


def create_entity(server, creds, tax_id):
    status, body = call(server, "POST", "/v1/entities", creds,
                        {"tax_id": tax_id, "name": f"Bench {tax_id}", "ciec_password": "12345678"})
    assert status == 201, body
    eid = body["id"]
    wait_for(lambda: call(server, "GET", f"/v1/entities/{eid}", creds)[1]["credential_status"] == "valid", 30, "validation")
    return eid


def extract(server, creds, entity_id, day_from, day_to):
    status, body = call(server, "POST", "/v1/extractions", creds, {
        "entity_id": entity_id,
        "options": {"period": {"from": day_from, "to": day_to}, "download_type": "issued"}})
    assert status == 201, body
    return body["id"]


def wait_extraction(server, creds, xid, timeout=3600):
    def done():
        _, e = call(server, "GET", f"/v1/extractions/{xid}", creds)
        return e if e["status"] in ("finished", "failed") else None
    e = wait_for(done, timeout, "extraction")
    assert e["status"] == "finished", (e, f"server log: {server.log_path}")
    return e


def parse_ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


# --- load generation -----------------------------------------------------------------


def to_ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    n, unit = float(m.group(1)), m.group(2)
    return n / 1000 if unit == "us" else n if unit == "ms" else n * 1000


def wrk(url, conns=64, seconds=DURATION, header=None, script=None):
    args = ["wrk", "-t2", f"-c{conns}", f"-d{seconds}s", "--latency", url]
    if header:
        args[1:1] = ["-H", header]
    if script:
        args[1:1] = ["-s", script]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    pct = dict(re.findall(r"^\s+(\d+)%\s+([\d.]+\w+)", out, re.M))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": to_ms(pct["50"]), "p99": to_ms(pct["99"]),
            "errors": int(non2xx.group(1)) if non2xx else 0}


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def repeat(fn):
    """RUNS runs of `fn`, each logged as it ends, so a run that fails later still
    leaves its figures in the log."""
    runs = []
    for _ in range(RUNS):
        runs.append(fn())
        log(f"  run {len(runs)}: {json.dumps(runs[-1], default=str)[:300]}")
    return runs


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# --- scenarios ---------------------------------------------------------------------


def month_ingest(server, creds, i):
    """A new BIG entity's month through a sandbox extraction: invoices/s end to end."""
    eid = create_entity(server, creds, f"BIGA0101{i:02d}AAA")
    e = wait_extraction(server, creds, extract(server, creds, eid, "2026-03-01", "2026-03-31"))
    elapsed = parse_ts(e["finished_at"]) - parse_ts(e["started_at"])
    return {"rate": e["invoices_processed"] / elapsed, "n": e["invoices_processed"]}


def scenario_ingest(data_dir):
    """(5) End-to-end ingest rate of a BIG entity's month vs the raw parse rate."""
    server = Server(data_dir)
    creds = new_user(data_dir, "Ingest")
    results = [month_ingest(server, creds, i) for i in range(RUNS)]
    server.stop()
    parse = subprocess.run(["cargo", "bench", "--quiet", "--bench", "parse", "--", "BIGA010100AAA"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    parse_rate = float(re.search(r"parse_rate (\d+)", parse).group(1))
    # (5b) The e.firma channel's package ingest: a 20,000-CFDI ZIP through the same
    # storing path its extractions use (bench/package.rs).
    package = subprocess.run(["cargo", "bench", "--quiet", "--bench", "package", "--", "BIGP010101AAA"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    package_rate = float(re.search(r"package_rate (\d+)", package).group(1))
    package_mib = int(re.search(r"package_bytes (\d+)", package).group(1)) / 2**20
    # (5c) CFDI de Retenciones through their ingest path (bench/retentions.rs).
    retentions = subprocess.run(["cargo", "bench", "--quiet", "--bench", "retentions"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout
    # (5d) Seal verification (bench/seal.rs): the samples and a sandbox month, and the
    # sandbox's own sealing and stamping.
    seal = subprocess.run(["cargo", "bench", "--quiet", "--bench", "seal"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    seal_figure = lambda name: float(re.search(name + r" (\d+)", seal).group(1))
    return {"ingest": median_of(results, "rate"), "n": results[0]["n"], "parse": parse_rate,
            "package": package_rate, "package_mib": package_mib,
            "seal_samples": seal_figure("seal_samples_rate"), "seal_sandbox": seal_figure("seal_sandbox_rate"),
            "seal_month": int(seal_figure("seal_sandbox_month")),
            "sandbox_render": seal_figure("sandbox_render_rate"),
            "sandbox_sealing": seal_figure("sandbox_seal_and_stamp_rate"),
            "retentions": float(re.search(r"retention_rate (\d+)", retentions).group(1)),
            "retention_docs": int(re.search(r"retention_documents (\d+)", retentions).group(1))}


class WalWatch:
    """The largest the server's WAL file grew while it ran, sampled twice a second, so
    each run says whether the checkpoints kept it bounded."""

    def __init__(self, data_dir):
        self.path, self.largest, self.done = os.path.join(data_dir, "cfdi-extract.db-wal"), 0, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while not self.done.wait(0.5):
            try:
                self.largest = max(self.largest, os.path.getsize(self.path))
            except OSError:
                pass

    def stop(self):
        """The largest size seen, in MiB."""
        self.done.set()
        self.thread.join()
        return self.largest / 2**20


def sat_calls():
    """(16) Calls to the SAT in one e.firma extraction: the integration test that runs one
    through the binary against the fake web service (tests/common/fake_sat_ws) compares
    the server's `cfdi_extract_sat_calls_total` with what the fake received and prints
    them. None when it cannot run."""
    name = "flows::efirma_ws::efirma_extraction_through_the_fake_service_stores_every_document_once"
    out = subprocess.run(["cargo", "test", "--quiet", "--locked", "--test", "it", name, "--", "--exact", "--nocapture"],
                         cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"sat calls per extraction: documents=(\d+) (.*)", out.stdout)
    if out.returncode != 0 or not m:
        log(f"SAT calls not counted: {(out.stderr or out.stdout).strip()[-300:]}")
        return None
    calls = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
    return {"documents": int(m.group(1)), **calls}


def sat_calls_row(calls):
    what = ("SAT calls in one e.firma extraction through the fake web service (a metadata and a CFDI request, "
            "each checked until ready)")
    if calls is None:
        return (16, what, "one sign-in per token", "not measured (see the log)", False)
    others = calls["query"] + calls["verify"] + calls["download"]
    return (16, what + f", {calls['documents']} documents", "one sign-in per token",
            f"{calls['authenticate']} authentication for {others} other calls ({calls['query']} requests, "
            f"{calls['verify']} checks, {calls['download']} downloads)", calls["authenticate"] <= 1)


def seed(server, creds, prefix, total):
    """Loads about `total` invoices through sandbox extractions of BIG entities."""
    entities = max(1, round(total / (BIG_DAYS_PER_ENTITY * 500)))
    days = max(1, round(total / entities / 510))
    start = time.time()
    # Validate every entity before any long extraction takes the provider workers.
    ids = [create_entity(server, creds, f"BIG{prefix}{i:06d}AAA") for i in range(entities)]
    first = datetime(2024, 1, 1).toordinal()
    last = datetime.fromordinal(first + days - 1).strftime("%Y-%m-%d")
    jobs = [extract(server, creds, eid, "2024-01-01", last) for eid in ids]
    processed = sum(wait_extraction(server, creds, x)["invoices_processed"] for x in jobs)
    return processed, time.time() - start


def cold_auth(server, data_dir, n=64):
    """(4) n connections start at once with the same, never-verified credentials."""
    creds = new_user(data_dir, f"Cold{time.time_ns()}")
    barrier = threading.Barrier(n)
    latencies, statuses = [], []

    def one():
        conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
        conn.connect()
        barrier.wait()
        t = time.perf_counter()
        conn.request("GET", "/v1/webhooks", headers={"Authorization": basic(creds)})
        res = conn.getresponse()
        res.read()
        latencies.append((time.perf_counter() - t) * 1000)
        statuses.append(res.status)
        conn.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s == 200 for s in statuses), statuses
    return {"p99": percentile(latencies, 99), "max": max(latencies)}


def send_events(server, creds, rate, more):
    """Creates entities (one entity.update event each) at `rate` per second while
    `more(sent)`; returns how many were sent."""
    start, sent = time.time(), 0
    while more(sent):
        status, body = call(server, "POST", "/v1/entities", creds,
                            {"tax_id": f"LAT{time.time_ns() % 10**9:09d}", "name": "x", "ciec_password": "12345678"})
        if status != 201:  # no event then: say why instead of waiting for it
            log(f"an entity was not created: {status} {body}")
            continue
        sent += 1
        pause = start + sent / rate - time.time()
        if pause > 0:
            time.sleep(pause)
    return sent


def webhook_latency(server, creds, receiver, rate=100, seconds=8):
    """(6a) Commit-to-arrival latency of entity.update events at `rate` events/s."""
    receiver.take()
    total = send_events(server, creds, rate, lambda sent: sent < rate * seconds)
    wait_for(lambda: receiver.count() >= total, 120, lambda: f"deliveries ({receiver.count()} of {total})")
    lat = [(arrived - created) * 1000 for arrived, created, _ in receiver.take()]
    return {"p50": percentile(lat, 50), "p99": percentile(lat, 99)}


def latency_during_fanout(server, fan_creds, fan_receiver, creds, receiver, rate=100):
    """(6d) (6a) for one organization while another's fan-out (6b) runs:
    events are sent from the fan-out's first arrival to its last, and only those
    committed before its last arrival count."""
    receiver.take()
    fan = {}
    thread = threading.Thread(target=lambda: fan.update(webhook_fanout(server, fan_creds, fan_receiver)))
    thread.start()
    wait_for(lambda: fan_receiver.count() > 0 or not thread.is_alive(), 600, "the fan-out's first delivery")
    start = time.time()
    total = send_events(server, creds, rate, lambda _: thread.is_alive())
    sent_rate = total / (time.time() - start)
    thread.join()
    if "last" not in fan:
        raise RuntimeError("the fan-out failed (its traceback is above)")
    wait_for(lambda: receiver.count() >= total, 120, lambda: f"deliveries ({receiver.count()} of {total})")
    lat = [(arrived - created) * 1000 for arrived, created, _ in receiver.take() if created <= fan["last"]]
    return {"p50": percentile(lat, 50), "p99": percentile(lat, 99), "n": len(lat), "sent_rate": sent_rate,
            "fanout": fan["rate"]}


def webhook_fanout(server, creds, receiver, days=20):
    """(6b) One extraction's `invoice.created` events (about 13,800: a BIG entity's 20
    days) to one receiver: deliveries per second at the receiver, from the first arrival
    to the last. The extraction lists the period first and stores its documents after,
    committing their events batch by batch, so deliveries start while the last batches
    are still being stored: where storing is slower than delivering (PostgreSQL, 2026-11-29)
    the figure is the storing's pace (the first rounds created 10,000 entities instead,
    and their creation and validation bounded the figure)."""
    entity = create_entity(server, creds, f"BIGF{time.time_ns() // 1000 % 10**6:06d}AAA")
    last = datetime.fromordinal(datetime(2024, 1, 1).toordinal() + days - 1).strftime("%Y-%m-%d")
    receiver.take()
    started = time.time()  # the entity's own events were made before this
    n = wait_extraction(server, creds, extract(server, creds, entity, "2024-01-01", last))["invoices_processed"]
    wait_for(lambda: receiver.count() >= n, 600, lambda: f"fan-out deliveries ({receiver.count()} of {n})")
    time.sleep(1)  # let stragglers land so the next run starts clean
    arrivals = sorted(a for a, created, _ in receiver.take() if created >= started)
    return {"rate": len(arrivals) / (arrivals[-1] - arrivals[0]), "last": arrivals[-1], "n": len(arrivals)}


def console_first_page(server, creds):
    """(9) The console's first page of invoices in Chromium (bench/console.js), in ms; None
    when node, playwright-core or chromium is missing (exit 3); a failure is reported."""
    try:
        out = subprocess.run(["node", os.path.join(ROOT, "bench", "console.js"), server.base, *creds, "6"],
                             capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        out = None
    if out is None or out.returncode == 3:
        log(f"console figure skipped: {out.stderr.strip() if out else 'no node'}")
        return None
    log(out.stdout.strip() or out.stderr.strip())
    figures = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out.stdout)}
    return figures if out.returncode == 0 and "max" in figures else {"error": (out.stderr.strip() or "?").splitlines()[0][:300]}


def count_pages(server, creds, path):
    """How many items `path` lists, following its cursors."""
    n, cursor = 0, ""
    while True:
        _, page = call(server, "GET", f"{path}&limit=500" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else ""), creds)
        n += len(page["data"])
        cursor = page.get("next_cursor")
        if not cursor:
            return n


def scenario_status(tmp):
    """(15) SAT status checks a second against a local fake (bench/status_fake.py, the
    recorded answer): STATUS_INVOICES invoices seeded with checks off, then, each run on
    a fresh copy of that data directory, the server at --sat-status-rate 1000 (the most
    it takes) checks every one of them. The rate is the fake's count of checks over the
    span between its first and its last; the invoices the API then shows checked are
    counted too, so a check that reached the fake but was not kept would show."""
    seeded = os.path.join(tmp, "status")
    server = Server(seeded, "--sat-status-rate", "0")
    creds = new_user(seeded, "Status")
    n, _ = seed(server, creds, "S", STATUS_INVOICES)
    server.stop()

    def one():
        data = os.path.join(tmp, f"status-{time.time_ns()}")
        shutil.copytree(seeded, data)
        fake = StatusFake()
        server = Server(data, "--sat-status-url", fake.url, "--sat-status-rate", "1000")
        try:
            # Every invoice once; then nothing is due for days (an active answer).
            wait_for(lambda: len({u for _, u in fake.checks}) >= n, 1800, lambda: f"{len(fake.checks)} of {n} checks")
            times = [t for t, _ in fake.checks]
            checked = count_pages(server, creds, "/v1/invoices?sat_state=active")
            rss = server.peak()
        finally:
            server.stop()
            fake.stop()
        shutil.rmtree(data, ignore_errors=True)
        return {"n": n, "rate": (len(times) - 1) / (times[-1] - times[0]), "checked": checked,
                "refused": fake.refused, "peak": rss}
    return repeat(one)


def status_rows(status):
    """Scenario 15's row: checks a second, and every invoice checked and kept."""
    n, checked, refused = status[0]["n"], min(r["checked"] for r in status), max(r["refused"] for r in status)
    rate = median_of(status, "rate")
    return [(15, f"SAT status checks against a local fake speaking the recorded SOAP (bench/status_fake.py), "
             f"{n:,} seeded invoices, `--sat-status-rate 1000`; peak RSS {median_of(status, 'peak'):.0f} MiB",
             ">= 100 checks/s, every invoice kept", f"{rate:,.0f} checks/s ({checked:,} of {n:,} kept; {refused} refused)",
             rate >= 100 and checked == n and refused == 0)]


def scenario_disk(data_dir):
    """(12) Bytes per invoice on disk, database + WAL, with the server stopped (closing
    its last connection checkpoints; a TRUNCATE checkpoint here makes sure), and the real
    CFDI samples' stored/raw ratio through the codec documents are stored with
    (bench/codec.rs)."""
    db = os.path.join(data_dir, "cfdi-extract.db")
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    invoices = con.execute("SELECT count(*) FROM invoices WHERE xml_processed = 1").fetchone()[0]
    try:  # the breakdown needs a Python whose SQLite has dbstat
        tables = con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:
        tables = []
    con.close()
    size = sum(os.path.getsize(f) for f in (db, db + "-wal") if os.path.exists(f))
    out = subprocess.run(["cargo", "bench", "--quiet", "--bench", "codec"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    figures = dict(re.findall(r"^(samples\w*) ([\d.]+)$", out, re.M))
    log("disk by table and index (bytes per invoice): "
        + ", ".join(f"{name} {pages / invoices:,.0f}" for name, pages in tables[:8]))
    return {"invoices": invoices, "bytes": size, "samples": int(figures["samples"]),
            "raw": int(figures["samples_raw"]), "stored": int(figures["samples_stored"]),
            "whole": int(figures["samples_stored_whole"]), "plain": int(figures["samples_stored_plain"])}


def disk_rows(disk):
    per = disk["bytes"] / disk["invoices"]
    return [
        (12, f"disk: database + WAL after a checkpoint, {disk['invoices']:,} invoices", "<= 6,000 B per invoice",
         f"{per:,.0f} B per invoice ({disk['bytes'] / 2**30:.2f} GiB)", per <= 6000),
        (12, f"disk: the {disk['samples']} real CFDI samples' XML as stored (the dictionary was trained on them)",
         "reported", f"{disk['stored']:,} of {disk['raw']:,} B = {disk['stored'] / disk['raw']:.0%} "
         f"({disk['whole'] / disk['raw']:.0%} with certificates left in, {disk['plain'] / disk['raw']:.0%} also without the "
         "dictionary)", True),
    ]


def main():
    machine = {
        "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
        "cores": os.cpu_count(),
        "memory": f"{round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GiB",
        "kernel": platform.release(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    log(f"machine: {machine}")
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    rows, extra_rows = [], []

    log("scenario 5: ingest")
    ingest = scenario_ingest(os.path.join(tmp, "ingest"))
    log("scenario 15: SAT status checks against a local fake")
    status = scenario_status(tmp)
    log("scenario 16: SAT calls in one e.firma extraction")
    calls = sat_calls()
    log("scenario 17: the 69-B list at the cap")
    list_rows = list_69b_rows()
    log("scenario 18: the background seal verifier")
    seal_rows = seals_rows(scenario_seals(tmp))
    log("scenario 13: satcfdi side by side")
    side_by_side.satcfdi(ROOT, tmp, lambda *r: extra_rows.append(r))

    data_dir = os.path.join(tmp, "main")
    server = Server(data_dir)
    time.sleep(1)
    idle_rss = server.rss()
    empty = new_user(data_dir, "Empty")
    small = new_user(data_dir, "Small")
    big = new_user(data_dir, "Big")
    small_entity = create_entity(server, small, "BIGS010101AAA")
    small_n = wait_extraction(server, small, extract(server, small, small_entity, "2025-06-01", "2025-06-02"))["invoices_processed"]
    log(f"seeding about {MILLION} invoices")
    wal = WalWatch(data_dir)
    big_n, seed_seconds = seed(server, big, "M", MILLION)
    seed_wal, seed_peak = wal.stop(), server.peak()
    log(f"seeded {big_n} invoices in {seed_seconds:.0f}s (WAL at most {seed_wal:.0f} MiB, peak RSS {seed_peak:.0f} MiB); "
        "restarting so peak RSS covers only the scenarios")
    server.stop()
    disk = scenario_disk(data_dir)
    server = Server(data_dir)
    _, first = call(server, "GET", "/v1/entities?limit=1", big)
    big_entity = first["data"][0]["id"]

    log("scenario 1: /up")
    up = repeat(lambda: wrk(server.base + "/up"))
    log("scenario 2: trivial authenticated route")
    call(server, "GET", "/v1/webhooks", empty)  # warm the credential cache
    trivial = repeat(lambda: wrk(server.base + "/v1/webhooks", header=f"Authorization: {basic(empty)}"))
    log("scenario 3: invoice listing")
    call(server, "GET", "/v1/invoices", big)
    call(server, "GET", "/v1/invoices", small)
    list_big = repeat(lambda: wrk(server.base + "/v1/invoices?limit=50", header=f"Authorization: {basic(big)}"))
    list_small = repeat(lambda: wrk(server.base + "/v1/invoices?limit=50", header=f"Authorization: {basic(small)}"))
    filt = f"/v1/invoices?limit=50&entity_id={big_entity}&issued_from=2024-03-01&issued_to=2024-03-31&type=I"
    list_filtered = repeat(lambda: wrk(server.base + filt, header=f"Authorization: {basic(big)}"))
    # Incremental reads: the changes since a point inside the seeding, oldest first.
    _, newest = call(server, "GET", "/v1/invoices?limit=1", big)
    since = urllib.parse.quote(newest["data"][0]["updated_at"])
    sync = f"/v1/invoices?limit=50&order=updated_at_asc&updated_since={since}"
    list_sync = repeat(lambda: wrk(server.base + sync, header=f"Authorization: {basic(big)}"))
    log("scenario 14: the listing's page query without the service")
    ceiling = side_by_side.listing_reference(ROOT, data_dir, big[0], DURATION)
    log("scenario 9: the console's first page of invoices")
    console = console_first_page(server, big)
    log("scenario 4: cold authentication")
    cold = repeat(lambda: cold_auth(server, data_dir))
    cold_rss = server.rss()
    log("scenario 6: webhooks")
    receiver, other_receiver = deliveries.Receiver(ROOT), deliveries.Receiver(ROOT)
    hooks, other = new_user(data_dir, "Hooks"), new_user(data_dir, "Other")
    # One webhook for every run, so each event is exactly one delivery.
    call(server, "POST", "/v1/webhooks", hooks, {"url": receiver.url, "events": ["entity.update", "invoice.created"]})
    call(server, "POST", "/v1/webhooks", other, {"url": other_receiver.url, "events": ["entity.update"]})
    invoice = call(server, "GET", "/v1/invoices?limit=1", big)[1]["data"][0]
    # A failure here is reported in the table rather than losing the whole run.
    try:
        alone = repeat(lambda: deliveries.receiver_alone(receiver, invoice, wrk))
        latency = repeat(lambda: webhook_latency(server, hooks, receiver))
        fanout = repeat(lambda: webhook_fanout(server, hooks, receiver))
        during = repeat(lambda: latency_during_fanout(server, hooks, receiver, other, other_receiver))
        webhook_error = None
    except Exception as e:  # noqa: BLE001 - any failure becomes the row's text
        webhook_error = f"{type(e).__name__}: {e}"
        kept = os.path.join(ROOT, "target", "bench-scenario6.log")  # the temp dir is removed at the end
        shutil.copy(server.log_path, kept)
        log(f"scenario 6 failed: {webhook_error} (server log kept in {kept})")
    peak = server.peak()

    log("scenario 8: trivial route while another client sends wrong passwords")
    wrong = basic((empty[0], "wrong-password"))

    def under_attack():
        attacker = subprocess.Popen(["wrk", "-t1", "-c16", f"-d{DURATION + 2}s", "-H", f"Authorization: {wrong}",
                                     server.base + "/v1/webhooks"], stdout=subprocess.DEVNULL)
        time.sleep(1)
        result = wrk(server.base + "/v1/webhooks", header=f"Authorization: {basic(empty)}")
        attacker.wait()
        return result
    attacked = repeat(under_attack)
    log("scenarios 10 and 11: exports and PDFs")
    accountant_rows = []
    accountant.scenario(server, big, ROOT, repeat, median_of, lambda *r: accountant_rows.append(r))
    server.stop()

    up_rps, trivial_rps = median_of(up, "rps"), median_of(trivial, "rps")
    big_p99, small_p99 = median_of(list_big, "p99"), median_of(list_small, "p99")
    binary_mib = os.path.getsize(BIN) / 2**20

    def row(n, what, target, value, ok):
        rows.append((n, what, target, value, "met" if ok else "MISSED"))

    row(1, "`GET /up`, 64 connections", "reference", f"{up_rps:,.0f} req/s", True)
    row(2, "authenticated `GET /v1/webhooks` (empty org)", ">= 85% of (1)",
        f"{trivial_rps:,.0f} req/s = {trivial_rps / up_rps:.0%}", trivial_rps >= 0.85 * up_rps)
    row(3, f"`GET /v1/invoices?limit=50`, {big_n:,} invoices, p99", "< 25 ms", f"{big_p99:.1f} ms", big_p99 < 25)
    row(3, f"same with {small_n:,} invoices, p99 (1M within 1.5x)", "ratio <= 1.5",
        f"{small_p99:.1f} ms, ratio {big_p99 / small_p99:.2f}", big_p99 <= 1.5 * small_p99)
    row(3, f"filtered (entity_id + issued_from/to + type), {big_n:,} invoices, p99", "< 25 ms",
        f"{median_of(list_filtered, 'p99'):.1f} ms ({median_of(list_filtered, 'rps'):,.0f} req/s)",
        median_of(list_filtered, "p99") < 25)
    row(3, f"changes since a point (updated_since + order=updated_at_asc), {big_n:,} invoices, p99", "< 25 ms",
        f"{median_of(list_sync, 'p99'):.1f} ms ({median_of(list_sync, 'rps'):,.0f} req/s)",
        median_of(list_sync, "p99") < 25)
    row(4, "cold auth: 64 connections at once, same new credentials, p99", "< 250 ms",
        f"{median_of(cold, 'p99'):.0f} ms", median_of(cold, "p99") < 250)
    row(4, "RSS after the cold-auth bursts", "< 200 MB", f"{cold_rss:.0f} MiB", cold_rss < 200)
    row(5, f"ingest: BIG month ({ingest['n']:,} invoices), end to end", ">= 5,000 invoices/s",
        f"{ingest['ingest']:,.0f} invoices/s", ingest["ingest"] >= 5000)
    row(5, "ingest vs raw XML parse of the same documents", ">= 25%",
        f"{ingest['ingest'] / ingest['parse']:.0%} (parse {ingest['parse']:,.0f} docs/s)",
        ingest["ingest"] >= 0.25 * ingest["parse"])
    row(5, f"e.firma package ingest: one 20,000-CFDI ZIP ({ingest['package_mib']:.0f} MiB)", "reported",
        f"{ingest['package']:,.0f} invoices/s = {ingest['package'] / ingest['ingest']:.0%} of the CIEC ingest",
        True)
    row(5, f"CFDI de Retenciones ingest: {ingest['retention_docs']:,} documents parsed, compressed and stored in "
        "batches of 500 (bench/retentions.rs)", "reported", f"{ingest['retentions']:,.0f} retentions/s", True)
    row(5, "seal verifications (issuer seal, certificate, stamp): genuine samples; a sandbox month of "
        f"{ingest['seal_month']:,} documents (bench/seal.rs)", "reported",
        f"{ingest['seal_samples']:,.0f} /s samples; {ingest['seal_sandbox']:,.0f} /s sandbox", True)
    row(5, "sandbox generation with its documents sealed and stamped (RSA-512, twice each)", "reported",
        f"{ingest['sandbox_render']:,.0f} docs/s rendered; sealing alone {ingest['sandbox_sealing']:,.0f} docs/s",
        True)
    if webhook_error:
        row(6, "webhook latency and fan-out", "p50 < 50 ms; >= 3,000 deliveries/s", f"failed: {webhook_error}", False)
    else:
        row(6, "webhook commit-to-arrival at 100 events/s, p50", "< 50 ms",
            f"{median_of(latency, 'p50'):.1f} ms", median_of(latency, "p50") < 50)
        row(6, "same, p99", "< 250 ms", f"{median_of(latency, 'p99'):.1f} ms", median_of(latency, "p99") < 250)
        row(6, f"fan-out of one extraction's {median_of(fanout, 'n'):,.0f} invoice.created events to one receiver",
            ">= 3,000 deliveries/s", f"{median_of(fanout, 'rate'):,.0f} deliveries/s", median_of(fanout, "rate") >= 3000)
        row(6, "commit-to-arrival at 100 events/s while another organization's fan-out (6) runs, p50",
            "< 50 ms", f"{median_of(during, 'p50'):.1f} ms ({median_of(during, 'n'):,.0f} events at "
            f"{median_of(during, 'sent_rate'):.0f}/s; fan-out {median_of(during, 'fanout'):,.0f} deliveries/s)",
            median_of(during, "p50") < 50)
        row(6, "same, p99", "reported", f"{median_of(during, 'p99'):.1f} ms", True)
        row(6, f"the receiver alone (bench/receiver.rs): wrk POSTs of a {alone[0]['bytes']:,}-byte event, p99 "
            f"{median_of(alone, 'p99'):.1f} ms", ">= 10x 3,000/s", f"{median_of(alone, 'rps'):,.0f} req/s",
            median_of(alone, "rps") >= 30_000)
    row(7, "RSS idle", "< 60 MB", f"{idle_rss:.0f} MiB", idle_rss < 60)
    row(7, "peak RSS during (3)-(6)", "< 200 MB", f"{peak:.0f} MiB", peak < 200)
    row(7, "release binary size", "reported", f"{binary_mib:.1f} MiB", True)
    attacked_rps = median_of(attacked, "rps")
    row(8, "(2) while another client sends wrong passwords", ">= 50% of (2)",
        f"{attacked_rps:,.0f} req/s = {attacked_rps / trivial_rps:.0%}", attacked_rps >= 0.5 * trivial_rps)
    for r in accountant_rows + disk_rows(disk) + status_rows(status) + [sat_calls_row(calls)] + list_rows + seal_rows:
        row(*r)

    what = f"console: first page of invoices drawn in Chromium, {big_n:,} invoices (warm median; cold, max)"
    if console is None or "error" in console:
        rows.append((9, what, "< 1 s", f"failed: {console['error']}" if console else "not measured: no playwright-core "
                     "or chromium (`bash .ci/browser.sh` installs them)", "MISSED" if console else "skipped"))
    else:
        row(9, what, "< 1 s", f"{console['median']:.0f} ms (cold {console['cold']:.0f} ms, max {console['max']:.0f} ms)",
            console["max"] < 1000)
    for r in extra_rows:
        row(*r)
    side_by_side.listing_row(row, ceiling, median_of(list_big, "rps"), big_n)

    table = ["| # | Scenario | Target | Measured (median of %d) | |" % RUNS, "|---|---|---|---|---|"]
    table += [f"| {n} | {what} | {target} | {value} | {verdict} |" for n, what, target, value, verdict in rows]
    print("\n".join(table))
    extra = (f"Seeding {big_n:,} invoices through sandbox extractions took {seed_seconds:.0f} s "
             f"({big_n / seed_seconds:,.0f} invoices/s); meanwhile the WAL was at most {seed_wal:,.0f} MiB "
             f"(sampled twice a second) and the server's peak RSS {seed_peak:.0f} MiB.")
    print(extra)
    write_report(machine, table, extra)
    subprocess.run(["rm", "-rf", tmp])


def write_report(machine, table, extra):
    path = os.path.join(ROOT, "BENCHMARKS.md")
    notes_marker = "## Notes"
    notes = ""
    if os.path.exists(path):
        text = open(path).read()
        if notes_marker in text:
            notes = text[text.index(notes_marker):]
    with open(path, "w") as f:
        f.write("# Benchmarks\n\n")
        f.write("Produced by `bench/run` (it rewrites everything above the Notes section).\n\n")
        f.write(f"- Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory']}, "
                f"Linux {machine['kernel']}; load generator (wrk, Python) on the same machine\n")
        f.write(f"- Date: {machine['date']}; runs per figure: {RUNS}; wrk duration: {DURATION} s, 64 connections\n")
        f.write(f"- Command: `bench/run` (env: BENCH_RUNS={RUNS}, BENCH_SECONDS={DURATION}, BENCH_INVOICES={MILLION})\n\n")
        f.write("\n".join(table) + "\n\n" + extra + "\n\n")
        f.write(notes or f"{notes_marker}\n\n(none yet)\n")
    log(f"wrote {path}")


def exports_only():
    """`bench/run exports`: only scenarios 10 and 11, on BENCH_INVOICES seeded invoices
    (e.g. BENCH_INVOICES=5000 for a quick check); prints the rows, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    server = Server(os.path.join(tmp, "main"))
    big = new_user(server.data_dir, "Big")
    n, seconds = seed(server, big, "M", MILLION)
    log(f"seeded {n} invoices in {seconds:.0f}s; restarting so peak RSS covers only the exports")
    server.stop()
    server = Server(os.path.join(tmp, "main"))
    rows = []
    accountant.scenario(server, big, ROOT, repeat, median_of, lambda *r: rows.append(r))
    server.stop()
    for n, what, target, value, ok in rows:
        print(f"| {n} | {what} | {target} | {value} | {'met' if ok else 'MISSED'} |")
    subprocess.run(["rm", "-rf", tmp])


def fanout_only():
    """`bench/run fanout`: only the fan-out rows of scenario 6 (one extraction's
    invoice.created events to one receiver, and another organization's commit-to-arrival
    meanwhile) on a fresh server, no seeding: for side-by-side runs of a delivery
    change. BENCH_BIN picks another binary (e.g. a copy of the one before the change).
    Prints the rows, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    server = Server(os.path.join(tmp, "main"))
    receiver, other_receiver = deliveries.Receiver(ROOT), deliveries.Receiver(ROOT)
    hooks, other = new_user(server.data_dir, "Hooks"), new_user(server.data_dir, "Other")
    call(server, "POST", "/v1/webhooks", hooks, {"url": receiver.url, "events": ["invoice.created"]})
    call(server, "POST", "/v1/webhooks", other, {"url": other_receiver.url, "events": ["entity.update"]})
    fanout = repeat(lambda: webhook_fanout(server, hooks, receiver))
    during = repeat(lambda: latency_during_fanout(server, hooks, receiver, other, other_receiver))
    server.stop()
    print(f"| 6 | fan-out of one extraction's {median_of(fanout, 'n'):,.0f} invoice.created events to one receiver "
          f"| >= 3,000 deliveries/s | {median_of(fanout, 'rate'):,.0f} deliveries/s |")
    print(f"| 6 | commit-to-arrival at 100 events/s while another organization's fan-out runs, p50 / p99 | < 50 ms "
          f"| {median_of(during, 'p50'):.1f} / {median_of(during, 'p99'):.1f} ms (fan-out {median_of(during, 'fanout'):,.0f} "
          f"deliveries/s) |")
    subprocess.run(["rm", "-rf", tmp])


def listing_only():
    """`bench/run listing`: only the listing rows (3, 14) on BENCH_INVOICES seeded
    invoices. BENCH_BEFORE=path measures another binary on the same data first, for a
    side by side of a change. Prints the rows, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    data_dir = os.path.join(tmp, "main")
    server = Server(data_dir)
    big = new_user(data_dir, "Big")
    n, seconds = seed(server, big, "M", MILLION)
    log(f"seeded {n} invoices in {seconds:.0f}s")
    _, first = call(server, "GET", "/v1/entities?limit=1", big)
    entity = first["data"][0]["id"]
    _, newest = call(server, "GET", "/v1/invoices?limit=1", big)
    since = urllib.parse.quote(newest["data"][0]["updated_at"])
    server.stop()
    paths = {"page": "/v1/invoices?limit=50",
             "filtered": f"/v1/invoices?limit=50&entity_id={entity}&issued_from=2024-03-01&issued_to=2024-03-31&type=I",
             "changes since": f"/v1/invoices?limit=50&order=updated_at_asc&updated_since={since}"}
    before = os.environ.get("BENCH_BEFORE")
    for label, binary in ([("before", before)] if before else []) + [("this build", BIN)]:
        server = Server(data_dir, binary=binary)
        call(server, "GET", "/v1/invoices", big)
        for what, path in paths.items():
            runs = repeat(lambda: wrk(server.base + path, header=f"Authorization: {basic(big)}"))
            print(f"| 3 | {label}: {what}, {n:,} invoices | {median_of(runs, 'rps'):,.0f} req/s, "
                  f"p99 {median_of(runs, 'p99'):.1f} ms |", flush=True)
        server.stop()
    ceiling = side_by_side.listing_reference(ROOT, data_dir, big[0], DURATION)
    print(f"| 14 | the page query in Python's sqlite3 | {ceiling['one']:,.0f} pages/s on 1 connection, "
          f"{ceiling['cores']:,.0f} on {os.cpu_count()} |")
    subprocess.run(["rm", "-rf", tmp])


def list_69b_rows():
    """Scenario 17 (bench/list_69b.py): the 69-B list at the cap, by the CLI and the refresh."""
    return list_69b.scenario(BIN, Server, cli, wait_for, repeat, median_of)


def list_69b_only():
    """`bench/run list69b`: only scenario 17; prints the rows, writes nothing."""
    for n, what, target, value, ok in list_69b_rows():
        print(f"| {n} | {what} | {target} | {value} | {'met' if ok else 'MISSED'} |")


def status_only():
    """`bench/run status`: only scenario 15 (SAT status checks a second against the local
    fake) on BENCH_STATUS_INVOICES seeded invoices; prints the row, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    for n, what, target, value, ok in status_rows(scenario_status(tmp)):
        print(f"| {n} | {what} | {target} | {value} | {'met' if ok else 'MISSED'} |")
    subprocess.run(["rm", "-rf", tmp])


def scenario_seals(tmp):
    """(18) The background seal verifier: a BIG sandbox month extracted (each document
    verified as it is stored), its answers cleared as a database stored before seals
    were verified has them, and the server started again: the verifier's documents a
    second, and the listing's p99 while it runs against after it is done."""
    import sqlite3
    data_dir = os.path.join(tmp, "seals")
    server = Server(data_dir)
    creds = new_user(data_dir, "Seals")
    eid = create_entity(server, creds, "BIGA010118AAA")
    wait_extraction(server, creds, extract(server, creds, eid, "2026-03-01", "2026-03-31"))
    server.stop()
    db_path = os.path.join(data_dir, "cfdi-extract.db")
    db = sqlite3.connect(db_path)
    n = db.execute("SELECT count(*) FROM invoices WHERE xml_processed = 1").fetchone()[0]
    db.execute("UPDATE invoices SET seal_status = NULL, seal_key = NULL, seal_awaits = NULL")
    db.commit()
    db.close()
    pending = lambda: sqlite3.connect(f"file:{db_path}?mode=ro", uri=True).execute(
        "SELECT count(*) FROM invoices WHERE seal_status IS NULL AND xml_processed = 1").fetchone()[0]
    server = Server(data_dir)
    started = time.monotonic()
    header = f"Authorization: {basic(creds)}"
    page = server.base + "/v1/invoices?limit=50"
    during = wrk(page, header=header)
    left = pending()
    wait_for(lambda: pending() == 0, 3600, "every document verified")
    elapsed = time.monotonic() - started
    after = wrk(page, header=header)
    server.stop()
    return {"n": n, "rate": n / elapsed, "during_p99": during["p99"], "after_p99": after["p99"],
            "overlapped": left > 0}


def seals_rows(seals):
    ratio = seals["during_p99"] / seals["after_p99"] if seals["after_p99"] else 0
    return [
        (18, f"background seal verification of a BIG month ({seals['n']:,} invoices stored before seals were verified)",
         "reported", f"{seals['rate']:,.0f} verifications/s", True),
        (18, "`GET /v1/invoices?limit=50` p99 while it runs, against after"
         + ("" if seals["overlapped"] else " (it finished before the load did)"), "within 1.1x",
         f"{seals['during_p99']:.1f} / {seals['after_p99']:.1f} ms", ratio <= 1.1),
    ]


def seals_only():
    """`bench/run seals`: only scenario 18; prints the rows, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    for n, what, target, value, ok in seals_rows(scenario_seals(tmp)):
        print(f"| {n} | {what} | {target} | {value} | {'met' if ok else 'MISSED'} |")
    subprocess.run(["rm", "-rf", tmp])


class Postgres:
    """A fresh database per data directory on BENCH_POSTGRES (a server URL), or on a
    throwaway server `.ci/postgres.sh start` runs when it is not set."""

    def __init__(self):
        self.started = None
        url = os.environ.get("BENCH_POSTGRES")
        if not url:
            out = subprocess.run(["bash", os.path.join(ROOT, ".ci", "postgres.sh"), "start"],
                                 capture_output=True, text=True, check=True).stdout
            found = dict(re.findall(r"export (\w+)=(\S+)", out))
            url, self.started = found["CFDI_EXTRACT_TEST_POSTGRES"], found["CFDI_EXTRACT_TEST_POSTGRES_DIR"]
        self.server = url

    def database(self, name):
        """A new, empty database; its URL."""
        for sql in (f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}"):
            subprocess.run(["psql", self.server, "-qc", sql], check=True, capture_output=True)
        return self.server.rsplit("/", 1)[0] + "/" + name

    def stop(self):
        if self.started:
            subprocess.run(["bash", os.path.join(ROOT, ".ci", "postgres.sh"), "stop", self.started], check=False)


def cpu_seconds(pid):
    """User and system CPU seconds a process has used (0 once it is gone)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds():
    """CPU seconds of every PostgreSQL process on this machine (its server's backends)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if open(f"/proc/{entry}/comm").read().strip() in ("postgres", "postmaster"):
                    total += cpu_seconds(entry)
            except OSError:
                pass
    return total


def with_cpu(servers, f):
    """f()'s result with the CPU seconds the servers (`server_cpu`) and PostgreSQL
    (`postgres_cpu`) used meanwhile."""
    s0, p0 = sum(cpu_seconds(s.proc.pid) for s in servers), postgres_cpu_seconds()
    r = f()
    r["server_cpu"] = sum(cpu_seconds(s.proc.pid) for s in servers) - s0
    r["postgres_cpu"] = postgres_cpu_seconds() - p0
    return r


def cpu_per(runs, count, unit, postgres):
    """The median CPU per operation of `runs` (`count(run)` operations each), in µs: the
    instances', and PostgreSQL's."""
    server = statistics.median(r["server_cpu"] / count(r) for r in runs) * 1e6
    text = f"instance CPU {server:,.0f} µs per {unit}"
    if postgres:
        text += f", PostgreSQL {statistics.median(r['postgres_cpu'] / count(r) for r in runs) * 1e6:,.0f} µs"
    return text


def engine_rows(label, data_dir, url):
    """Ingest, listing and fan-out on one engine (`url`: PostgreSQL's database, or None
    for SQLite in `data_dir`), and, on PostgreSQL, the same with a second instance."""
    if url:
        os.environ["CFDI_EXTRACT_DATABASE_URL"] = url
    else:
        os.environ.pop("CFDI_EXTRACT_DATABASE_URL", None)
    rows = []
    server = Server(data_dir)
    creds = new_user(data_dir, "Engine")
    ingest = [with_cpu([server], lambda i=i: month_ingest(server, creds, i)) for i in range(RUNS)]
    rows.append((label, "ingest, one BIG entity's month end to end",
                 f"{median_of(ingest, 'rate'):,.0f} invoices/s; "
                 + cpu_per(ingest, lambda r: r["n"], "invoice", url)))
    n, _ = seed(server, creds, "E", ENGINE_INVOICES)
    n += sum(r["n"] for r in ingest)
    page = "/v1/invoices?limit=50"
    runs = repeat(lambda: with_cpu([server], lambda: wrk(server.base + page, header=f"Authorization: {basic(creds)}")))
    requests = lambda r: r["rps"] * DURATION
    rows.append((label, f"GET {page}, {n:,} invoices, 64 connections",
                 f"{median_of(runs, 'rps'):,.0f} req/s, p99 {median_of(runs, 'p99'):.1f} ms; "
                 + cpu_per(runs, requests, "request", url)))
    receiver = deliveries.Receiver(ROOT)
    call(server, "POST", "/v1/webhooks", creds, {"url": receiver.url, "events": ["invoice.created"]})
    fanout = repeat(lambda: webhook_fanout(server, creds, receiver))
    rows.append((label, "fan-out of one extraction's invoice.created events to one receiver",
                 f"{median_of(fanout, 'rate'):,.0f} deliveries/s"))
    other, other_receiver = new_user(data_dir, "Beside"), deliveries.Receiver(ROOT)
    call(server, "POST", "/v1/webhooks", other, {"url": other_receiver.url, "events": ["entity.update"]})
    beside = repeat(lambda: latency_during_fanout(server, creds, receiver, other, other_receiver))
    each = ", ".join(f"{r['p99']:.0f}" for r in beside)
    rows.append((label, "another organization's commit-to-arrival at 100 events/s during that fan-out",
                 f"p50 {median_of(beside, 'p50'):.0f} ms, p99 {median_of(beside, 'p99'):.0f} ms (each run's p99: {each} ms)"))
    if url:
        # A second instance: its own data directory with the first's key.
        second_dir = data_dir + "-second"
        os.makedirs(second_dir, mode=0o700)
        shutil.copy(os.path.join(data_dir, "secret.key"), second_dir)
        os.chmod(os.path.join(second_dir, "secret.key"), 0o600)
        second = Server(second_dir)
        header = f"Authorization: {basic(creds)}"

        def both():
            results = []
            threads = [threading.Thread(target=lambda s=s: results.append(wrk(s.base + page, conns=32, header=header)))
                       for s in (server, second)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return {"rps": sum(r["rps"] for r in results), "p99": max(r["p99"] for r in results)}
        runs = repeat(lambda: with_cpu([server, second], both))
        rows.append((label + ", two instances", f"GET {page}, 32 connections to each",
                     f"{median_of(runs, 'rps'):,.0f} req/s together, p99 {median_of(runs, 'p99'):.1f} ms; "
                     + cpu_per(runs, requests, "request", url)))
        fanout = repeat(lambda: webhook_fanout(server, creds, receiver))
        rows.append((label + ", two instances", "fan-out of one extraction's invoice.created events",
                     f"{median_of(fanout, 'rate'):,.0f} deliveries/s"))
        second.stop()
    server.stop()
    os.environ.pop("CFDI_EXTRACT_DATABASE_URL", None)
    return rows


def engines_only():
    """`bench/run engines`: ingest, listing and fan-out on SQLite and on PostgreSQL (on
    the same machine: BENCH_POSTGRES, or a throwaway server), and on PostgreSQL one
    instance against two. Prints the rows, writes nothing."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    postgres = Postgres()
    try:
        rows = engine_rows("SQLite", os.path.join(tmp, "sqlite"), None)
        rows += engine_rows("PostgreSQL", os.path.join(tmp, "postgres"), postgres.database("cfdi_bench"))
    finally:
        postgres.stop()
        subprocess.run(["rm", "-rf", tmp])
    print("| Engine | What | Measured |")
    print("|---|---|---|")
    for engine, what, value in rows:
        print(f"| {engine} | {what} | {value} |")


def versus_round(binary):
    """One round of `versus` on a fresh data directory with `binary`: the rows a change
    is most likely to move, on one BIG month (so the listing and the disk are at that
    size, not at BENCH_INVOICES)."""
    global BIN
    kept, BIN = BIN, binary
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-")
    try:
        data_dir = os.path.join(tmp, "main")
        server = Server(data_dir, binary=binary)
        idle = server.rss()
        big, hooks = new_user(data_dir, "Big"), new_user(data_dir, "Hooks")
        up = wrk(server.base + "/up")
        trivial = wrk(server.base + "/v1/webhooks", header=f"Authorization: {basic(hooks)}")
        cpu = cpu_seconds(server.proc.pid)
        ingest = month_ingest(server, big, 0)
        ingest["cpu"] = (cpu_seconds(server.proc.pid) - cpu) * 1e6 / ingest["n"]
        page = wrk(server.base + "/v1/invoices?limit=50", header=f"Authorization: {basic(big)}")
        receiver = deliveries.Receiver(ROOT)
        call(server, "POST", "/v1/webhooks", hooks, {"url": receiver.url, "events": ["invoice.created"]})
        fanout = webhook_fanout(server, hooks, receiver)
        peak = server.peak()
        server.stop()
        db_path = os.path.join(data_dir, "cfdi-extract.db")
        db = sqlite3.connect(db_path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        invoices = db.execute("SELECT count(*) FROM invoices").fetchone()[0]
        db.close()
        return {"up": up["rps"], "trivial": trivial["rps"], "ratio": 100 * trivial["rps"] / up["rps"],
                "ingest": ingest["rate"], "ingest_cpu": ingest["cpu"], "n": ingest["n"],
                "page_rps": page["rps"], "page_p99": page["p99"], "fanout": fanout["rate"],
                "disk": os.path.getsize(db_path) / invoices, "idle": idle, "peak": peak}
    finally:
        BIN = kept
        subprocess.run(["rm", "-rf", tmp])


def versus_only():
    """`BENCH_BEFORE=path bench/run versus`: this build against another binary on this
    host, alternating, BENCH_RUNS rounds each on a fresh data directory, for the rows a
    change is most likely to move (1, 2, 3, 5, 6, 7, 12 at one BIG month): whether a
    change made a row fall back, which tables from different days (and hosts' paces)
    cannot say. Prints the rows, writes nothing."""
    before = os.environ.get("BENCH_BEFORE")
    if not before:
        sys.exit("versus needs BENCH_BEFORE=path of the binary to compare with")
    runs = {"before": [], "this build": []}
    for _ in range(RUNS):
        for label, binary in (("before", before), ("this build", BIN)):
            runs[label].append(versus_round(binary))
            log(f"{label}: {runs[label][-1]}")
    rows = [("1", "`GET /up`, 64 connections", "up", "{:,.0f} req/s"),
            ("2", "authenticated `GET /v1/webhooks` (empty org)", "trivial", "{:,.0f} req/s"),
            ("2", "(2) as a share of (1)", "ratio", "{:.0f}%"),
            ("3", "`GET /v1/invoices?limit=50` on one BIG month, 64 connections", "page_rps", "{:,.0f} req/s"),
            ("3", "same, p99", "page_p99", "{:.1f} ms"),
            ("5", "ingest: BIG month end to end", "ingest", "{:,.0f} invoices/s"),
            ("5", "the server's CPU per invoice stored", "ingest_cpu", "{:,.0f} µs"),
            ("6", "fan-out of one extraction's invoice.created events", "fanout", "{:,.0f} deliveries/s"),
            ("7", "RSS idle", "idle", "{:.0f} MiB"),
            ("7", "peak RSS", "peak", "{:.0f} MiB"),
            ("12", "disk after a checkpoint, one BIG month", "disk", "{:,.0f} B per invoice")]
    print(f"| # | Scenario | before ({os.path.basename(before)}) | this build | runs |")
    print("|---|---|---|---|---|")
    for n, what, key, form in rows:
        cells = [form.format(median_of(runs[label], key)) for label in runs]
        spread = "; ".join(", ".join(form.format(r[key]) for r in runs[label]) for label in runs)
        print(f"| {n} | {what} | {cells[0]} | {cells[1]} | {spread} |")


if __name__ == "__main__":
    modes = {"exports": exports_only, "fanout": fanout_only, "listing": listing_only, "status": status_only,
             "engines": engines_only, "list69b": list_69b_only, "seals": seals_only,
             "versus": versus_only}
    sys.exit(modes[sys.argv[1]]() if sys.argv[1:2] and sys.argv[1] in modes else main())
