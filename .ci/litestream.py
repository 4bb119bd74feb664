"""The Litestream recipe of /docs/operations, run for real.

A server extracts a sandbox month while `litestream replicate` streams its database to
a file replica; the replica is restored with `litestream restore`, brought in with
`cfdi-extract restore` (plus the key kept apart, as the docs say), passes
`cfdi-extract check`, and a new server on it lists the same invoices and entity, and
can still decrypt the CIEC (an extraction on the restored copy finishes).

Usage: python3 .ci/litestream.py BIN LITESTREAM
"""

import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BIN, LITESTREAM = sys.argv[1], sys.argv[2]
EMAIL, PASSWORD = "ops@litestream.mx", "litestream-password"
ENV_DROP = ("CFDI_EXTRACT_DATA_DIR", "CFDI_EXTRACT_PORT", "CFDI_EXTRACT_ADDRESS", "RUST_LOG")


def env():
    import os

    return {k: v for k, v in os.environ.items() if k not in ENV_DROP}


def cli(data_dir, *args, stdin=None):
    out = subprocess.run([BIN, *args, "--data-dir", str(data_dir)], input=stdin,
                         capture_output=True, text=True, env=env())
    if out.returncode != 0:
        sys.exit(f"cfdi-extract {' '.join(args)} failed: {out.stderr}")
    return out.stdout.strip()


class Server:
    def __init__(self, data_dir, log):
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data-dir", str(data_dir), "--address", "127.0.0.1", "--port", "0",
             "--sim-latency", "0ms"],
            stdout=subprocess.PIPE, stderr=self.log, text=True, env=env())
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://[\d.:]+)", line)
        if not m:
            sys.exit(f"server did not start: {line!r} (log: {log})")
        self.base = m.group(1)

    def call(self, method, path, body=None):
        auth = base64.b64encode(f"{EMAIL}:{PASSWORD}".encode()).decode()
        req = urllib.request.Request(self.base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Basic {auth}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    def wait(self, path, field, wanted, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.call("GET", path)[field]
            if value in wanted:
                return value
            time.sleep(0.2)
        sys.exit(f"{path}: {field} never became one of {wanted}")

    def extract(self, entity_id, day_from, day_to):
        x = self.call("POST", "/v1/extractions", {
            "entity_id": entity_id,
            "options": {"period": {"from": day_from, "to": day_to}, "download_type": "issued"}})
        status = self.wait(f"/v1/extractions/{x['id']}", "status", ("finished", "failed"))
        if status != "finished":
            sys.exit(f"extraction {x['id']} {status}")

    def invoices(self):
        rows, cursor = [], None
        while True:
            page = self.call("GET", "/v1/invoices?limit=500" + (f"&cursor={cursor}" if cursor else ""))
            rows += [(i["id"], i["uuid"], i["status"], i["total"]) for i in page["data"]]
            cursor = page.get("next_cursor")
            if not cursor:
                return rows

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def main():
    work = Path(tempfile.mkdtemp(prefix="cfdi-litestream-"))
    data, replica, restored_dir = work / "data", work / "replica", work / "restored"
    org = cli(data, "org", "create", "Litestream SA de CV")
    cli(data, "user", "create", "--org", org, "--email", EMAIL, "--password-stdin", stdin=PASSWORD + "\n")

    server = Server(data, work / "server.log")
    db = data / "cfdi-extract.db"
    stream = subprocess.Popen([LITESTREAM, "replicate", str(db), f"file://{replica}"],
                              stdout=open(work / "litestream.log", "w"), stderr=subprocess.STDOUT)
    try:
        entity = server.call("POST", "/v1/entities", {
            "tax_id": "H&E951128469", "name": "Réplica SA", "ciec_password": "goodpass"})
        server.wait(f"/v1/entities/{entity['id']}", "credential_status", ("valid",))
        # Written while Litestream streams: a month of invoices, ingested in batches.
        server.extract(entity["id"], "2024-03-01", "2024-03-31")
        before = server.invoices()
        server.stop()
        if not before:
            sys.exit("the extraction produced no invoices to compare")
        time.sleep(3)  # Litestream syncs every second by default.
    finally:
        stream.terminate()
        stream.wait(timeout=30)

    restored_db = work / "from-replica.db"
    out = subprocess.run([LITESTREAM, "restore", "-o", str(restored_db), f"file://{replica}"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"litestream restore failed: {out.stdout}{out.stderr}")
    # The replica holds the database only: the key is kept apart, as /docs/operations says.
    restored_dir.mkdir(mode=0o700)
    shutil.copy2(data / "secret.key", restored_dir / "secret.key")
    cli(restored_dir, "restore", "--from", str(restored_db))
    cli(restored_dir, "check")

    again = Server(restored_dir, work / "restored.log")
    after = again.invoices()
    if after != before:
        sys.exit(f"restored invoices differ: {len(before)} before, {len(after)} after")
    if again.call("GET", f"/v1/entities/{entity['id']}")["credential_status"] != "valid":
        sys.exit("the restored entity is not valid")
    # The CIEC still decrypts: a new extraction on the restored copy finishes.
    again.extract(entity["id"], "2024-04-01", "2024-04-30")
    again.stop()
    shutil.rmtree(work)
    print(f"litestream: {len(before)} invoices replicated, restored and served the same")


main()
