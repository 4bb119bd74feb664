#!/usr/bin/env python3
"""A minimal cfdi-extract webhook receiver, standard library only.

Run:  WEBHOOK_TOKEN='whsec_...' python3 webhook_receiver.py   (listens on 127.0.0.1:9000)
"""
import base64, hashlib, hmac, json, os, queue, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = os.environ["WEBHOOK_TOKEN"]  # the "token" returned by POST /v1/webhooks
SECRET = base64.b64decode(TOKEN[len("whsec_"):] if TOKEN.startswith("whsec_") else TOKEN)
TOLERANCE = 5 * 60  # seconds: refuse old or future-dated messages (replays)

events = queue.Queue()


def signature_ok(headers, body):
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not msg_id or not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE:
        return False
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(SECRET, signed, hashlib.sha256).digest())
    # The header holds space-separated "v1,<base64>" signatures; one match is enough.
    for candidate in headers.get("webhook-signature", "").split():
        version, _, sig = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(sig.encode(), expected):
            return True
    return False


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        bearer = self.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(bearer, b"Bearer " + TOKEN.encode()) \
                or not signature_ok(self.headers, body):
            return self.answer(401)
        try:
            event = json.loads(body)
        except ValueError:
            return self.answer(400)
        events.put((self.headers["webhook-id"], event))  # work happens elsewhere
        self.answer(204)  # answer fast: the service waits at most 15 s

    def answer(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def worker():
    seen = set()  # in production: a table with a unique key on webhook-id
    while True:
        msg_id, event = events.get()
        if msg_id in seen:  # the same event can arrive more than once
            continue
        seen.add(msg_id)
        obj = event["object"]
        if event["event"] == "extraction.update":
            print(f"extraction {obj['id']}: {obj['status']}",
                  f"({obj['invoices_processed']}/{obj['invoices_found']})",
                  obj["failed_reason"] or "", flush=True)
        elif event["event"] == "entity.update":
            print(f"entity {obj['tax_id']}: credential {obj['credential_status']}", flush=True)
        elif event["event"] in ("invoice.created", "invoice.updated"):
            print(f"{event['event']} {obj['uuid']}: {obj['status']}, due {obj['due_amount']}",
                  sorted(event.get("changes", {})), flush=True)


threading.Thread(target=worker, daemon=True).start()
port = int(os.environ.get("PORT", "9000"))
print(f"receiver listening on 127.0.0.1:{port}", flush=True)
ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
