"""Conan 2 recipe of sia.

    conan create . --build=missing                           # CBC backend (default)
    conan create . --build=missing -o "sia/*:with_glpk=True"  # + GLPK (GPL-3.0-or-later, see README)

Consumers: find_package(sia CONFIG REQUIRED [COMPONENTS core sia cbc glpk]) and link sia::sia (or
sia::core for the header-only part). The recipe was checked offline only (see README "Using sia in
your project"): tests/package/check_conanfile.py runs it against a stubbed `conan` module.
"""
import os

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir

required_conan_version = ">=2.0.9"


class SiaConan(ConanFile):
    name = "sia"
    version = "0.1.0"
    description = "Sia (SOSP 2023) allocation and placement core for GPU cluster schedulers"
    license = "Apache-2.0"
    topics = ("scheduling", "gpu", "cluster", "deep-learning", "milp")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "shared": [True, False],
        "fPIC": [True, False],
        "with_cbc": [True, False],
        # GPL-3.0-or-later: binaries that link the GLPK backend are distributed under the GPL.
        "with_glpk": [True, False],
    }
    default_options = {
        "shared": False,
        "fPIC": True,
        "with_cbc": True,
        "with_glpk": False,
    }
    exports_sources = "CMakeLists.txt", "LICENSE", "cmake/*", "include/*", "src/*"

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")
        # Only Boost.Graph's header-only algorithms are used: don't build ~30 Boost libraries.
        self.options["boost/*"].header_only = True

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # Public: sia's headers include Eigen.
        self.requires("eigen/[>=3.4 <6]", transitive_headers=True)
        # Private to libsia (header-only at build time, or linked into it).
        self.requires("boost/[>=1.78 <2]")
        self.requires("nlohmann_json/[>=3.10 <4]")
        self.requires("nlopt/[>=2.7 <3]")
        self.requires("onetbb/[>=2021 <2023]")  # the native backend's parallel pricing
        if self.options.with_cbc:
            self.requires("coin-cbc/2.10.5")
        if self.options.with_glpk:
            self.requires("glpk/5.0")

    def build_requirements(self):
        self.tool_requires("cmake/[>=3.23 <5]")  # FILE_SET HEADERS

    def validate(self):
        check_min_cppstd(self, 20)
        if self.settings.os == "Windows" and self.options.shared:
            # libsia has no export annotations (no dllexport), so a DLL would export nothing.
            raise ConanInvalidConfiguration(f"{self.ref} cannot be built as a shared library on Windows")

    def generate(self):
        tc = CMakeToolchain(self)
        # Always explicit, never AUTO: the package must not depend on what the build machine has.
        tc.cache_variables["SIA_WITH_CBC"] = "ON" if self.options.with_cbc else "OFF"
        tc.cache_variables["SIA_WITH_GLPK"] = "ON" if self.options.with_glpk else "OFF"
        # qhull (the simulator's optional 3-D interpolation) is not a requirement of this recipe: off, explicitly.
        tc.cache_variables["SIA_WITH_QHULL"] = "OFF"
        tc.cache_variables["SIA_BUILD_TESTS"] = "OFF"
        tc.cache_variables["SIA_BUILD_EXAMPLES"] = "OFF"
        tc.cache_variables["SIA_BUILD_BENCH"] = "OFF"
        tc.cache_variables["SIA_INSTALL"] = "ON"
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        # Conan generates its own CMake config and .pc files from package_info().
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))

    def _has_sim(self):
        """The simulator library is built whenever its sources are part of the release."""
        libdir = os.path.join(self.package_folder, "lib")
        if not os.path.isdir(libdir):
            return False
        return any(f.startswith(("libsia_sim.", "sia_sim.")) for f in os.listdir(libdir))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "sia")
        self.cpp_info.set_property("cmake_target_name", "sia::all")
        self.cpp_info.set_property("pkg_config_name", "sia-all")
        system_libs = ["pthread", "m"] if self.settings.os in ("Linux", "FreeBSD") else []

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "sia::core")
        core.set_property("pkg_config_name", "sia-core")
        core.requires = ["eigen::eigen3"]
        core.libs = []
        core.libdirs = []
        core.bindirs = []

        lib = self.cpp_info.components["sia"]
        lib.set_property("cmake_target_name", "sia::sia")
        lib.set_property("pkg_config_name", "sia")
        lib.libs = ["sia"]
        lib.system_libs = system_libs
        # A static libsia needs its private dependencies at the consumer's link.
        lib.requires = ["core", "boost::headers", "nlohmann_json::nlohmann_json", "nlopt::nlopt", "onetbb::libtbb"]
        if self.options.with_cbc:
            lib.requires.append("coin-cbc::coin-cbc")
        if self.options.with_glpk:
            lib.requires.append("glpk::glpk")

        # Backend components: the same targets siaConfig.cmake defines (sia::cbc, sia::glpk).
        if self.options.with_cbc:
            cbc = self.cpp_info.components["cbc"]
            cbc.set_property("cmake_target_name", "sia::cbc")
            cbc.requires = ["sia", "coin-cbc::coin-cbc"]
            cbc.libdirs = []
            cbc.bindirs = []
        if self.options.with_glpk:
            glpk = self.cpp_info.components["glpk"]
            glpk.set_property("cmake_target_name", "sia::glpk")
            glpk.requires = ["sia", "glpk::glpk"]
            glpk.libdirs = []
            glpk.bindirs = []

        if self._has_sim():
            sim = self.cpp_info.components["sim"]
            sim.set_property("cmake_target_name", "sia::sim")
            sim.set_property("pkg_config_name", "sia-sim")
            sim.libs = ["sia_sim"]
            sim.system_libs = system_libs
            sim.requires = ["sia"]  # the simulator's LPs go through libsia's MILP layer
