# cmake --install: headers, the libraries a project needs to write and generate variants of its own,
# and the CMake package (find_package(attnforge): cmake/attnforgeConfig.cmake.in). The built-in
# kernels, the attnforge command and the tuner stay in the build tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY
          ${PROJECT_SOURCE_DIR}/dsl/include/
          ${PROJECT_SOURCE_DIR}/dsl/interp/include/
          ${PROJECT_SOURCE_DIR}/io/include/
          ${PROJECT_SOURCE_DIR}/codegen/include/
          ${PROJECT_SOURCE_DIR}/runtime/include/
          ${PROJECT_SOURCE_DIR}/catalogue/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(target IN ITEMS attnforge_bind_shapes attnforge_interp attnforge_io attnforge_codegen attnforge_tensor
                         attnforge_tile_permission attnforge_runtime_core attnforge_engine_core)
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(attnforge_warnings PROPERTIES EXPORT_NAME warnings)
set_target_properties(attnforge_codegen_headers PROPERTIES EXPORT_NAME codegen_headers)
install(TARGETS attnforge_dsl attnforge_bind_shapes attnforge_interp attnforge_io attnforge_codegen_headers
                attnforge_codegen attnforge_size_classes attnforge_tensor attnforge_tile_permission attnforge_runtime_core
                attnforge_engine_core attnforge_warnings
        EXPORT attnforgeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/attnforge)
install(EXPORT attnforgeTargets NAMESPACE attnforge:: DESTINATION ${package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnforgeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/attnforgeConfig.cmake INSTALL_DESTINATION ${package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnforgeConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnforgeConfig.cmake ${PROJECT_BINARY_DIR}/attnforgeConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/AttnforgeKernels.cmake ${PROJECT_SOURCE_DIR}/cmake/AttnforgeKernelLibrary.cmake
              ${PROJECT_SOURCE_DIR}/cmake/AttnforgeCatalogue.cmake
        DESTINATION ${package_dir})
install(TARGETS attnforge-catalogue RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/attnforge)
