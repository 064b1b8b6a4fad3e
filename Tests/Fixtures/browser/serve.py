#!/usr/bin/env python3
"""Serves the browser test pages on 127.0.0.1, on a port the system picks.

Usage: serve.py ROOT PORT_FILE STATUS_FILE

- GET /status?TEXT appends TEXT (one line) to STATUS_FILE: what the page reports
  (its playback started, getUserMedia answered, the call hung up).
- GET /control returns the contents of ROOT/control (empty when there is none): the
  test's command to the page, which polls it ("hangup").
- Anything else is a file under ROOT.
The port is written to PORT_FILE (atomically) once the server listens.
"""
import functools
import http.server
import os
import sys
import urllib.parse


def main():
    root, port_file, status_file = sys.argv[1:4]

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/status":
                text = urllib.parse.unquote(url.query).replace("\n", " ")
                with open(status_file, "a", encoding="utf-8") as f:
                    f.write(text + "\n")
                self.send_response(204)
                self.end_headers()
                return
            if url.path == "/control":
                try:
                    with open(os.path.join(root, "control"), "rb") as f:
                        body = f.read()
                except FileNotFoundError:
                    body = b""
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
    with open(port_file + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
