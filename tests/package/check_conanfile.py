#!/usr/bin/env python3
"""Offline behavioural check of sia's Conan 2 recipe (Conan itself cannot be installed here).

    python3 tests/package/check_conanfile.py <sia-source-dir> [<scratch-dir>]

Stubs the `conan` module, loads conanfile.py and test_package/conanfile.py, and for every option
combination (shared x fPIC x with_cbc x with_glpk) on Linux and Windows, with and without the
simulator library in the package, runs config_options, configure, requirements,
build_requirements, validate, generate and package_info. It checks that:
  * options and default_options agree; GLPK (GPL-3.0) is off and CBC on by default;
  * the requirements are the Conan Center packages the CMake build looks for, each under its option;
  * generate() passes SIA_WITH_CBC / SIA_WITH_GLPK as explicit ON/OFF (never AUTO) and the cache
    variables it sets are options the CMake project declares;
  * package_info() declares cmake_file_name "sia" and components core/sia(/cbc/glpk/sim) with the
    target names siaConfig.cmake uses, whose `requires` name declared requirements and existing
    components of them (Conan Center component names), and uses every requirement (Conan 2 rule);
  * every find_package() of the library's CMake build maps to a declared requirement;
  * with a scratch dir: exports_sources alone (copied there) configure with CMake using the cache
    variables generate() sets.
What it cannot check: Conan's real graph resolution, package_id, CMakeDeps output, and whether the
dependencies build (see README).
"""
import importlib.util
import itertools
import os
import re
import sys
import tempfile
import types

sys.dont_write_bytecode = True  # loading the recipes must not write __pycache__ into the sources

# --------------------------------------------------------------------------------------------
# Knowledge of Conan Center used by the checks
# --------------------------------------------------------------------------------------------
# CMake package names (find_package) of sia's build -> Conan Center package providing them.
CMAKE_TO_CONAN = {
    "Eigen3": "eigen",
    "Boost": "boost",
    "nlohmann_json": "nlohmann_json",
    "NLopt": "nlopt",
    "TBB": "onetbb",
    "coin-cbc": "coin-cbc",
    "glpk": "glpk",
}
# Not dependencies of the packaged library (CMake built-ins, sia's own Find modules).
CMAKE_IGNORED = {"Threads", "PkgConfig", "SiaCbc", "SiaGlpk"}
# Optional dependencies the recipe must switch off explicitly (CMake package -> sia option).
OFF_IN_PACKAGES = {"Qhull": "SIA_WITH_QHULL"}
# Accepted `pkg::component` references: components of the Conan Center recipes, or the root
# reference `pkg::pkg` for recipes without components (coin-cbc::coin-cbc means all of CBC).
CCI_COMPONENTS = {
    "eigen": {"eigen3"},
    "boost": {"headers"},
    "nlohmann_json": {"nlohmann_json"},
    "nlopt": {"nlopt"},
    "onetbb": {"libtbb", "tbbmalloc", "tbbmalloc_proxy"},
    "coin-cbc": {"coin-cbc", "libcbc", "osi-cbc"},
    "glpk": {"glpk"},
}
OPTIONAL_REQUIREMENT = {"coin-cbc": "with_cbc", "glpk": "with_glpk"}


class CheckError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# The `conan` stub
# --------------------------------------------------------------------------------------------
class ConanException(Exception):
    pass


class ConanInvalidConfiguration(ConanException):
    pass


class Options:
    """self.options: attribute access to the recipe's options; ["dep/*"] for dependencies."""

    def __init__(self, values):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_deps", {})

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise ConanException(f"option '{name}' doesn't exist")
        return values[name]

    def __setattr__(self, name, value):
        if name not in self._values:
            raise ConanException(f"option '{name}' doesn't exist")
        self._values[name] = value

    def __delattr__(self, name):
        if name not in self._values:
            raise ConanException(f"option '{name}' doesn't exist")
        del self._values[name]

    def rm_safe(self, name):
        self._values.pop(name, None)

    def get_safe(self, name, default=None):
        return self._values.get(name, default)

    def __contains__(self, name):
        return name in self._values

    def __getitem__(self, pattern):
        return self._deps.setdefault(pattern, types.SimpleNamespace())


