#!/usr/bin/env python3
"""Small Candid and JSON helpers for scripts/deploy-local.sh (Python standard library only).

Usage:
  candid_helper.py text-file PATH          a file's content as a Candid text literal ("...")
  candid_helper.py text STRING             STRING as a Candid text literal
  candid_helper.py blob HEX                bytes as a Candid blob literal (blob "\\ab\\cd")
  candid_helper.py confirm-arg ID DIGEST   the Candid encoding of the tool host's
                                           ConfirmArgs { intent_id = ID : nat64; digest = blob }
                                           (DIGEST: 64 hex digits), as a blob literal: the `arg`
                                           of an ICRC-21 consent request for `confirm`
  candid_helper.py confirm-arg --hex ID DIGEST   the same encoding as hex
  candid_helper.py get PATH                reads JSON on stdin (`dfx canister call --output
                                           json`), prints the value at PATH (dot-separated keys
                                           and list indices: Ok.account.owner, Ok.outcome.0;
                                           `@json` parses JSON text: Ok.structured.@json.digest);
                                           a string prints raw, anything else as JSON; exit 1
                                           when absent
  candid_helper.py nat PATH                reads JSON on stdin, prints the number at PATH as
                                           plain digits (dfx writes a nat as text, grouped
                                           with underscores: "849_990_000")
  candid_helper.py account PATH            reads JSON on stdin, prints the ICRC-1 account at
                                           PATH as Candid: record { owner = principal "..";
                                           subaccount = opt blob ".." } (or null)

dfx's JSON output (idl2json) writes `opt x` as `[]` or `[x]`, a blob as an array of numbers,
nat and nat64 as strings (a nat grouped with underscores); `get`, `nat` and `account` accept
those forms.
"""

import json
import struct
import sys


# --- Candid text ---------------------------------------------------------------------------


