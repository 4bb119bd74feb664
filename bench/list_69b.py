"""Scenario 17: the SAT's 69-B list at the size the cap allows. A generated list of
LIST_69B_ROWS taxpayers (1,000,000 by default: about 59 MiB of short rows, under the
64 MB cap) is loaded by `list-69b load` (first into an empty database, then a copy
in which one taxpayer in a thousand changed situation), and then by a server's
scheduled refresh from a local HTTP server. The rows report the peak RSS of the CLI
process (its rusage) and of the server (VmHWM) against the documented 200 MB."""

import os
import sqlite3
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROWS = int(os.environ.get("LIST_69B_ROWS", "1000000"))
SITUATIONS = ["Definitivo", "Presunto", "Desvirtuado", "Sentencia Favorable"]


def generate(path, n, shift):
    """The list as the SAT publishes it (Windows-1252, CRLF, the legend, the title and
    the 20-column header); `shift` moves one taxpayer in a thousand to another
    situation."""
    with open(path, "wb") as f:
        f.write("Información actualizada al 31 de marzo de 2024; los listados son de carácter público\r\n"
                .encode("cp1252"))
        f.write("Listado completo de contribuyentes (Artículo 69-B del CFF)".encode("cp1252") + b"," * 19 + b"\r\n")
        f.write("No,RFC,Nombre del Contribuyente,Situación del contribuyente".encode("cp1252") + b",x" * 16 + b"\r\n")
        for i in range(n):
            situation = SITUATIONS[(i + (shift if i % 1000 == 0 else 0)) % 4]
            date = "01/06/2018" if i % 10 == 0 else ""
            f.write(f"{i + 1},AAA{i:06d}HH1,E{i} SA,{situation},,{date}{',' * 14}\r\n".encode("cp1252"))


def cli_load(binary, data_dir, path):
    """`list-69b load`: (seconds, peak RSS in MiB, stdout)."""
    started = time.time()
    proc = subprocess.Popen([binary, "list-69b", "load", path, "--data-dir", data_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read().strip(), proc.stderr.read().strip()
    if status != 0:
        raise RuntimeError(f"list-69b load {path} failed: {err}")
    return time.time() - started, usage.ru_maxrss / 1024, out


class ListServer:
    """Serves the file `path` names at the moment (the refresh's `--list-69b-url`)."""

    def __init__(self):
        self.path = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                size = os.path.getsize(server.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                with open(server.path, "rb") as f:
                    while chunk := f.read(1 << 16):
                        self.wfile.write(chunk)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/Listado_Completo_69-B.csv"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


def scenario(binary, server_class, cli, wait_for, repeat, median_of):
    """The rows of scenario 17."""
    tmp = tempfile.mkdtemp(prefix="cfdi-bench-69b-")
    first, changed = os.path.join(tmp, "first.csv"), os.path.join(tmp, "changed.csv")
    generate(first, ROWS, 0)
    generate(changed, ROWS, 1)
    mib = os.path.getsize(first) / 2**20

    def by_cli():
        data = tempfile.mkdtemp(dir=tmp)
        cli(data, "org", "create", "List")
        s1, peak1, _ = cli_load(binary, data, first)
        s2, peak2, out = cli_load(binary, data, changed)
        if "version 2" not in out:
            raise RuntimeError(f"the second load: {out}")
        return {"s1": s1, "peak1": peak1, "s2": s2, "peak2": peak2}

    def by_refresh():
        data = tempfile.mkdtemp(dir=tmp)
        lists = ListServer()
        lists.path = first
        server = server_class(data, "--list-69b-url", lists.url, "--list-69b-every", "1s")
        try:
            def version(n):
                # Read from the file: the CLI's start would wait for the load's write turn.
                db = sqlite3.connect(f"file:{os.path.join(data, 'cfdi-extract.db')}?mode=ro", uri=True)
                try:
                    return db.execute("SELECT max(id) FROM efos_lists").fetchone()[0] == n
                except sqlite3.OperationalError:
                    return False
                finally:
                    db.close()
            started = time.time()
            wait_for(lambda: version(1), 1800, "the first list")
            s1 = time.time() - started
            lists.path = changed
            started = time.time()
            wait_for(lambda: version(2), 1800, "the changed list")
            s2 = time.time() - started
            return {"s1": s1, "s2": s2, "peak": server.peak()}
        finally:
            server.stop()
            lists.stop()

    try:
        cli_runs = repeat(by_cli)
        refresh_runs = repeat(by_refresh)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    peak_cli = max(median_of(cli_runs, "peak1"), median_of(cli_runs, "peak2"))
    peak_server = median_of(refresh_runs, "peak")
    what = f"69-B list of {ROWS:,} taxpayers ({mib:.0f} MiB, CRLF, under the 64 MB cap)"
    return [
        (17, f"{what}: `list-69b load`, first load then one changing 1 in 1,000, peak RSS",
         "< 200 MB", f"{median_of(cli_runs, 'peak1'):.0f} MiB, {median_of(cli_runs, 'peak2'):.0f} MiB "
         f"({median_of(cli_runs, 's1'):.1f} s, {median_of(cli_runs, 's2'):.1f} s)", peak_cli < 200),
        (17, f"{what}: the server's scheduled refresh, both loads, server peak RSS", "< 200 MB",
         f"{peak_server:.0f} MiB ({median_of(refresh_runs, 's1'):.1f} s, {median_of(refresh_runs, 's2'):.1f} s "
         "from download to version)", peak_server < 200),
    ]
