#!/usr/bin/env python3
"""What a release wasm must say about itself, read from the sources it was built from.

Usage:
  scripts/release_facts.py candid-args DID     the install argument types of DID's service line,
                                               as dfx writes them into `candid:args`: `(HostArg)`
  scripts/release_facts.py version NAME        the version of the workspace package NAME
                                               (src/*/Cargo.toml, `version.workspace = true`
                                               read from the workspace's Cargo.toml)
  scripts/release_facts.py sizes NAME=BYTES... checks the gzipped sizes docs/deploy.md states
                                               against the built ones (within SIZE_TOLERANCE)

scripts/build.sh writes the first two into the module's public metadata (`candid:args` and
`app:version`), and scripts/check_dfx_json.py --built reads them back from out/<name>.wasm.gz
and compares. Exits 1 with a message when a fact cannot be read or does not hold. Python
standard library only (`version` needs 3.11+, for tomllib).
"""

import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11: only `version` needs it, and says so
    tomllib = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEPLOY_MD = os.path.join(ROOT, "docs", "deploy.md")

# How far a size docs/deploy.md states may be from the built one (a fraction of the built size).
# Wide enough that an ordinary change does not make every commit edit the docs; narrow enough
# that a figure stays a true order of magnitude (the docs say so next to the figures).
SIZE_TOLERANCE = 0.10


class FactError(Exception):
    pass


def service_args(did_text, where="the .did"):
    """The argument list of the `service : (...) -> ...` line, whitespace collapsed: `(HostArg)`,
    `(opt InitArgs)`, `()` for a service without an install argument. Comments are skipped."""
    text = re.sub(r"//[^\n]*", "", did_text)
    m = re.search(r"^service\s*:\s*", text, re.MULTILINE)
    if not m:
        raise FactError(f"{where}: no `service :` line")
    pos = m.end()
    if not text.startswith("(", pos):
        # `service : { ... }`: no install argument.
        return "()"
    depth = 0
    for i in range(pos, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                if not re.match(r"\s*->", text[i + 1 :]):
                    raise FactError(f"{where}: the service's argument list is not followed by `->`")
                return " ".join(text[pos : i + 1].split())
    raise FactError(f"{where}: the service's argument list is not closed")


def candid_args(did_path):
    with open(did_path, encoding="utf-8") as f:
        return service_args(f.read(), os.path.relpath(did_path, ROOT))


def _manifest(path):
    if tomllib is None:
        raise FactError(f"reading {os.path.relpath(path, ROOT)} needs Python 3.11 or later (tomllib)")
    with open(path, "rb") as f:
        return tomllib.load(f)


def crate_version(name):
    """The version of the workspace package `name`, following `version.workspace = true`."""
    src = os.path.join(ROOT, "src")
    for d in sorted(os.listdir(src)):
        path = os.path.join(src, d, "Cargo.toml")
        if not os.path.isfile(path):
            continue
        package = _manifest(path).get("package", {})
        if package.get("name") != name:
            continue
        version = package.get("version")
        if isinstance(version, dict) and version.get("workspace") is True:
            version = _manifest(os.path.join(ROOT, "Cargo.toml")).get("workspace", {}).get("package", {}).get("version")
        if not isinstance(version, str) or not version:
            raise FactError(f"src/{d}/Cargo.toml: package {name} has no version")
        return version
    raise FactError(f"no package {name!r} in the workspace (src/*/Cargo.toml)")


# docs/deploy.md states, in a ```text block, one line per canister as scripts/build.sh prints it:
#   tool_host: cargo 2682964 bytes, shrunk with metadata 2026588 bytes, gzipped 592029 bytes
SIZE_LINE = re.compile(r"^(\w+): cargo (\d+) bytes, shrunk with metadata (\d+) bytes, gzipped (\d+) bytes$", re.MULTILINE)


def documented_sizes():
    """{name: gzipped bytes} as docs/deploy.md states them."""
    with open(DEPLOY_MD, encoding="utf-8") as f:
        return {m.group(1): int(m.group(4)) for m in SIZE_LINE.finditer(f.read())}


def size_problems(built):
    """`built`: {name: gzipped bytes of out/<name>.wasm.gz}. A problem for each canister whose
    documented size is missing or off by more than SIZE_TOLERANCE."""
    stated = documented_sizes()
    problems = []
    for name, size in sorted(built.items()):
        if name not in stated:
            problems.append(f"docs/deploy.md states no size for {name} (a line `{name}: cargo N bytes, ...` as build.sh prints it)")
            continue
        off = abs(stated[name] - size) / size
        if off > SIZE_TOLERANCE:
            problems.append(
                f"docs/deploy.md says {name} is {stated[name]} bytes gzipped, the build made {size} "
                f"({off:.0%} off, more than {SIZE_TOLERANCE:.0%}): copy the sizes build.sh printed into docs/deploy.md"
            )
    return problems


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    try:
        if command == "candid-args" and len(args) == 1:
            print(candid_args(args[0]))
        elif command == "version" and len(args) == 1:
            print(crate_version(args[0]))
        elif command == "sizes" and args:
            built = {}
            for a in args:
                name, _, size = a.partition("=")
                size = size.strip()
                if not size.isdigit():
                    raise FactError(f"sizes: {a!r} is not NAME=BYTES")
                built[name] = int(size)
            problems = size_problems(built)
            for p in problems:
                print(f"release_facts: {p}", file=sys.stderr)
            if problems:
                return 1
            for name, size in sorted(built.items()):
                print(f"{name}: {size} bytes gzipped; docs/deploy.md says {documented_sizes()[name]} (within {SIZE_TOLERANCE:.0%})")
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except (OSError, ValueError, FactError) as e:  # tomllib.TOMLDecodeError is a ValueError
        print(f"release_facts: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