class Component:
    def __init__(self):
        self.properties = {}
        self.requires = []
        self.libs = []
        self.system_libs = []
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.includedirs = ["include"]
        self.defines = []

    def set_property(self, name, value):
        self.properties[name] = value


class CppInfo(Component):
    def __init__(self):
        super().__init__()
        self.components = _AutoDict()


class _AutoDict(dict):
    def __missing__(self, key):
        self[key] = Component()
        return self[key]


class ConanFile:
    def __init__(self, settings, options, package_folder=None):
        self.settings = settings
        self.options = options
        self.package_folder = package_folder
        self.source_folder = "."
        self.cpp_info = CppInfo()
        self.ref = getattr(self, "name", "pkg") + "/" + getattr(self, "version", "0")
        self.tested_reference_str = self.ref
        self.recorded = {"requires": [], "tool_requires": [], "test_requires": []}

    def requires(self, ref, **kwargs):
        self.recorded["requires"].append((ref, kwargs))

    def tool_requires(self, ref, **kwargs):
        self.recorded["tool_requires"].append((ref, kwargs))

    def test_requires(self, ref, **kwargs):
        self.recorded["test_requires"].append((ref, kwargs))

    def run(self, *args, **kwargs):
        pass


class CMakeToolchain:
    last = None

    def __init__(self, conanfile):
        self.cache_variables = {}
        self.variables = {}
        self.preprocessor_definitions = {}
        self.generated = False
        CMakeToolchain.last = self

    def generate(self):
        self.generated = True


class CMakeDeps:
    generated = 0

    def __init__(self, conanfile):
        pass

    def set_property(self, *args):
        pass

    def generate(self):
        CMakeDeps.generated += 1


class CMake:
    def __init__(self, conanfile):
        pass

    def configure(self, *args, **kwargs):
        pass

    def build(self, *args, **kwargs):
        pass

    def install(self, *args, **kwargs):
        pass


def check_min_cppstd(conanfile, std):
    if int(std) != 20:
        raise CheckError(f"check_min_cppstd({std}): sia is C++20")


def install_stub():
    modules = {}
    for name in ["conan", "conan.errors", "conan.tools", "conan.tools.build", "conan.tools.cmake",
                 "conan.tools.files", "conan.tools.scm"]:
        modules[name] = types.ModuleType(name)
    modules["conan"].ConanFile = ConanFile
    modules["conan.errors"].ConanException = ConanException
    modules["conan.errors"].ConanInvalidConfiguration = ConanInvalidConfiguration
    modules["conan.tools.build"].check_min_cppstd = check_min_cppstd
    modules["conan.tools.build"].can_run = lambda conanfile: True
    modules["conan.tools.cmake"].CMake = CMake
    modules["conan.tools.cmake"].CMakeDeps = CMakeDeps
    modules["conan.tools.cmake"].CMakeToolchain = CMakeToolchain
    modules["conan.tools.cmake"].cmake_layout = lambda conanfile, **kw: None
    modules["conan.tools.files"].copy = lambda *a, **kw: None
    modules["conan.tools.files"].rmdir = lambda *a, **kw: None
    modules["conan.tools.files"].get = lambda *a, **kw: None
    sys.modules.update(modules)


