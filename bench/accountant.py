"""Scenarios 10 and 11 of bench/bench.py, what an accountant opens: a spreadsheet export
of every seeded invoice through the API (rate and the server's peak RSS while it
streams), and PDFs printed from the XML for invoices the authority gave none
(through the API, and the renderer alone through bench/pdf.rs)."""

import base64
import http.client
import json
import re
import subprocess
import threading
import time


def _auth(creds):
    return {"Authorization": "Basic " + base64.b64encode(f"{creds[0]}:{creds[1]}".encode()).decode()}


class PeakRss:
    """Samples the server's VmRSS every 50 ms while in use: the export's own peak, not
    the process's lifetime high-water mark."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def _rss(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024  # MiB
        return 0.0

    def _run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(0.05)

    def __enter__(self):
        self.peak = self._rss()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def export(server, creds, fmt):
    """(10) GET /v1/invoices/export of the whole organization, read as it streams."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=600)
    with PeakRss(server.proc.pid) as rss:
        start = time.perf_counter()
        conn.request("GET", f"/v1/invoices/export?format={fmt}", headers=_auth(creds))
        res = conn.getresponse()
        assert res.status == 200, (res.status, res.read()[:300])
        size = lines = 0
        while chunk := res.read(1 << 16):
            size += len(chunk)
            lines += chunk.count(b"\r\n")
        seconds = time.perf_counter() - start
    conn.close()
    return {"seconds": seconds, "mib": size / 2**20, "lines": lines, "peak": rss.peak}


def pdf_targets(server, creds, n):
    """Up to n distinct invoices without the authority's PDF (the list's has_pdf)."""
    ids, cursor = [], None
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    while len(ids) < n:
        path = "/v1/invoices?limit=500" + (f"&cursor={cursor}" if cursor else "")
        conn.request("GET", path, headers=_auth(creds))
        page = json.loads(conn.getresponse().read())
        ids += [i["id"] for i in page["data"] if not i["has_pdf"] and i["type"] != "P"]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    conn.close()
    return ids[:n]


def pdf_render(server, creds, ids, connections=4):
    """(11) Each invoice once through GET /v1/invoices/{id}/cfdi?format=pdf, which
    renders it from the XML (X-Cfdi-Pdf: rendered), on `connections` keep-alive
    connections."""
    todo, lock, failures = list(ids), threading.Lock(), []

    def worker():
        conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
        while True:
            with lock:
                if not todo:
                    break
                invoice = todo.pop()
            conn.request("GET", f"/v1/invoices/{invoice}/cfdi?format=pdf&render=true", headers=_auth(creds))
            res = conn.getresponse()
            body = res.read()
            if res.status != 200 or res.getheader("X-Cfdi-Pdf") != "rendered" or not body.startswith(b"%PDF"):
                failures.append((invoice, res.status))
        conn.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    assert not failures, failures[:5]
    return {"rate": len(ids) / seconds}


def pdf_renderer(root):
    """The renderer alone over a BIG month (bench/pdf.rs)."""
    out = subprocess.run(["cargo", "bench", "--quiet", "--bench", "pdf"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return {"rate": float(re.search(r"pdf_rate (\d+)", out).group(1)),
            "n": int(re.search(r"pdf_documents (\d+)", out).group(1)),
            "kib": int(re.search(r"pdf_bytes (\d+)", out).group(1)) / 1024}


def scenario(server, creds, root, repeat, median_of, row, pdfs=2000):
    """Runs (10) and (11) and adds their rows through `row(n, what, target, value, ok)`."""
    for fmt in ("csv", "xlsx"):
        runs = repeat(lambda: export(server, creds, fmt))
        if fmt == "csv":
            rows = runs[0]["lines"] - 1  # the header
        seconds, peak = median_of(runs, "seconds"), max(r["peak"] for r in runs)
        row(10, f"{fmt.upper()} export of {rows:,} invoices through the API", "reported",
            f"{rows / seconds:,.0f} rows/s ({median_of(runs, 'mib'):,.0f} MiB in {seconds:.0f} s)", True)
        row(10, f"peak RSS while the {fmt.upper()} export streams", "< 200 MB", f"{peak:.0f} MiB", peak < 200)
    ids = pdf_targets(server, creds, pdfs)
    api = repeat(lambda: pdf_render(server, creds, ids))
    row(11, f"PDF printed from the XML via the API, {len(ids):,} distinct invoices without one, "
        "4 connections", "reported", f"{median_of(api, 'rate'):,.0f} PDFs/s", True)
    alone = pdf_renderer(root)
    row(11, f"PDF renderer alone (bench/pdf.rs, {alone['n']:,} BIG-month documents)", "reported",
        f"{alone['rate']:,.0f} PDFs/s ({alone['kib']:.0f} KiB each)", True)
