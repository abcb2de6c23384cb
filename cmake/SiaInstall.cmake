# Install rules: headers, libraries, and a relocatable siaConfig.cmake with components.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(SIA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sia)
set(_sia_targets sia_core sia)
if(TARGET sia_sim)
  list(APPEND _sia_targets sia_sim)
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
