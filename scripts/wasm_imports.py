#!/usr/bin/env python3
"""Checks that canister wasm modules import nothing but `ic0.*` functions.

Usage: scripts/wasm_imports.py FILE.wasm|FILE.wasm.gz...

For each module, prints its imports and custom sections; exits 1 when a module cannot be read
or imports anything that is not a function of the `ic0` module (a `wbindgen` or `env` import, a
WASI function, an imported memory, table or global). The IC rejects such modules at install
time, or traps when the import is first used; this check catches them at build time.

Dependency-free on purpose (the Python standard library only): it runs on any machine with
python3, with nothing to compile or install. It reads the wasm binary format directly: the
module header, then each section's id and size; only the import section (id 2) and the names of
custom sections (id 0) are decoded.
"""

import gzip
import sys

IMPORT_KINDS = {0: "func", 1: "table", 2: "memory", 3: "global", 4: "tag"}


class WasmError(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0, end=None):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def byte(self):
        if self.pos >= self.end:
            raise WasmError(f"unexpected end of data at offset {self.pos}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uleb(self):
        result = 0
        shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if b & 0x80 == 0:
                return result
            shift += 7
            if shift > 63:
                raise WasmError(f"LEB128 number too long at offset {self.pos}")

    def bytes(self, n):
        if self.pos + n > self.end:
            raise WasmError(f"unexpected end of data at offset {self.pos} (wanted {n} bytes)")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def name(self):
        raw = self.bytes(self.uleb())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise WasmError(f"a name is not UTF-8: {raw!r}") from e

    def limits(self):
        flags = self.byte()
        self.uleb()  # min
        if flags & 0x01:
            self.uleb()  # max
        if flags & 0x08:
            self.uleb()  # custom page size (log2)


def load(path):
    """The wasm bytes of `path`, gunzipped when the file is gzip-compressed."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def parse(data):
    """Returns (imports, custom_sections): imports as (module, name, kind) triples, custom
    sections as (name, payload bytes) pairs, in module order."""
    if data[:4] != b"\x00asm":
        raise WasmError("not a wasm module (no \\0asm magic)")
    if data[4:8] != b"\x01\x00\x00\x00":
        raise WasmError(f"unsupported wasm version {data[4:8].hex()}")
    r = Reader(data, 8)
    imports = []
    customs = []
    while r.pos < r.end:
        section_id = r.byte()
        size = r.uleb()
        start = r.pos
        if start + size > r.end:
            raise WasmError(f"section {section_id} at offset {start} runs past the end")
        s = Reader(data, start, start + size)
        if section_id == 0:
            name = s.name()
            customs.append((name, data[s.pos : start + size]))
        elif section_id == 2:
            for _ in range(s.uleb()):
                module = s.name()
                field = s.name()
                kind = s.byte()
                if kind == 0:
                    s.uleb()  # type index
                elif kind == 1:
                    s.byte()  # reference type
                    s.limits()
                elif kind == 2:
                    s.limits()
                elif kind == 3:
                    s.byte()  # value type
                    s.byte()  # mutability
                elif kind == 4:
                    s.byte()  # attribute
                    s.uleb()  # type index
                else:
                    raise WasmError(f"unknown import kind {kind} for {module}.{field}")
                imports.append((module, field, IMPORT_KINDS[kind]))
            if s.pos != s.end:
                raise WasmError("the import section has trailing bytes")
        r.pos = start + size
    return imports, customs


def bad_imports(imports):
    """Imports the IC does not provide: anything but a function of module `ic0`."""
    return [(m, n, k) for (m, n, k) in imports if m != "ic0" or k != "func"]


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    failed = False
    for path in argv:
        try:
            imports, customs = parse(load(path))
        except (OSError, EOFError, WasmError) as e:
            print(f"{path}: cannot read the module: {e}", file=sys.stderr)
            failed = True
            continue
        names = ", ".join(f"{m}.{n}" for (m, n, _) in imports)
        print(f"{path}: {len(imports)} imports: {names}")
        print(f"{path}: custom sections: {', '.join(n for n, _ in customs) or '(none)'}")
        bad = bad_imports(imports)
        if not imports:
            print(f"{path}: ERROR: imports nothing; a canister imports ic0 functions", file=sys.stderr)
            failed = True
        for m, n, k in bad:
            print(f"{path}: ERROR: imports {k} {m}.{n}: only ic0 functions exist on the IC", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
