# Overlay port of sia, building the checkout this port lives in:
#   vcpkg install "sia[cbc,glpk]" --overlay-ports=<sia checkout>/ports
# (For a published release, replace SOURCE_PATH by vcpkg_from_github(OUT_SOURCE_PATH SOURCE_PATH ...).)
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT EXISTS "${SOURCE_PATH}/CMakeLists.txt" OR NOT EXISTS "${SOURCE_PATH}/include/sia/round.hpp")
  message(FATAL_ERROR "sia overlay port: expected the sia sources at ${SOURCE_PATH}")
endif()

# libsia has no dllexport annotations: a DLL would export nothing.
if(VCPKG_TARGET_IS_WINDOWS)
  vcpkg_check_linkage(ONLY_STATIC_LIBRARY)
endif()

# Features map one-to-one onto the backend options, always passed as explicit ON/OFF.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    cbc  SIA_WITH_CBC
    glpk SIA_WITH_GLPK
)

# The backends are found through pkg-config (vcpkg's coin-or-cbc and glpk ship .pc files only).
set(PKGCONFIG_OPTIONS "")
if("cbc" IN_LIST FEATURES OR "glpk" IN_LIST FEATURES)
  vcpkg_find_acquire_program(PKGCONFIG)
  set(PKGCONFIG_OPTIONS "-DPKG_CONFIG_EXECUTABLE=${PKGCONFIG}")
endif()

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    ${PKGCONFIG_OPTIONS}
    -DSIA_WITH_QHULL=OFF  # the simulator's optional 3-D interpolation: not a dependency of the port
    -DSIA_BUILD_TESTS=OFF
    -DSIA_BUILD_EXAMPLES=OFF
    -DSIA_BUILD_BENCH=OFF
    -DSIA_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME sia CONFIG_PATH lib/cmake/sia)
vcpkg_fixup_pkgconfig()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
