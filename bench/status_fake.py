"""The SAT's CFDI status service (ConsultaCFDIService) faked for scenario 15: answers
every `Consulta` with the recorded answer of the shared fixtures (Vigente, no
cancelable, EFOS 200, byte for byte as the SAT wrote it) and records when each request
came and which UUID it asked about, so the rows measure the service's checker and not
the SAT. A request without the SOAPAction or the printed expression gets a SOAP fault,
as the SAT would answer, and is counted apart."""

import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tests", "fixtures", "sat-status-fixtures")
ANSWER = "consulta-response-vigente-no-cancelable-efos200.satcfdi-extracted.xml"
SOAP_ACTION = "http://tempuri.org/IConsultaCFDIService/Consulta"
FAULT = (b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault>'
         b'<faultcode>s:Client</faultcode><faultstring xml:lang="es-MX">bad request</faultstring>'
         b'</s:Fault></s:Body></s:Envelope>')
UUID = re.compile(rb"[?&;]id=([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})")


class StatusFake:
    """`url` is where the service is; `checks` the (time, UUID) of each good request."""

    def __init__(self):
        answer = open(os.path.join(FIXTURES, ANSWER), "rb").read()
        self.checks, self.refused = [], 0
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # the checker's client keeps its connection
            # The answer's head and body in one write, sent at once: written apart, the
            # client's delayed ACK would add 40 ms to every check.
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                found = UUID.search(body)
                good = self.headers.get("SOAPAction", "").strip('"') == SOAP_ACTION and found
                with lock:
                    if good:
                        fake.checks.append((time.time(), found.group(1).decode().upper()))
                    else:
                        fake.refused += 1
                reply = answer if good else FAULT
                self.send_response(200 if good else 500)
                self.send_header("Content-Type", "text/xml; charset=utf-8")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ConsultaCFDIService.svc"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
