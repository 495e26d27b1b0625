# Writes OUT (a header defining ZSIM_GIT_REVISION) from `git describe` of SOURCE_DIR, run at every
# build (engine/CMakeLists.txt); configure_file leaves the file untouched when the revision did not
# change, so nothing recompiles then. "unknown" outside a git checkout (a release tarball).
execute_process(
  COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE ZSIM_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR ZSIM_GIT_REVISION STREQUAL "")
  set(ZSIM_GIT_REVISION "unknown")
endif()
file(WRITE "${OUT}.tmp" "#define ZSIM_GIT_REVISION \"${ZSIM_GIT_REVISION}\"\n")
configure_file("${OUT}.tmp" "${OUT}" COPYONLY)
