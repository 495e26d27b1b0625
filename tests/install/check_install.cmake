# `cmake --install` into a fresh temporary prefix, then: the installed files are exactly the
# command and its manual page (GNUInstallDirs layout), the command runs from there and names its
# version, and the manual page is the one in docs/. Run by ctest (tests/CMakeLists.txt) with
# BUILD_DIR, SOURCE_DIR and PREFIX set.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
endif()
file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE "${PREFIX}" "${PREFIX}/*")
list(SORT installed)
include(GNUInstallDirs)
set(expected "${CMAKE_INSTALL_BINDIR}/zsim;${CMAKE_INSTALL_MANDIR}/man1/zsim.1")
list(SORT expected)
message(STATUS "installed into ${PREFIX}: ${installed}")
if(NOT installed STREQUAL expected)
  message(FATAL_ERROR "installed files: ${installed}\nexpected: ${expected}")
endif()
execute_process(COMMAND "${PREFIX}/${CMAKE_INSTALL_BINDIR}/zsim" --version
                RESULT_VARIABLE rc OUTPUT_VARIABLE version)
if(NOT rc EQUAL 0 OR NOT version MATCHES "^zsim [0-9]+\\.[0-9]+\\.[0-9]+ \\(git [^)]+\\)\nlibraries: zstd ")
  message(FATAL_ERROR "installed zsim --version (${rc}): ${version}")
endif()
file(SHA256 "${PREFIX}/${CMAKE_INSTALL_MANDIR}/man1/zsim.1" installed_man)
file(SHA256 "${SOURCE_DIR}/docs/zsim.1" source_man)
if(NOT installed_man STREQUAL source_man)
  message(FATAL_ERROR "the installed manual page differs from docs/zsim.1")
endif()
file(REMOVE_RECURSE "${PREFIX}")
