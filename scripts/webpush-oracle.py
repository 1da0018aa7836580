#!/usr/bin/env python3
"""Decrypts Web Push bodies and checks VAPID headers with Python's http_ece and py_vapid, for the Swift tests.

Reads one JSON object per line on stdin:
  {"body": b64url, "receiver_private": b64url (32 bytes), "auth": b64url, "authorization": "vapid t=..., k=..."}
and writes one per line on stdout:
  {"plaintext": b64url or null, "error": str or null, "vapid": bool, "claims": {...}}
"""
import base64
import json
import sys

import http_ece
import py_vapid
from cryptography.hazmat.primitives.asymmetric import ec


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def check(item):
    result = {"plaintext": None, "error": None, "vapid": False, "claims": None}
    try:
        key = ec.derive_private_key(int.from_bytes(b64url_decode(item["receiver_private"]), "big"), ec.SECP256R1())
        plaintext = http_ece.decrypt(
            b64url_decode(item["body"]), private_key=key, auth_secret=b64url_decode(item["auth"]), version="aes128gcm")
        result["plaintext"] = b64url_encode(plaintext)
    except Exception as error:  # the test reports it
        result["error"] = "decrypt: %s" % error
    try:
        # py_vapid reads "vapid t=...,k=..."; RFC 8292's example puts a space after the comma.
        header = item["authorization"].replace(", ", ",")
        result["vapid"] = bool(py_vapid.Vapid02.verify(header))
        token = header.split("t=", 1)[1].split(",", 1)[0]
        result["claims"] = json.loads(b64url_decode(token.split(".")[1]))
    except Exception as error:
        result["error"] = (result["error"] + "; " if result["error"] else "") + "vapid: %s" % error
    return result


def main():
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(check(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
