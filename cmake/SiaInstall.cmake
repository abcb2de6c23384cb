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

# The programs, when built (SIA_BUILD_EXAMPLES): sia_allocate is the interface of schedulers written in other
# languages. A shared libsia is found relative to them, so the installed tree stays relocatable.
set(_sia_programs "")
foreach(_sia_p sia_allocate sia_simulate sia_fit_profiles)
  if(TARGET ${_sia_p})
    list(APPEND _sia_programs ${_sia_p})
    if(NOT CMAKE_INSTALL_RPATH AND NOT WIN32)
      file(RELATIVE_PATH _sia_rel "/sia-root/${CMAKE_INSTALL_BINDIR}" "/sia-root/${CMAKE_INSTALL_LIBDIR}")
      if(APPLE)
        set_target_properties(${_sia_p} PROPERTIES INSTALL_RPATH "@loader_path/${_sia_rel}")
      else()
        set_target_properties(${_sia_p} PROPERTIES INSTALL_RPATH "$ORIGIN/${_sia_rel}")
      endif()
    endif()
  endif()
endforeach()
if(_sia_programs)
  install(TARGETS ${_sia_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The licence, and the documents the installed headers cite (share/doc/sia).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
# sia_allocate's request and decision reference, with its example requests.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/requests/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/requests)

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

# Private dependencies. A static libsia always needs them at the consumer's link step, so they go into
# `Libs` / `Requires` and the line for shared linking (`pkg-config --libs sia`) works on either install; a
# shared libsia keeps them private (`--static` only). CBC and GLPK are listed by their link flags, never
# by `Requires[.private]`: pkg-config adds the Cflags of every required module (private ones too) to
# `--cflags sia`, which would leak CBC's include directory into consumers' compile flags.
set(_sia_libs "")
if(SIA_HAS_CBC)
  if(SIA_PC_CBC_FOUND AND SIA_PC_CBC_LDFLAGS)
    list(APPEND _sia_libs ${SIA_PC_CBC_LDFLAGS})
  else()
    list(APPEND _sia_libs -lCbcSolver -lCbc -lCgl -lOsiClp -lClpSolver -lClp -lOsi -lCoinUtils)
  endif()
endif()
if(SIA_HAS_GLPK)
  if(SIA_PC_GLPK_FOUND AND SIA_PC_GLPK_LDFLAGS)
    list(APPEND _sia_libs ${SIA_PC_GLPK_LDFLAGS})
  else()
    list(APPEND _sia_libs -lglpk)
  endif()
endif()
if(CMAKE_THREAD_LIBS_INIT)
  list(APPEND _sia_libs ${CMAKE_THREAD_LIBS_INIT})
endif()
list(REMOVE_DUPLICATES _sia_libs)
list(JOIN _sia_libs " " _sia_libs)
if(SIA_SHARED)
  set(SIA_PC_REQUIRES "eigen3")
  set(SIA_PC_REQUIRES_PRIVATE "nlopt tbb")
  set(SIA_PC_LIBS "")
  set(SIA_PC_LIBS_PRIVATE "${_sia_libs}")
else()
  set(SIA_PC_REQUIRES "eigen3 nlopt tbb")
  set(SIA_PC_REQUIRES_PRIVATE "")
  set(SIA_PC_LIBS " ${_sia_libs}")
  set(SIA_PC_LIBS_PRIVATE "")
endif()
configure_file(cmake/sia.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/sia.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/sia.pc DESTINATION ${SIA_INSTALL_PKGCONFIGDIR})

if(SIA_HAS_SIM)
  # The simulator links libsia (its LPs go through libsia's MILP layer) and, when built with it, qhull_r.
  set(_sia_sim_libs_private "")
  set(_sia_sim_libs "")
  if(SIA_HAS_QHULL AND SIA_SHARED)
    set(_sia_sim_libs_private "-lqhull_r")
  elseif(SIA_HAS_QHULL)
    set(_sia_sim_libs " -lqhull_r")  # a static libsia_sim always needs it
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
    "Libs: -L\${libdir} -lsia_sim${_sia_sim_libs}"
    "Libs.private: ${_sia_sim_libs_private}"
    "")
  file(WRITE ${PROJECT_BINARY_DIR}/pkgconfig/sia-sim.pc "${_sia_sim_pc}")
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/sia-sim.pc DESTINATION ${SIA_INSTALL_PKGCONFIGDIR})
endif()
