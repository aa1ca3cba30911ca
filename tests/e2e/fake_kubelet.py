#!/usr/bin/env python3
"""A stand-in for the kubelet's authenticated API, GET /pods only (tests/e2e/kubelet_pods_test.sh).

The kubelet (pkg/kubelet/server/server.go) serves HTTPS on port 10250, authenticates a bearer
token (401 "Unauthorized" without a valid one) and answers GET /pods with a v1.PodList in JSON.
This server does the same on 127.0.0.1 with a test certificate: it accepts exactly one token,
serves the pods given as uid=namespace/name arguments in the kubelet's encoding, and appends one
line per request ("<status> <path>") to --requests.

Usage: fake_kubelet.py --cert C --key K --token-file T --port-file P --requests R UID=NS/NAME...
"""
import argparse
import http.server
import json
import os
import ssl
import sys


def pod(uid, namespace, name):
    # The fields the kubelet encodes for a running pod, abridged (core/v1 Pod).
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": "550088",
            "creationTimestamp": "2026-11-20T09:36:45Z",
            "labels": {"app": name.rsplit("-", 1)[0]},
            "annotations": {"kubernetes.io/config.source": "api"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                 "name": name.rsplit("-", 1)[0],
                                 "uid": "22a5a8be-7cee-42cd-a6c3-02b620f4ce88",
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {"containers": [{"name": "main", "image": "nccl-tests:2.13",
                                 "resources": {"limits": {"rdma/hca": "1"}}}],
                 "nodeName": "fwnode1"},
        "status": {"phase": "Running", "podIP": "10.244.3.17"},
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--requests", required=True)
    parser.add_argument("pods", nargs="*")
    args = parser.parse_args()
    with open(args.token_file) as f:
        token = f.read().strip()
    items = []
    for spec in args.pods:
        uid, ns_name = spec.split("=", 1)
        namespace, name = ns_name.split("/", 1)
        items.append(pod(uid, namespace, name))
    body = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {},
                       "items": items}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, status, content_type, payload):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            with open(args.requests, "a") as log:
                log.write(f"{status} {self.path}\n")

        def do_GET(self):
            if self.headers.get("Authorization") != "Bearer " + token:
                self.answer(401, "text/plain; charset=utf-8", b"Unauthorized\n")
            elif self.path != "/pods":
                self.answer(404, "text/plain; charset=utf-8", b"404 page not found\n")
            else:
                self.answer(200, "application/json", body)

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
