"""Makes `src/db/events1.dict`, the zstd dictionary event payloads are stored with
(db/events.rs). Trained only on the `invoice.created` payloads of the real CFDI in
tests/fixtures/cfdi-samples, imported into a fresh server: never on sandbox documents, which
would flatter the disk benchmark. A payload's keys and shape are the service's own, the
same for every invoice, and are most of what the dictionary captures.

    python3 bench/events_dict.py   # after `cargo build --release`

The dictionary must never change once released (stored payloads name it by its ID, 2):
a better one is a new file with a new ID."""

import glob
import os
import re
import subprocess
import tempfile

import bench

SAMPLES = os.path.join(bench.ROOT, "tests", "fixtures", "cfdi-samples")
OUT = os.path.join(bench.ROOT, "src", "db", "events1.dict")


def party(xml, element):
    """The RFC of the sample's `Emisor` or `Receptor`."""
    m = re.search(rb"<cfdi:" + element + rb"[^>]*?\s[Rr]fc=\"([^\"]+)\"", xml)
    return m.group(1).decode() if m else None


def main():
    tmp = tempfile.mkdtemp(prefix="cfdi-dict-")
    data_dir = os.path.join(tmp, "main")
    server = bench.Server(data_dir)
    creds = bench.new_user(data_dir, "Dict")
    # Each sample twice: issued by its issuer's entity, received by its receiver's.
    files = {}
    for path in sorted(glob.glob(os.path.join(SAMPLES, "*.xml"))):
        xml = open(path, "rb").read()
        for element, direction in ((b"Emisor", "issued"), (b"Receptor", "received")):
            rfc = party(xml, element)
            if rfc:
                files.setdefault((rfc, direction), []).append(path)
    entities = {}
    for (rfc, direction), paths in files.items():
        if rfc not in entities:
            status, body = bench.call(server, "POST", "/v1/entities", creds,
                                      {"tax_id": rfc, "name": "Dictionary", "ciec_password": "12345678"})
            entities[rfc] = body["id"] if status == 201 else None  # the API refuses the edge samples' RFCs
        if entities[rfc]:
            subprocess.run([bench.BIN, "invoices", "import", "--data-dir", data_dir, "--entity", entities[rfc],
                            "--direction", direction, *paths], capture_output=True, check=False)
    payloads = os.path.join(tmp, "payloads")
    os.mkdir(payloads)
    path, n = "/v1/events?type=invoice.created&limit=100", 0
    while path:
        _, page = bench.call(server, "GET", path, creds)
        for event in page["data"]:
            # The payload's bytes as stored: GET /v1/events/{id} serves them unchanged.
            conn = bench.http.client.HTTPConnection(server.host, server.port, timeout=60)
            conn.request("GET", f"/v1/events/{event['id']}", headers={"Authorization": bench.basic(creds)})
            with open(os.path.join(payloads, f"{n}.json"), "wb") as f:
                f.write(conn.getresponse().read())
            conn.close()
            n += 1
        cursor = page.get("next_cursor")
        path = f"/v1/events?type=invoice.created&limit=100&cursor={cursor}" if cursor else None
    server.stop()
    bench.log(f"{n} invoice.created payloads from {len(entities)} taxpayers")
    subprocess.run(["zstd", "--train", *glob.glob(os.path.join(payloads, "*.json")), "--maxdict=4096",
                    "--dictID=2", "-3", "-f", "-o", OUT], check=True)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
