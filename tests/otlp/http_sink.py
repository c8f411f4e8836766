#!/usr/bin/env python3
"""A tiny OTLP/HTTP sink for the tests (stdlib only).

    http_sink.py DIR SCRIPT [PORT]

Listens on 127.0.0.1 on a random port, writes the port to DIR/port once it
listens, and stores request N (1-based) as DIR/req-N.body and DIR/req-N.headers.
SCRIPT is a comma-separated list of answers, one per request, the last one
repeated: 200, 400, 503:SECONDS (Retry-After in seconds), 503d:SECONDS
(Retry-After as an HTTP date), partial (200 with partial_success), garbage
(200 with random bytes), huge (200 with a 20 MiB body).
With SINK_TLS_CERT and SINK_TLS_KEY in the environment it speaks HTTPS.
"""
import email.utils
import http.server
import os
import sys
import time

DIR, SCRIPT = sys.argv[1], sys.argv[2].split(',')
count = 0


def partial_success():
    msg = b"2 profiles too old"
    inner = b"\x08\x02" + b"\x12" + bytes([len(msg)]) + msg   # rejected_profiles=2, error_message
    return b"\x0a" + bytes([len(inner)]) + inner               # partial_success


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        global count
        count += 1
        n = count
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with open(os.path.join(DIR, "req-%d.headers" % n), "w") as f:
            f.write(str(self.headers))
        with open(os.path.join(DIR, "req-%d.body.tmp" % n), "wb") as f:
            f.write(body)
        os.rename(os.path.join(DIR, "req-%d.body.tmp" % n), os.path.join(DIR, "req-%d.body" % n))
        action = SCRIPT[min(n, len(SCRIPT)) - 1]
        code, extra, payload = 200, {}, b""
        if action == "400":
            code, payload = 400, b"bad request"
        elif action.startswith("503d:"):
            code = 503
            extra["Retry-After"] = email.utils.formatdate(time.time() + int(action[5:]), usegmt=True)
        elif action.startswith("503:"):
            code = 503
            extra["Retry-After"] = action[4:]
        elif action == "partial":
            payload = partial_success()
        elif action == "garbage":
            payload = os.urandom(4096)
        elif action == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(20 << 20))
            self.end_headers()
            chunk = b"\xff" * (1 << 20)
            for _ in range(20):
                self.wfile.write(chunk)
            return
        self.send_response(code)
        self.send_header("Content-Type", "application/x-protobuf")
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


# An optional third argument fixes the port: a test can start the sink late
# on the port a collector-to-be was promised.
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[3]) if len(sys.argv) > 3 else 0), Handler)
# HTTPS when SINK_TLS_CERT and SINK_TLS_KEY name a PEM certificate and key.
if os.environ.get("SINK_TLS_CERT"):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.environ["SINK_TLS_CERT"], os.environ["SINK_TLS_KEY"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