def load_recipe(path):
    spec = importlib.util.spec_from_file_location(f"recipe_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recipes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, ConanFile) and v is not ConanFile]
    if len(recipes) != 1:
        raise CheckError(f"{path}: expected one ConanFile subclass, found {len(recipes)}")
    return recipes[0]


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------
def ref_name(ref):
    return ref.split("/", 1)[0]


def cmake_declared_options(src):
    text = open(os.path.join(src, "cmake", "SiaOptions.cmake")).read()
    return set(re.findall(r"option\((SIA_\w+)", text)) | set(re.findall(r"set\((SIA_WITH_\w+)[^)]*CACHE", text))


def cmake_dependencies(src):
    names = set()
    for rel in ["CMakeLists.txt", "cmake/FindSiaCbc.cmake", "cmake/FindSiaGlpk.cmake", "cmake/SiaOptions.cmake"]:
        text = open(os.path.join(src, rel)).read()
        text = re.sub(r"#[^\n]*", "", text)
        names |= set(re.findall(r"find_package\(\s*([A-Za-z0-9_.+-]+)", text))
    return names - CMAKE_IGNORED


def check_static(recipe, src, fail):
    options = dict(recipe.options)
    defaults = dict(recipe.default_options)
    if set(options) != set(defaults):
        fail(f"options {sorted(options)} and default_options {sorted(defaults)} differ")
    for name, value in defaults.items():
        if name in options and value not in options[name]:
            fail(f"default {name}={value} is not one of {options[name]}")
    for name in ["shared", "fPIC", "with_cbc", "with_glpk"]:
        if name not in options:
            fail(f"option {name} missing")
    if defaults.get("with_glpk") is not False:
        fail("with_glpk must default to False (GLPK is GPL-3.0-or-later)")
    if defaults.get("with_cbc") is not True:
        fail("with_cbc must default to True")
    if getattr(recipe, "name", None) != "sia":
        fail("recipe name must be 'sia'")
    project_version = re.search(r"project\(sia VERSION ([0-9.]+)", open(os.path.join(src, "CMakeLists.txt")).read())
    if project_version and getattr(recipe, "version", None) != project_version.group(1):
        fail(f"recipe version {getattr(recipe, 'version', None)} != CMake project version {project_version.group(1)}")
    exported = set(getattr(recipe, "exports_sources", ()))
    for needed in ["CMakeLists.txt", "cmake/*", "include/*", "src/*", "LICENSE"]:
        if needed not in exported:
            fail(f"exports_sources lacks {needed}")


def run_configuration(recipe, src, os_name, values, with_sim, fail):
    """One option combination; returns False when validate() rejects it."""
    settings = types.SimpleNamespace(os=os_name, arch="x86_64", compiler="gcc", build_type="Release")
    options = Options(values)
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "lib"))
        for lib in ["libsia.a"] + (["libsia_sim.a"] if with_sim else []):
            open(os.path.join(folder, "lib", lib), "w").close()
        conanfile = recipe(settings, options, package_folder=folder)
        label = f"[{os_name} {values}{' +sim' if with_sim else ''}]"
        conanfile.config_options()
        if os_name == "Windows" and "fPIC" in options:
            fail(f"{label} fPIC must be removed on Windows")
        conanfile.configure()
        if options.get_safe("shared") and "fPIC" in options:
            fail(f"{label} fPIC must be removed for shared builds")
        boost = options["boost/*"]
        if getattr(boost, "header_only", None) is not True:
            fail(f"{label} configure() must set boost/*:header_only=True")
        conanfile.requirements()
        conanfile.build_requirements()
        if hasattr(conanfile, "layout"):
            conanfile.layout()
        try:
            conanfile.validate()
        except ConanInvalidConfiguration:
            if not (os_name == "Windows" and values["shared"]):
                fail(f"{label} validate() rejected a supported configuration")
            return False
        if os_name == "Windows" and values["shared"]:
            fail(f"{label} validate() must reject shared builds on Windows (no export annotations)")

        host = [ref_name(r) for r, kw in conanfile.recorded["requires"]]
        if len(host) != len(set(host)):
            fail(f"{label} duplicated requirements {host}")
        expected = {"eigen", "boost", "nlohmann_json", "nlopt", "onetbb"}
        if values["with_cbc"]:
            expected.add("coin-cbc")
        if values["with_glpk"]:
            expected.add("glpk")
        if set(host) != expected:
            fail(f"{label} requirements {sorted(host)} != expected {sorted(expected)}")
        for ref, kw in conanfile.recorded["requires"]:
            if not re.fullmatch(r"[a-z0-9_+.-]+/(\[[^\]]+\]|[0-9][0-9A-Za-z.+-]*)", ref):
                fail(f"{label} malformed reference '{ref}'")
            if ref_name(ref) == "eigen" and not kw.get("transitive_headers"):
                fail(f"{label} eigen must be required with transitive_headers=True (public headers include it)")

        tc = CMakeToolchain.last
        CMakeToolchain.last = None
        generated_before = CMakeDeps.generated
        conanfile.generate()
        tc = CMakeToolchain.last
        if tc is None or not tc.generated:
            fail(f"{label} generate() must generate a CMakeToolchain")
        else:
            for option, var in [("with_cbc", "SIA_WITH_CBC"), ("with_glpk", "SIA_WITH_GLPK")]:
                want = "ON" if values[option] else "OFF"
                got = tc.cache_variables.get(var, tc.variables.get(var))
                if got != want:
                    fail(f"{label} {var} must be passed explicitly as {want}, got {got!r}")
            for var in OFF_IN_PACKAGES.values():
                got = tc.cache_variables.get(var, tc.variables.get(var))
                if got != "OFF":
                    fail(f"{label} {var} must be passed explicitly as OFF (not a requirement), got {got!r}")
            declared = cmake_declared_options(src)
            for var in list(tc.cache_variables) + list(tc.variables):
                if var.startswith("SIA_") and var not in declared:
                    fail(f"{label} generate() sets {var}, which cmake/SiaOptions.cmake does not declare")
        if CMakeDeps.generated == generated_before:
            fail(f"{label} generate() must run CMakeDeps")

        conanfile.package_info()
        check_package_info(conanfile, label, values, with_sim, host, fail)
    return True


