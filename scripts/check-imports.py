#!/usr/bin/env python3
"""Every module a target's sources import is one Package.swift lists among its dependencies, and every target of
this package it lists is imported: the arrows the README draws are the arrows the code has. Swift would otherwise
let a file use a module only because another target linked it in. Run from the package's folder; exits 1 with a line
per difference.

    python3 scripts/check-imports.py
"""
import pathlib
import re
import sys

# The toolchain's own modules, imported without being declared.
TOOLCHAIN = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Musl", "Darwin",
             "Testing", "XCTest", "FoundationXML", "Synchronization", "_Concurrency", "os", "CoreFoundation"}

package = pathlib.Path("Package.swift").read_text()
targets = {}
for match in re.finditer(r'\.(target|testTarget|executableTarget)\(\s*name: "([^"]+)"(.*?)\)(?=,\s*(?://[^\n]*\n\s*)*\.(?:target|testTarget|executableTarget)\(|,?\s*\]\s*\))',
                         package, re.S):
    kind, name, rest = match.groups()
    dependencies = set()
    block = re.search(r"dependencies:\s*\[([^\]]*)", rest)
    if block:
        text = re.sub(r"//[^\n]*", "", block.group(1))
        dependencies |= set(re.findall(r'\.product\(name: "([^"]+)"', text))
        dependencies |= set(re.findall(r'(?<![:\w])"([^"]+)"(?!\s*,\s*package)', re.sub(r"\.product\([^)]*\)", "", text)))
    path = re.search(r'path: "([^"]+)"', rest)
    folder = pathlib.Path(path.group(1) if path else ("Tests/" if kind == "testTarget" else "Sources/") + name)
    targets[name] = (folder, dependencies, kind)

own = set(targets)
problems = []
# An executable is listed to be built first (a test runs it), not imported.
executables = {name for name, (_, _, kind) in targets.items() if kind == "executableTarget"}
for name, (folder, declared, _) in sorted(targets.items()):
    imported = set()
    for source in folder.rglob("*.swift"):
        if "Fixtures" in source.parts or "Golden" in source.parts:
            continue
        for line in source.read_text().splitlines():
            found = re.match(r"(?:@testable\s+|@_exported\s+|@preconcurrency\s+|(?:public|package|internal)\s+)*import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)", line)
            if found:
                imported.add(found.group(1))
    imported -= TOOLCHAIN | {name}
    for module in sorted(imported - declared):
        problems.append(f"{name}: imports {module}, which Package.swift does not list among its dependencies")
    for module in sorted((declared & own) - executables - imported):
        problems.append(f"{name}: lists {module} among its dependencies but imports it nowhere")
print("\n".join(problems) if problems else f"check-imports: {len(targets)} targets, each imports what it declares")
sys.exit(1 if problems else 0)