def candid_text(s):
    """A Candid text literal for `s`: quotes and backslashes escaped, control characters as
    \\u{..}; other characters (all of Unicode) stay as they are (Candid text is UTF-8)."""
    out = ['"']
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append("\\u{%x}" % ord(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def candid_blob(data):
    """A Candid blob literal: every byte as \\HH."""
    return 'blob "' + "".join("\\%02x" % b for b in data) + '"'


# --- Candid binary encoding of ConfirmArgs ---------------------------------------------------


def idl_hash(label):
    """The Candid field id of a label."""
    h = 0
    for b in label.encode("utf-8"):
        h = (h * 223 + b) % (1 << 32)
    return h


def uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and b & 0x40 == 0) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


NAT8 = -5
NAT64 = -8
VEC = -19
RECORD = -20


def encode_confirm_args(intent_id, digest):
    """`record { intent_id : nat64; digest : blob }` with one value, as Candid bytes.

    Type table: 0 = the record, its fields in field-id order; 1 = vec nat8 (blob). The one
    argument has type 0. Values follow in field order: the blob as length + bytes, the nat64 as
    8 bytes little-endian. These are the bytes the Rust candid crate encodes for ConfirmArgs.
    """
    if not 0 <= intent_id < (1 << 64):
        raise ValueError(f"intent id {intent_id} is not a nat64")
    fields = sorted(
        [
            (idl_hash("intent_id"), sleb(NAT64), struct.pack("<Q", intent_id)),
            (idl_hash("digest"), sleb(1), uleb(len(digest)) + bytes(digest)),
        ]
    )
    table = [
        sleb(RECORD) + uleb(len(fields)) + b"".join(uleb(h) + t for h, t, _ in fields),
        sleb(VEC) + sleb(NAT8),
    ]
    return (
        b"DIDL"
        + uleb(len(table))
        + b"".join(table)
        + uleb(1)  # one argument
        + sleb(0)  # of type 0, the record
        + b"".join(v for _, _, v in fields)
    )


# --- JSON from dfx --------------------------------------------------------------------------


def at_path(value, path):
    for key in [k for k in path.split(".") if k != ""]:
        if key == "@json":
            # The value is JSON text (ToolResult.structured, IntentView.preview): parse it.
            if not isinstance(value, str):
                raise KeyError(f"'@json' asked of a {type(value).__name__}, not of text")
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                raise KeyError(f"the text is not JSON ({e})")
        elif isinstance(value, list):
            try:
                value = value[int(key)]
            except (ValueError, IndexError):
                raise KeyError(f"no index '{key}' in a list of {len(value)}")
        elif isinstance(value, dict):
            if key not in value:
                raise KeyError(f"no key '{key}' (keys: {', '.join(value)})")
            value = value[key]
        else:
            raise KeyError(f"'{key}' asked of a {type(value).__name__}")
    return value


def as_bytes(v):
    """Bytes from a blob as dfx's JSON writes it: a list of numbers, or a hex string."""
    if isinstance(v, str):
        return bytes.fromhex(v)
    if isinstance(v, list) and all(isinstance(b, int) and 0 <= b < 256 for b in v):
        return bytes(v)
    raise ValueError(f"not a blob: {json.dumps(v)[:200]}")


def candid_account(v):
    """An ICRC-1 account from dfx's JSON, as a Candid record."""
    owner = v["owner"]
    sub = v.get("subaccount", [])
    # `opt blob`: [] (null), [blob], or — from a tool that writes opt values plainly — the blob.
    if sub is None or sub == []:
        sub_text = "null"
    else:
        inner = sub[0] if isinstance(sub, list) and len(sub) == 1 and isinstance(sub[0], (list, str)) else sub
        sub_text = "opt " + candid_blob(as_bytes(inner))
    return f'record {{ owner = principal {candid_text(owner)}; subaccount = {sub_text} }}'


def read_stdin_json():
    raw = sys.stdin.read()
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise SystemExit(f"candid_helper: the input is not JSON ({e}):\n{raw}")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    if cmd == "text-file" and len(args) == 1:
        with open(args[0], encoding="utf-8") as f:
            print(candid_text(f.read()))
    elif cmd == "text" and len(args) == 1:
        print(candid_text(args[0]))
    elif cmd == "blob" and len(args) == 1:
        print(candid_blob(bytes.fromhex(args[0])))
    elif cmd == "confirm-arg" and len(args) in (2, 3):
        as_hex = args[0] == "--hex"
        if as_hex:
            args = args[1:]
        if len(args) != 2:
            raise SystemExit("usage: candid_helper.py confirm-arg [--hex] ID DIGEST_HEX")
        digest = bytes.fromhex(args[1])
        if len(digest) != 32:
            raise SystemExit(f"candid_helper: a digest is 32 bytes, not {len(digest)}")
        encoded = encode_confirm_args(int(args[0]), digest)
        print(encoded.hex() if as_hex else candid_blob(encoded))
    elif cmd == "get" and len(args) == 1:
        doc = read_stdin_json()
        try:
            v = at_path(doc, args[0])
        except KeyError as e:
            print(f"candid_helper: {args[0]}: {e.args[0]} in:\n{json.dumps(doc, indent=2)}", file=sys.stderr)
            return 1
        print(v if isinstance(v, str) else json.dumps(v))
    elif cmd == "nat" and len(args) == 1:
        doc = read_stdin_json()
        try:
            v = at_path(doc, args[0])
        except KeyError as e:
            print(f"candid_helper: {args[0]}: {e.args[0]} in:\n{json.dumps(doc, indent=2)}", file=sys.stderr)
            return 1
        digits = v.replace("_", "") if isinstance(v, str) else v
        if isinstance(digits, bool) or not (isinstance(digits, int) or (isinstance(digits, str) and digits.isdigit())):
            print(f"candid_helper: {args[0]}: not a natural number: {json.dumps(v)}", file=sys.stderr)
            return 1
        print(int(digits))
    elif cmd == "account" and len(args) == 1:
        doc = read_stdin_json()
        try:
            print(candid_account(at_path(doc, args[0])))
        except (KeyError, ValueError) as e:
            print(f"candid_helper: {args[0]}: {e} in:\n{json.dumps(doc, indent=2)}", file=sys.stderr)
            return 1
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
