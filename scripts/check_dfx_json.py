#!/usr/bin/env python3
"""Keeps dfx.json honest: checks that what it names exists and is what it says.

Usage: scripts/check_dfx_json.py [--built [NAME...]]

Always (before any build):
  - every canister is `"type": "custom"` with `"wasm": "out/<name>.wasm.gz"`,
    `"candid": "candid/<name>.did"`, and a `"build"` command whose program exists in the
    repository and is executable;
  - each canister is a package of the Cargo workspace (a `src/*/Cargo.toml` with that name);
  - the canisters are exactly those scripts/build.sh builds (its ALL_CANISTERS), and each
    .did has a `service : (ARGS) -> ...` line (the `candid:args` metadata comes from it);
  - icp.yaml (icp-cli) defines the same canisters, each built by `scripts/build.sh <name>` and
    handing icp `out/<name>.wasm.gz` (read as text: the standard library has no YAML parser).
With --built (scripts/build.sh runs this after building), for the named canisters (all when
none is named):
  - the wasm file exists, is a gzip-compressed wasm module, imports only ic0 functions, and
    carries public metadata: `candid:service` equal to the canister's .did file,
    `candid:args` equal to the .did service line's arguments, `app:version` equal to the
    package version (scripts/release_facts.py).

Exits 1 and says what is wrong otherwise. Python standard library only.
"""

import json
import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no scripts/__pycache__ in the work tree

import release_facts  # noqa: E402  (scripts/release_facts.py)
import wasm_imports  # noqa: E402  (scripts/wasm_imports.py)



def built_by_build_sh():
    """The canisters scripts/build.sh builds: its `ALL_CANISTERS=(...)` line."""
    with open(os.path.join(HERE, "build.sh"), encoding="utf-8") as f:
        m = re.search(r"^ALL_CANISTERS=\(([^)]*)\)", f.read(), re.MULTILINE)
    if not m:
        raise SystemExit("check_dfx_json: scripts/build.sh has no ALL_CANISTERS=(...) line")
    return set(m.group(1).split())


def workspace_packages():
    names = set()
    src = os.path.join(ROOT, "src")
    for d in sorted(os.listdir(src)):
        manifest = os.path.join(src, d, "Cargo.toml")
        if not os.path.isfile(manifest):
            continue
        with open(manifest, encoding="utf-8") as f:
            in_package = False
            for line in f:
                s = line.strip()
                if s.startswith("["):
                    in_package = s == "[package]"
                    continue
                m = re.match(r'name\s*=\s*"([^"]+)"', s)
                if in_package and m:
                    names.add(m.group(1))
                    break
    return names


def static_problems(config):
    problems = []
    canisters = config.get("canisters")
    if not isinstance(canisters, dict) or not canisters:
        return ["dfx.json has no canisters"]
    names = set(canisters)
    built = built_by_build_sh()
    if names != built:
        problems.append(f"dfx.json names the canisters {sorted(names)}, scripts/build.sh builds {sorted(built)}")
    packages = workspace_packages()
    for name, c in sorted(canisters.items()):
        where = f"canisters.{name}"
        if c.get("type") != "custom":
            problems.append(f'{where}.type is {c.get("type")!r}, not "custom"')
        if c.get("wasm") != f"out/{name}.wasm.gz":
            problems.append(f'{where}.wasm is {c.get("wasm")!r}, but scripts/build.sh writes "out/{name}.wasm.gz"')
        candid = c.get("candid")
        if candid != f"candid/{name}.did":
            problems.append(f'{where}.candid is {candid!r}, not "candid/{name}.did"')
        if not isinstance(candid, str) or not os.path.isfile(os.path.join(ROOT, candid or "")):
            problems.append(f"{where}.candid: no file {candid!r}")
        build = c.get("build")
        commands = [build] if isinstance(build, str) else build
        if not isinstance(commands, list) or not commands or not all(isinstance(x, str) for x in commands):
            problems.append(f"{where}.build is not a command or a list of commands")
        else:
            for command in commands:
                words = shlex.split(command)
                program = os.path.join(ROOT, words[0]) if words else ""
                if not words or not os.path.isfile(program):
                    problems.append(f"{where}.build: no program {command!r} in the repository")
                elif not os.access(program, os.X_OK):
                    problems.append(f"{where}.build: {words[0]} is not executable")
                elif words[1:] and words[1:] != [name]:
                    problems.append(f"{where}.build: {command!r} builds {words[1:]}, not {name}")
        if name not in packages:
            problems.append(f"{where}: no package {name!r} in the workspace (src/*/Cargo.toml)")
        if isinstance(candid, str) and os.path.isfile(os.path.join(ROOT, candid)):
            try:
                release_facts.candid_args(os.path.join(ROOT, candid))
            except release_facts.FactError as e:
                problems.append(str(e))
    return problems + icp_yaml_problems(built)


