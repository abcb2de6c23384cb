#!/usr/bin/env python3
"""Offline check of sia's vcpkg manifest (vcpkg.json) and overlay port (ports/sia/).

    python3 tests/package/check_vcpkg.py <sia-source-dir>

vcpkg cannot be installed on the project's machines and python's jsonschema may be missing, so:
  * both manifests must be valid JSON whose fields follow vcpkg's manifest format (the subset of
    vcpkg-tool's vcpkg.schema.json that sia uses: names, versions, dependencies, features,
    default-features, supports expressions);
  * every dependency must be an existing vcpkg port (KNOWN_PORTS below, from the vcpkg tree
    snapshot recorded in ../shared/docs/dependencies.md §4);
  * the port's features are exactly the backends (cbc -> coin-or-cbc, glpk -> glpk), and every
    library dependency of the CMake build is declared;
  * ports/sia/portfile.cmake is run by CMake with stubbed vcpkg helpers for every feature set
    (tests/package/vcpkg_portfile_stub.cmake): each feature reaches the build as an explicit
    -DSIA_WITH_<X>=ON/OFF naming an option cmake/SiaOptions.cmake declares, the config is fixed
    up as package 'sia' from lib/cmake/sia, and usage + copyright are installed.
What it cannot check: vcpkg's version resolution against a baseline, and the real port build.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Ports of the vcpkg snapshot (dependencies.md §4), plus nlohmann-json and nlopt (the vcpkg
# ports of nlohmann/json and NLopt) and vcpkg's own CMake helper ports.
KNOWN_PORTS = {
    "coin-or-cbc", "coin-or-clp", "coin-or-osi", "coin-or-cgl", "coinutils", "glpk", "eigen3",
    "boost-graph", "doctest", "benchmark", "highs", "nlohmann-json", "nlopt",
    "tbb", "vcpkg-cmake", "vcpkg-cmake-config",
}
# CMake package names found by the library build -> vcpkg port providing them.
CMAKE_TO_PORT = {
    "Eigen3": "eigen3",
    "Boost": "boost-graph",
    "nlohmann_json": "nlohmann-json",
    "NLopt": "nlopt",
    "TBB": "tbb",
    "coin-cbc": "coin-or-cbc",
    "glpk": "glpk",
}
CMAKE_IGNORED = {"Threads", "PkgConfig", "SiaCbc", "SiaGlpk"}
# Optional dependencies the port must switch off explicitly (CMake package -> sia option).
OFF_IN_PACKAGES = {"Qhull": "SIA_WITH_QHULL"}
BACKEND_PORTS = {"cbc": "coin-or-cbc", "glpk": "glpk"}

TOP_LEVEL_KEYS = {
    "$schema", "$comment", "name", "version", "version-semver", "version-date", "version-string",
    "port-version", "maintainers", "summary", "description", "homepage", "documentation",
    "license", "supports", "dependencies", "default-features", "features", "builtin-baseline",
    "overrides", "vcpkg-configuration",
}
DEPENDENCY_KEYS = {"$comment", "name", "host", "features", "default-features", "platform", "version>="}
FEATURE_KEYS = {"$comment", "description", "dependencies", "supports", "license"}
IDENTIFIER = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
RESERVED = {"prn", "aux", "nul", "con", "lpt1", "lpt2", "lpt3", "com1", "com2", "com3", "core", "default"}
PLATFORM_WORDS = {
    "windows", "linux", "osx", "uwp", "android", "emscripten", "wasm32", "x64", "x86", "arm", "arm32",
    "arm64", "static", "staticcrt", "native", "mingw", "freebsd", "openbsd", "ios", "xbox", "osx", "loongarch64",
}


def check_platform_expression(expr, where, fail):
    tokens = re.findall(r"[A-Za-z0-9_-]+|[!&|(),]|\S", expr)
    depth = 0
    for t in tokens:
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth < 0:
                fail(f"{where}: unbalanced parentheses in '{expr}'")
        elif t in "!&|,":
            continue
        elif t not in PLATFORM_WORDS:
            fail(f"{where}: unknown platform identifier '{t}' in '{expr}'")
    if depth != 0:
        fail(f"{where}: unbalanced parentheses in '{expr}'")


def check_dependency(dep, where, fail):
    if isinstance(dep, str):
        name = dep
    elif isinstance(dep, dict):
        unknown = set(dep) - DEPENDENCY_KEYS
        if unknown:
            fail(f"{where}: unknown dependency fields {sorted(unknown)}")
        name = dep.get("name")
        if not isinstance(name, str):
            fail(f"{where}: dependency without a name: {dep}")
            return None
        if "host" in dep and not isinstance(dep["host"], bool):
            fail(f"{where}: 'host' of {name} must be a boolean")
        if "platform" in dep:
            check_platform_expression(dep["platform"], f"{where} {name}", fail)
        for f in dep.get("features", []):
            if not isinstance(f, (str, dict)):
                fail(f"{where}: bad feature entry of {name}")
    else:
        fail(f"{where}: a dependency must be a string or an object, got {dep!r}")
        return None
    if not IDENTIFIER.match(name):
        fail(f"{where}: '{name}' is not a valid port name")
    if name not in KNOWN_PORTS:
        fail(f"{where}: '{name}' is not a known vcpkg port")
    return name


def check_manifest(path, fail):
    where = os.path.relpath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{where}: not valid JSON: {e}")
        return None
    if not isinstance(data, dict):
        fail(f"{where}: top level must be an object")
        return None
    unknown = set(data) - TOP_LEVEL_KEYS
    if unknown:
        fail(f"{where}: unknown fields {sorted(unknown)}")
    name = data.get("name")
    if name is not None and (not isinstance(name, str) or not IDENTIFIER.match(name) or name in RESERVED):
        fail(f"{where}: invalid name {name!r}")
    versions = [k for k in ("version", "version-semver", "version-date", "version-string") if k in data]
    if len(versions) > 1:
        fail(f"{where}: more than one version field {versions}")
    if name is not None and not versions:
        fail(f"{where}: a named manifest needs a version")
    if "version" in data and not re.fullmatch(r"\d+(\.\d+)*", str(data["version"])):
        fail(f"{where}: 'version' must be dot-separated numbers, got {data['version']!r}")
    if "port-version" in data and (not isinstance(data["port-version"], int) or data["port-version"] < 0):
        fail(f"{where}: 'port-version' must be a non-negative integer")
    desc = data.get("description")
    if desc is not None and not (isinstance(desc, str) or (isinstance(desc, list) and all(isinstance(d, str) for d in desc))):
        fail(f"{where}: 'description' must be a string or a list of strings")
    if "supports" in data:
        check_platform_expression(data["supports"], f"{where} supports", fail)
    deps = []
    for dep in data.get("dependencies", []):
        n = check_dependency(dep, where, fail)
        if n:
            deps.append(n)
    if len(deps) != len(set(deps)):
        fail(f"{where}: duplicated dependencies {deps}")
    features = data.get("features", {})
    if not isinstance(features, dict):
        fail(f"{where}: 'features' must be an object")
        features = {}
    feature_deps = {}
    for fname, feature in features.items():
        if not IDENTIFIER.match(fname) or fname in RESERVED:
            fail(f"{where}: invalid feature name '{fname}'")
        if not isinstance(feature, dict) or "description" not in feature:
            fail(f"{where}: feature '{fname}' needs a description")
            continue
        unknown = set(feature) - FEATURE_KEYS
        if unknown:
            fail(f"{where}: feature '{fname}' has unknown fields {sorted(unknown)}")
        feature_deps[fname] = [n for n in (check_dependency(d, f"{where} feature {fname}", fail)
                                           for d in feature.get("dependencies", [])) if n]
    for df in data.get("default-features", []):
        dname = df if isinstance(df, str) else (df.get("name") if isinstance(df, dict) else None)
        if dname not in features:
            fail(f"{where}: default feature {df!r} is not a declared feature")
    return {"data": data, "deps": deps, "features": feature_deps}


def cmake_dependencies(src):
    names = set()
    for rel in ["CMakeLists.txt", "cmake/FindSiaCbc.cmake", "cmake/FindSiaGlpk.cmake", "cmake/SiaOptions.cmake"]:
        text = re.sub(r"#[^\n]*", "", open(os.path.join(src, rel)).read())
        names |= set(re.findall(r"find_package\(\s*([A-Za-z0-9_.+-]+)", text))
    return names - CMAKE_IGNORED


def cmake_declared_options(src):
    text = open(os.path.join(src, "cmake", "SiaOptions.cmake")).read()
    return set(re.findall(r"option\((SIA_\w+)", text)) | set(re.findall(r"set\((SIA_WITH_\w+)[^)]*CACHE", text))


def run_portfile(src, features, windows, fail):
    stub = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vcpkg_portfile_stub.cmake")
    with tempfile.TemporaryDirectory() as out:
        cmd = ["cmake", f"-DPORTFILE={os.path.join(src, 'ports', 'sia', 'portfile.cmake')}",
               f"-DFEATURES={';'.join(features)}", f"-DOUT={out}/port",
               f"-DVCPKG_TARGET_IS_WINDOWS={'ON' if windows else 'OFF'}", "-P", stub]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    label = f"portfile [{','.join(features)}{' windows' if windows else ''}]"
    if proc.returncode != 0:
        fail(f"{label}: cmake -P failed:\n{proc.stdout}{proc.stderr}")
        return
    calls = {}
    files = set()
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("CALL "):
            parts = line.split()
            calls.setdefault(parts[1], []).append(parts[2:])
        elif line.startswith("FILE "):
            files.add(line[5:].strip())
    for required in ["vcpkg_check_features", "vcpkg_cmake_configure", "vcpkg_cmake_install",
                     "vcpkg_cmake_config_fixup", "vcpkg_install_copyright"]:
        if required not in calls:
            fail(f"{label}: the portfile does not call {required}")
    configure = calls.get("vcpkg_cmake_configure", [[]])[0]
    declared = cmake_declared_options(src)
    for backend in BACKEND_PORTS:
        option = f"SIA_WITH_{backend.upper()}"
        want = f"-D{option}={'ON' if backend in features else 'OFF'}"
        if want not in configure:
            fail(f"{label}: expected {want} in the configure options {configure}")
        if option not in declared:
            fail(f"{label}: {option} is not declared in cmake/SiaOptions.cmake")
    for opt in configure:
        m = re.match(r"-D(SIA_\w+)=", opt)
        if m and m.group(1) not in declared:
            fail(f"{label}: configure option {m.group(1)} is not declared in cmake/SiaOptions.cmake")
    for off in ["SIA_BUILD_TESTS", "SIA_BUILD_EXAMPLES", "SIA_BUILD_BENCH", *OFF_IN_PACKAGES.values()]:
        if f"-D{off}=OFF" not in configure:
            fail(f"{label}: the port must configure with -D{off}=OFF")
    fixup = calls.get("vcpkg_cmake_config_fixup", [[]])[0]
    if fixup != ["PACKAGE_NAME=sia", "CONFIG_PATH=lib/cmake/sia"]:
        fail(f"{label}: vcpkg_cmake_config_fixup must be (PACKAGE_NAME sia CONFIG_PATH lib/cmake/sia), got {fixup}")
    if ("cbc" in features or "glpk" in features) and "PKGCONFIG" not in sum(calls.get("vcpkg_find_acquire_program", []), []):
        fail(f"{label}: backends are found through pkg-config: vcpkg_find_acquire_program(PKGCONFIG) needed")
    if windows and calls.get("vcpkg_check_linkage") != [["ONLY_STATIC_LIBRARY"]]:
        fail(f"{label}: Windows builds must be static (no dllexport annotations)")
    if "share/sia/usage" not in files:
        fail(f"{label}: the usage file is not installed to share/sia/usage")


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    errors = []
    fail = errors.append
    root = check_manifest(os.path.join(src, "vcpkg.json"), fail)
    port = check_manifest(os.path.join(src, "ports", "sia", "vcpkg.json"), fail)

    project = re.search(r"project\(sia VERSION ([0-9.]+)", open(os.path.join(src, "CMakeLists.txt")).read())
    needed = {CMAKE_TO_PORT.get(n) for n in cmake_dependencies(src)}
    for n in sorted(cmake_dependencies(src)):
        if n not in CMAKE_TO_PORT and n not in OFF_IN_PACKAGES:
            fail(f"the CMake build finds '{n}', which this check does not map to a vcpkg port")
    library_needed = needed - set(BACKEND_PORTS.values()) - {None}

    if port:
        data = port["data"]
        if data.get("name") != "sia":
            fail("ports/sia/vcpkg.json: name must be 'sia'")
        if project and data.get("version") != project.group(1):
            fail(f"ports/sia/vcpkg.json: version {data.get('version')} != CMake project version {project.group(1)}")
        if set(port["features"]) != set(BACKEND_PORTS):
            fail(f"ports/sia/vcpkg.json: features {sorted(port['features'])} != {sorted(BACKEND_PORTS)}")
        for feature, dep in BACKEND_PORTS.items():
            if port["features"].get(feature) != [dep]:
                fail(f"ports/sia/vcpkg.json: feature {feature} must depend on {dep}")
        for helper in ["vcpkg-cmake", "vcpkg-cmake-config"]:
            entry = [d for d in data.get("dependencies", []) if isinstance(d, dict) and d.get("name") == helper]
            if not entry or entry[0].get("host") is not True:
                fail(f"ports/sia/vcpkg.json: needs {{\"name\": \"{helper}\", \"host\": true}}")
        for dep in sorted(library_needed - set(port["deps"])):
            fail(f"ports/sia/vcpkg.json: the library needs port '{dep}'")
        if "glpk" in data.get("default-features", []):
            fail("ports/sia/vcpkg.json: glpk (GPL-3.0-or-later) must not be a default feature")
        usage = os.path.join(src, "ports", "sia", "usage")
        if not os.path.exists(usage) or "find_package(sia" not in open(usage).read() or "sia::sia" not in open(usage).read():
            fail("ports/sia/usage must show find_package(sia ...) and sia::sia")
        for features in [["core"], ["core", "cbc"], ["core", "glpk"], ["core", "cbc", "glpk"]]:
            run_portfile(src, features, False, fail)
        run_portfile(src, ["core", "cbc"], True, fail)
    if root:
        for dep in sorted(library_needed - set(root["deps"])):
            fail(f"vcpkg.json: the library needs port '{dep}'")
        for feature, dep in BACKEND_PORTS.items():
            if dep not in root["features"].get(feature, []):
                fail(f"vcpkg.json: feature {feature} must depend on {dep}")
        all_root = set(root["deps"]) | {d for ds in root["features"].values() for d in ds}
        for test_dep in ["doctest", "benchmark"]:
            if test_dep not in all_root:
                fail(f"vcpkg.json: the development manifest needs '{test_dep}'")
        if "glpk" in root["data"].get("default-features", []):
            fail("vcpkg.json: glpk (GPL-3.0-or-later) must not be a default feature")

    for e in dict.fromkeys(errors):
        print("error:", e)
    print(f"check_vcpkg: vcpkg.json, ports/sia/vcpkg.json and 5 portfile runs checked, {len(set(errors))} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