def check_package_info(conanfile, label, values, with_sim, host, fail):
    info = conanfile.cpp_info
    if info.properties.get("cmake_file_name") != "sia":
        fail(f"{label} cmake_file_name must be 'sia'")
    comps = info.components
    expected = {"core": "sia::core", "sia": "sia::sia"}
    if values["with_cbc"]:
        expected["cbc"] = "sia::cbc"
    if values["with_glpk"]:
        expected["glpk"] = "sia::glpk"
    if with_sim:
        expected["sim"] = "sia::sim"
    if set(comps) != set(expected):
        fail(f"{label} components {sorted(comps)} != expected {sorted(expected)}")
    targets = [c.properties.get("cmake_target_name") for c in comps.values()]
    root_target = info.properties.get("cmake_target_name", "sia::sia")
    if root_target in targets:
        fail(f"{label} the package's global target {root_target} collides with a component target")
    if len(targets) != len(set(targets)):
        fail(f"{label} duplicated component targets {targets}")
    for name, target in expected.items():
        if name in comps and comps[name].properties.get("cmake_target_name") != target:
            fail(f"{label} component {name} must have cmake_target_name {target}")
    if "core" in comps and comps["core"].libs:
        fail(f"{label} core is header-only, it must not list libs")
    if "sia" in comps and comps["sia"].libs != ["sia"]:
        fail(f"{label} component sia must link libsia")
    if "sim" in comps and comps["sim"].libs != ["sia_sim"]:
        fail(f"{label} component sim must link libsia_sim")
    used = set()
    for name, comp in comps.items():
        for req in comp.requires:
            if "::" in req:
                pkg, comp_name = req.split("::", 1)
                if pkg not in host:
                    fail(f"{label} component {name} requires {req}, but '{pkg}' is not a requirement")
                elif comp_name not in CCI_COMPONENTS.get(pkg, set()):
                    fail(f"{label} component {name} requires {req}: '{pkg}' has no component '{comp_name}' in Conan Center")
                used.add(pkg)
            elif req not in comps:
                fail(f"{label} component {name} requires unknown internal component '{req}'")
    for pkg in host:
        if pkg not in used:
            fail(f"{label} requirement '{pkg}' is used by no component (Conan 2 rejects this)")
    # A static libsia links its backends: the compiled component must carry them.
    for pkg, option in OPTIONAL_REQUIREMENT.items():
        if values[option] and "sia" in comps and not any(r.startswith(pkg + "::") for r in comps["sia"].requires):
            fail(f"{label} component sia must require {pkg} (static libsia links it)")
    if "sia" in comps and "core" not in comps["sia"].requires:
        fail(f"{label} component sia must require core")


