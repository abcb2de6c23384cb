# Install rules: headers, libraries, a relocatable siaConfig.cmake with components (core, sia,
# sim, cbc, glpk), the Find modules it needs to re-create private dependencies, and pkg-config files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(SIA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sia)
set(SIA_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(_sia_targets sia_core sia)
set(SIA_HAS_SIM 0)
if(TARGET sia_sim)
  list(APPEND _sia_targets sia_sim)
  set(SIA_HAS_SIM 1)
endif()
# Baked into siaConfig.cmake: a static libsia exports its private dependencies as $<LINK_ONLY:...>,
# so the config has to find them again in the consumer; a shared one does not.
get_target_property(_sia_type sia TYPE)
if(_sia_type STREQUAL "SHARED_LIBRARY")
  set(SIA_SHARED 1)
else()
  set(SIA_SHARED 0)
endif()

# A shared libsia_sim needs libsia from its own directory: the consumer's RUNPATH does not apply to
# the dependencies of its dependencies (and --as-needed drops libsia from a program that only calls
# the simulator). Relative, so the install stays relocatable; a user's CMAKE_INSTALL_RPATH wins.
if(SIA_HAS_SIM AND NOT CMAKE_INSTALL_RPATH AND NOT WIN32)
  if(APPLE)
    set_target_properties(sia_sim PROPERTIES INSTALL_RPATH "@loader_path")
  else()
    set_target_properties(sia_sim PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
endif()

install(TARGETS ${_sia_targets} EXPORT siaTargets FILE_SET HEADERS
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT siaTargets NAMESPACE sia:: DESTINATION ${SIA_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/siaConfig.cmake.in ${PROJECT_BINARY_DIR}/siaConfig.cmake
                              INSTALL_DESTINATION ${SIA_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/siaConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/siaConfig.cmake ${PROJECT_BINARY_DIR}/siaConfigVersion.cmake
              cmake/FindSiaCbc.cmake cmake/FindSiaGlpk.cmake
        DESTINATION ${SIA_INSTALL_CMAKEDIR})

# ---------------------------------------------------------------------------------------------
# pkg-config: sia.pc (libsia) and, when built, sia-sim.pc (libsia_sim).
# ---------------------------------------------------------------------------------------------
# Paths relative to ${pcfiledir}, so the installed tree can be moved (and `cmake --install
# --prefix` elsewhere than CMAKE_INSTALL_PREFIX works).
function(_sia_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${SIA_INSTALL_PKGCONFIGDIR}")
  set(SIA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _sia_pc_up "/sia-root/${SIA_INSTALL_PKGCONFIGDIR}" "/sia-root")
  string(REGEX REPLACE "/$" "" _sia_pc_up "${_sia_pc_up}")
  set(SIA_PC_PREFIX "\${pcfiledir}/${_sia_pc_up}")
endif()
_sia_pc_path(SIA_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
_sia_pc_path(SIA_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")

# Private dependencies, needed only by `pkg-config --static`. CBC comes with .pc files
# (Debian, vcpkg); GLPK only sometimes (vcpkg writes glpk.pc, Debian ships none: plain -lglpk).
set(_sia_req_private nlopt tbb)
set(_sia_libs_private "")
if(SIA_HAS_CBC)
  list(APPEND _sia_req_private cbc osi-clp)
endif()
if(SIA_HAS_GLPK)
  if(SIA_PC_GLPK_FOUND)
    list(APPEND _sia_req_private glpk)
  else()
    list(APPEND _sia_libs_private -lglpk)
  endif()
endif()
if(CMAKE_THREAD_LIBS_INIT)
  list(APPEND _sia_libs_private ${CMAKE_THREAD_LIBS_INIT})
endif()
list(JOIN _sia_req_private " " SIA_PC_REQUIRES_PRIVATE)
list(JOIN _sia_libs_private " " SIA_PC_LIBS_PRIVATE)
configure_file(cmake/sia.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/sia.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/sia.pc DESTINATION ${SIA_INSTALL_PKGCONFIGDIR})

if(SIA_HAS_SIM)
  # The simulator links libsia (its LPs go through libsia's MILP layer) and, when built with it, qhull_r.
  set(_sia_sim_libs_private "")
  if(SIA_HAS_QHULL)
    set(_sia_sim_libs_private "-lqhull_r")
  endif()
  string(JOIN "\n" _sia_sim_pc
    "prefix=${SIA_PC_PREFIX}"
    "libdir=${SIA_PC_LIBDIR}"
    "includedir=${SIA_PC_INCLUDEDIR}"
    ""
    "Name: sia-sim"
    "Description: sia trace-driven simulator (profiles, workloads, policies, metrics)"
    "Version: ${PROJECT_VERSION}"
    "Requires: sia = ${PROJECT_VERSION}"
    "Cflags: -I\${includedir}"
    "Libs: -L\${libdir} -lsia_sim"
    "Libs.private: ${_sia_sim_libs_private}"
    "")
  file(WRITE ${PROJECT_BINARY_DIR}/pkgconfig/sia-sim.pc "${_sia_sim_pc}")
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/sia-sim.pc DESTINATION ${SIA_INSTALL_PKGCONFIGDIR})
endif()