def icp_yaml_problems(built):
    """icp.yaml's canisters are build.sh's, each with the script step that builds it with
    build.sh and copies out/<name>.wasm.gz to icp's output path."""
    path = os.path.join(ROOT, "icp.yaml")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return [f"cannot read icp.yaml: {e}"]
    # Each canister: from its `- name: X` line to the next one.
    starts = list(re.finditer(r"^  - name: (\S+)\s*$", text, re.MULTILINE))
    names = [m.group(1) for m in starts]
    problems = []
    if set(names) != built or len(names) != len(set(names)):
        problems.append(f"icp.yaml names the canisters {names}, scripts/build.sh builds {sorted(built)}")
    for i, m in enumerate(starts):
        name = m.group(1)
        block = text[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        commands = re.findall(r"^\s+- (.+?)\s*$", block, re.MULTILINE)
        expected = [f"scripts/build.sh {name}", f'cp out/{name}.wasm.gz "$ICP_WASM_OUTPUT_PATH"']
        if "type: script" not in block or [c for c in commands if not c.startswith("type:")] != expected:
            problems.append(f"icp.yaml: canister {name} is not built by one script step running {expected}")
    return problems


def built_problems(config, names):
    problems = []
    canisters = config.get("canisters") or {}
    for name in names or sorted(canisters):
        c = canisters.get(name)
        if c is None:
            problems.append(f"dfx.json has no canister {name!r}")
            continue
        wasm = os.path.join(ROOT, c.get("wasm", ""))
        did = os.path.join(ROOT, c.get("candid", ""))
        if not os.path.isfile(wasm):
            problems.append(f"{name}: no built wasm {c.get('wasm')!r} (run scripts/build.sh)")
            continue
        with open(wasm, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                problems.append(f"{name}: {c.get('wasm')} is not gzip-compressed")
                continue
        try:
            imports, customs = wasm_imports.parse(wasm_imports.load(wasm))
        except (OSError, EOFError, wasm_imports.WasmError) as e:
            problems.append(f"{name}: {c.get('wasm')} is not a wasm module: {e}")
            continue
        for m, n, k in wasm_imports.bad_imports(imports):
            problems.append(f"{name}: imports {k} {m}.{n}")
        sections = dict(customs)
        service = sections.get("icp:public candid:service")
        if service is None:
            problems.append(f"{name}: no public candid:service metadata (sections: {sorted(sections)})")
        elif os.path.isfile(did):
            with open(did, "rb") as f:
                if service != f.read():
                    problems.append(f"{name}: the candid:service metadata differs from {c.get('candid')}")
        expected = {}
        try:
            expected["candid:args"] = release_facts.candid_args(did).encode()
            expected["app:version"] = release_facts.crate_version(name).encode()
        except release_facts.FactError as e:
            problems.append(f"{name}: {e}")
        for key, want in expected.items():
            got = sections.get(f"icp:public {key}")
            if got is None:
                problems.append(f"{name}: no public {key} metadata (sections: {sorted(sections)})")
            elif got != want:
                problems.append(f"{name}: the {key} metadata is {got.decode(errors='replace')!r}, not {want.decode()!r}")
        carried = ", ".join(
            f"{k} = {sections[f'icp:public {k}'].decode(errors='replace')}" for k in expected if f"icp:public {k}" in sections
        )
        print(f"{name}: {c.get('wasm')}: {len(imports)} ic0 imports, candid:service = {c.get('candid')}, {carried}")
    return problems


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    built = bool(argv) and argv[0] == "--built"
    names = argv[1:] if built else argv
    if names and not built:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = os.path.join(ROOT, "dfx.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"check_dfx_json: cannot read {path}: {e}", file=sys.stderr)
        return 1
    problems = static_problems(config)
    if built:
        problems += built_problems(config, names)
    for p in problems:
        print(f"check_dfx_json: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"dfx.json: {len(config['canisters'])} canisters, paths and build commands check out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