def configure_exported_sources(recipe, src, scratch, fail):
    """Copies only exports_sources (Conan's fnmatch patterns, where * also matches '/') into
    `scratch` and configures that tree with the cache variables generate() sets for the default
    options: proves the exported sources are enough and that the variables configure the project."""
    import fnmatch
    import shutil
    import subprocess
    patterns = list(getattr(recipe, "exports_sources", ()))
    tree = os.path.join(scratch, "source")
    shutil.rmtree(scratch, ignore_errors=True)
    copied = 0
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in (".git", "build", "__pycache__")]
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), src).replace(os.sep, "/")
            if any(fnmatch.fnmatch(rel, p) for p in patterns):
                os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
                shutil.copy2(os.path.join(src, rel), os.path.join(tree, rel))
                copied += 1
    settings = types.SimpleNamespace(os="Linux", arch="x86_64", compiler="gcc", build_type="Release")
    values = dict(recipe.default_options)
    values["with_glpk"] = True  # configure both backends (both are available on the CI machines)
    conanfile = recipe(settings, Options(values))
    conanfile.config_options()
    conanfile.configure()
    conanfile.generate()
    cache = CMakeToolchain.last.cache_variables
    cmd = ["cmake", "-S", tree, "-B", os.path.join(scratch, "build"), "-DCMAKE_BUILD_TYPE=Release"]
    cmd += [f"-D{k}={v}" for k, v in sorted(cache.items())]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(f"configure of the {copied} exported files: {' '.join(cmd[5:])} -> exit {proc.returncode}")
    if proc.returncode != 0:
        fail("the exported sources do not configure with the recipe's cache variables:\n" + proc.stdout + proc.stderr)


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    scratch = sys.argv[2] if len(sys.argv) > 2 else None
    install_stub()
    errors = []
    fail = errors.append
    recipe = load_recipe(os.path.join(src, "conanfile.py"))
    check_static(recipe, src, fail)

    # Every dependency the CMake build looks for must be a requirement of the recipe.
    for cmake_name in sorted(cmake_dependencies(src)):
        if cmake_name not in CMAKE_TO_CONAN and cmake_name not in OFF_IN_PACKAGES:
            fail(f"the CMake build finds '{cmake_name}', which the recipe check does not know: "
                 "add it to the recipe and to CMAKE_TO_CONAN")

    combos = 0
    for os_name in ["Linux", "Windows"]:
        for shared, fpic, cbc, glpk, sim in itertools.product([False, True], repeat=5):
            values = {"shared": shared, "fPIC": fpic, "with_cbc": cbc, "with_glpk": glpk}
            if run_configuration(recipe, src, os_name, values, sim, fail):
                combos += 1

    test_recipe = load_recipe(os.path.join(src, "test_package", "conanfile.py"))
    settings = types.SimpleNamespace(os="Linux", arch="x86_64", compiler="gcc", build_type="Release")
    test = test_recipe(settings, Options({}))
    test.tested_reference_str = "sia/0.1.0"
    test.requirements()
    if [r for r, kw in test.recorded["requires"]] != ["sia/0.1.0"]:
        fail("test_package must require exactly the tested reference")
    if not os.path.exists(os.path.join(src, "test_package", "CMakeLists.txt")):
        fail("test_package/CMakeLists.txt missing")

    if scratch:
        configure_exported_sources(recipe, src, os.path.abspath(scratch), fail)

    for e in dict.fromkeys(errors):
        print("error:", e)
    print(f"check_conanfile: {combos} accepted configurations checked, {len(set(errors))} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
