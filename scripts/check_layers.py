#!/usr/bin/env python3
"""Layering check: fails when a file includes a header of a layer above its own, a header of a
sibling building block, or a private header (src/...) of another target. Run by ctest (`layering`)
and therefore by CI; `python3 scripts/check_layers.py [repo]` prints every violation.

Layers, low to high (docs/architecture.md, "The dependency rule"):
  0 concepts     include/sia/concepts/*, job_kind.hpp        standard library only
  1 vocabulary   the headers of sia::core (CMakeLists.txt)   header-only, no libsia
  2 configurations  configuration_set.hpp, valid_configs.hpp, src/core/configuration_set.cpp
  3 blocks       MILP layer, goodput estimator, placement: three siblings that may not include
                 each other
  4 round        round.hpp, generic_round.hpp, lost_allocations.hpp, round_state.hpp, round_log.hpp, version.hpp, memory.hpp,
                 the rest of src/core
  5 io           request.hpp, json_reader.hpp, round_state_json.hpp, src/io (JSON in and out; translates only)
  6 umbrella     sia.hpp
  7 sim          include/sia/sim/*, src/sim
  8 programs     examples/, bench/, tests/, python/src (the pybind11 extension: a consumer like the examples)
A file may include sia headers of its own layer or below. Private headers ("dir/file.hpp" under
src/) belong to a target: src/sim to sia_sim, src/{core,goodput,io,milp,placement} to sia; a file
may include only its own target's private headers. Tests may include the white-box hooks listed in
TEST_HOOKS, the Python binding those in PYTHON_HOOKS (each must still be used), and nothing else private.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)

# Private headers the tests may reach into, and why.
TEST_HOOKS = {
    "io/model_json.hpp": "the `model` JSON form is tested without a whole request",
    "io/json_position.hpp": "positions of many errors in one long array, without a request",
    "io/json_util.hpp": "the JSON size limits, checked with small values",
    "milp/glpk/glpk_testing.hpp": "provokes GLPK's error hook",
    "sim/pollux_genetic.hpp": "Pollux's NSGA-II operators are tested one by one",
    # The native backend's engine, piece by piece against exhaustive search and the explicit LP.
    "milp/native/branch.hpp": "native engine: branch and bound over counts",
    "milp/native/classes.hpp": "native engine: symmetry classes",
    "milp/native/core_dp.hpp": "native engine: core DP and modular bound",
    "milp/native/dense_lp.hpp": "native engine: dense simplex and its duals",
    "milp/native/heuristic.hpp": "native engine: primal heuristic",
    "milp/native/problem.hpp": "native engine: the knapsack form",
    "milp/native/relaxation.hpp": "native engine: price-space LP",
    "milp/native/search.hpp": "native engine: the whole search",
    "milp/rounding.hpp": "integrality checks without libm, against std::round",
    # Incremental rounds: the problem built from the previous round's rows against the one built anew.
    "core/problem.hpp": "incremental rounds: the round's problem, compared bit for bit with and without the cache",
    "core/round_cache.hpp": "incremental rounds: the previous round's rows (WarmStart::cache)",
    "core/formulation.hpp": "the round's answer check (answer_feasible) against MilpModel::is_feasible",
    "core/id_index.hpp": "the round's index of job ids, against std::unordered_map",
    "core/input_checks.hpp": "the current configuration's index by arithmetic, against sia::current_configuration",
    "core/warm_start.hpp": "incremental rounds: the warm start applied by position against the one looked up by id",
    "milp/reading_solver.hpp": "the native backend's own answer check left to the round, and only during its calls",
    "milp/model_layout.hpp": "the round's layout of its model, against the native backend's reading of every entry",
    "goodput/fit_objective.hpp": "the fit's objective as NLopt evaluates it, compared bit for bit with fit_objective",
    "bench/round_instances.hpp": "the solver bench's instance families, solved by every backend in the tests",
    "placement/min_cost_flow.hpp": "the Placer's direct flow for uncongested networks, against Boost's search",
    "placement/place_held.hpp": "the Placer with current allocations by pointer, against place() with copies",
    "placement/capacity_model.hpp": "the Placer's capacity model: kept jobs applied at once against one by one",
    # Tie rule 5's search started from every optimal allocation of small rounds (test_ties_weighted.cpp).
    "core/problem.hpp": "the round's problem, to hand the tie search allocations of its own",
    "core/ties.hpp": "the tie search alone: the same canonical decision from every optimum",
}

# Private headers the Python binding (python/src, target sia_python) may include, and why. Keep this short: a
# binding needing more of the library's insides is a sign the library lacks a public API for it.
PYTHON_HOOKS = {
    "io/model_json.hpp": "sia.Job(model=...) takes sia_allocate's `model` JSON form: the same parser and the same "
                         "error messages as the program's, for which the library has no public entry point",
}

CONFIGURATIONS = [r"include/sia/configuration_set\.hpp", r"include/sia/valid_configs\.hpp",
                  r"src/core/configuration_set\.cpp"]
BLOCKS = {  # rank-3 siblings: group -> path patterns
    "milp": [r"include/sia/milp/", r"src/milp/"],
    "goodput": [r"include/sia/goodput/", r"src/goodput/"],
    "placement": [r"include/sia/placement\.hpp", r"src/placement/"],
}
ROUND = [r"include/sia/round\.hpp", r"include/sia/generic_round\.hpp", r"include/sia/lost_allocations\.hpp",
         r"include/sia/round_state\.hpp", r"include/sia/warm_start\.hpp", r"include/sia/round_log\.hpp",
         r"include/sia/version\.hpp", r"include/sia/memory\.hpp",
         r"src/core/"]
IO = [r"include/sia/request\.hpp", r"include/sia/json_reader\.hpp", r"include/sia/round_state_json\.hpp", r"src/io/"]
SIA_PRIVATE_DIRS = ("core", "goodput", "io", "milp", "placement")
NAMES = ["concepts", "vocabulary", "configurations", "blocks", "round", "io", "umbrella", "sim", "programs"]


def core_headers():
    """The FILE_SET of sia_core in CMakeLists.txt: the header-only vocabulary."""
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"target_sources\(sia_core INTERFACE FILE_SET HEADERS(.*?)\)", text, re.S)
    if not m:
        sys.exit("check_layers: no sia_core FILE_SET in CMakeLists.txt")
    return {f for f in re.findall(r"include/sia/[\w/]+\.hpp", m.group(1))}


CORE = core_headers()


def matches(path, patterns):
    return any(re.match(p, path) for p in patterns)


def layer(path):
    """(rank, block group or None) of a repository path."""
    if path.startswith("include/sia/concepts/") or path == "include/sia/job_kind.hpp":
        return 0, None  # job_kind.hpp: the enum the Job concept names, standard library only
    if path in CORE or path == "include/sia/build_config.hpp":
        return 1, None
    if matches(path, CONFIGURATIONS):
        return 2, None
    for group, patterns in BLOCKS.items():
        if matches(path, patterns):
            return 3, group
    if matches(path, ROUND):
        return 4, None
    if matches(path, IO):
        return 5, None
    if path == "include/sia/sia.hpp":
        return 6, None
    if path.startswith(("include/sia/sim/", "src/sim/")):
        return 7, None
    if path.startswith(("examples/", "bench/", "tests/", "python/src/")):
        return 8, None
    if path.startswith("include/sia/"):
        return 3, "unlisted"  # a new public header: classify it above
    return None


def target(path):
    if path.startswith("src/sim/"):
        return "sia_sim"
    if path.startswith("src/") and path.split("/")[1] in SIA_PRIVATE_DIRS:
        return "sia"
    if path.startswith("tests/"):
        return "tests"
    if path.startswith("bench/"):
        return "bench"
    if path.startswith("python/src/"):
        return "python"
    return "programs"


def main():
    violations = []
    files = [p for d in ("include", "src", "examples", "bench", "tests", "python/src") for p in (ROOT / d).rglob("*")
             if p.suffix in (".hpp", ".cpp", ".h") and p.is_file()]
    python_hooks_used = set()
    for f in sorted(files):
        rel = f.relative_to(ROOT).as_posix()
        own = layer(rel)
        if own is None:
            continue
        rank, group = own
        if group == "unlisted":
            violations.append(f"{rel}: public header in no layer (add it to scripts/check_layers.py)")
        for lineno, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            inc = m.group(2)
            where = f"{rel}:{lineno}: includes {inc}"
            if m.group(1) == "<":
                if not inc.startswith("sia/"):
                    if rank == 0 and ("/" in inc or "." in inc):  # concepts: standard headers only
                        violations.append(f"{where}: a concept header depends on the standard library only")
                    continue
                dep = layer("include/" + inc)
                if dep is None:
                    continue
                if dep[0] > rank:
                    violations.append(f"{where}: layer {NAMES[dep[0]]} is above {NAMES[rank]}")
                elif rank == 3 and dep[0] == 3 and dep[1] != group:
                    violations.append(f"{where}: building blocks {group} and {dep[1]} may not include each other")
                continue
            # Private header: find it beside the file, under src/ or under tests/.
            candidates = [f.parent / inc, ROOT / "src" / inc, ROOT / "tests" / inc, ROOT / "bench" / inc]
            found = next((c for c in candidates if c.exists()), None)
            if found is None:
                continue  # generated files (build tree)
            dep_path = found.resolve().relative_to(ROOT.resolve()).as_posix()
            dep = layer(dep_path)
            if dep is not None and dep[0] > rank:
                violations.append(f"{where}: layer {NAMES[dep[0]]} is above {NAMES[rank]}")
            elif dep is not None and rank == 3 and dep[0] == 3 and dep[1] != group:
                violations.append(f"{where}: building blocks {group} and {dep[1]} may not include each other")
            dep_target = target(dep_path)
            own_target = target(rel)
            if dep_target == own_target:
                continue
            if own_target == "tests" and dep_path.removeprefix("src/") in TEST_HOOKS:
                continue
            if own_target == "python" and dep_path.removeprefix("src/") in PYTHON_HOOKS:
                python_hooks_used.add(dep_path.removeprefix("src/"))
                continue
            violations.append(f"{where}: a private header of target {dep_target} (from {own_target})")
    if (ROOT / "python/src").is_dir():
        for hook in sorted(set(PYTHON_HOOKS) - python_hooks_used):
            violations.append(f"scripts/check_layers.py: PYTHON_HOOKS lists {hook}, which python/src no longer "
                              "includes: remove the allowance")
    for v in violations:
        print(v)
    print(f"check_layers: {len(files)} files, {len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
