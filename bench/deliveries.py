"""The webhook receiver of scenario 6 (bench/receiver.rs, in Rust, a thread per
keep-alive connection) and its own throughput measured alone with wrk, so the delivery
rows measure the service and not the receiver."""

import atexit
import http.client
import json
import os
import re
import subprocess
import tempfile
import uuid
from datetime import datetime, timezone

RECEIVERS = []


@atexit.register
def stop_all():
    for receiver in RECEIVERS:
        receiver.proc.kill()


def receiver_binary(root):
    """The receiver's executable, built by bench/run (`cargo bench --no-run`)."""
    out = subprocess.run(["cargo", "bench", "--no-run", "--quiet", "--locked", "--bench", "receiver",
                          "--message-format=json"], cwd=root, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("target", {}).get("name") == "receiver" and msg.get("executable"):
            return msg["executable"]
    raise RuntimeError("cargo did not name the receiver's executable")


def timestamp(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


class Receiver:
    """Records (arrival time, event created_at, event id) for every delivery; `url` is
    the webhook URL to register."""

    def __init__(self, root):
        self.proc = subprocess.Popen([receiver_binary(root)], stdout=subprocess.PIPE, text=True)
        RECEIVERS.append(self)
        m = re.search(r"listening on http://([\d.]+):(\d+)", self.proc.stdout.readline())
        if not m:
            raise RuntimeError("the receiver did not start")
        self.host, self.port = m.group(1), int(m.group(2))
        self.base = f"http://{self.host}:{self.port}"
        self.url = self.base + "/hook"

    def _get(self, path):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        conn.request("GET", path)
        body = conn.getresponse().read().decode()
        conn.close()
        return body

    def count(self):
        return int(self._get("/count"))

    def take(self):
        """Every arrival since the last take, forgotten by the receiver."""
        lines = [json.loads(line) for line in self._get("/arrivals").splitlines() if line]
        return [(a["at"], timestamp(a["created_at"]), a["id"]) for a in lines]


def event_body(invoice):
    """A delivery as the service sends it (API.md): an invoice.created event whose
    object is an invoice of the seeded organization."""
    return json.dumps({
        "id": str(uuid.uuid4()), "event": "invoice.created", "source": f"invoices/{invoice['id']}",
        "resource": {"type": "Invoice", "id": invoice["id"], "path": f"invoices/{invoice['id']}"},
        "object": invoice, "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
    }, ensure_ascii=True)


def receiver_alone(receiver, invoice, wrk):
    """(6c) The receiver's own rate: wrk POSTs one representative delivery (body and
    headers as the service sends them) on 64 keep-alive connections."""
    body = event_body(invoice)
    script = "\n".join([
        'wrk.method = "POST"',
        f"wrk.body = [==[{body}]==]",
        'wrk.headers["Content-Type"] = "application/json"',
        'wrk.headers["Authorization"] = "Bearer whsec_' + "A" * 43 + '="',
        'wrk.headers["webhook-id"] = "' + json.loads(body)["id"] + '"',
        'wrk.headers["webhook-timestamp"] = "1795420000"',
        'wrk.headers["webhook-signature"] = "v1,' + "B" * 43 + '="',
    ])
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        result = wrk(receiver.url, script=f.name)
    finally:
        os.unlink(f.name)
    recorded = len(receiver.take())
    assert recorded > 0 and result["errors"] == 0, (recorded, result)
    return {**result, "bytes": len(body)}
