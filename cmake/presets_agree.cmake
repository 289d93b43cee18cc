# Fails the configure when CMakePresets.json asks for a newer CMake than cmake_minimum_required
# promises: its schema version needs a CMake release (schema 5: 3.24, 6: 3.25), and its
# cmakeMinimumRequired must say the same as the top-level CMakeLists.txt, so a machine with the
# documented minimum can use `cmake --preset` (and bench/run_gpu.sh's plain-cmake fallback covers
# the rest).
file(READ "${PROJECT_SOURCE_DIR}/CMakePresets.json" _presets)
string(JSON _presets_schema GET "${_presets}" version)
string(JSON _presets_major GET "${_presets}" cmakeMinimumRequired major)
string(JSON _presets_minor GET "${_presets}" cmakeMinimumRequired minor)
# The CMake release that first reads each schema version (cmake-presets(7)).
set(_presets_schema_cmake 3.19 3.20 3.21 3.23 3.24 3.25 3.27 3.28 3.30 3.31)
list(LENGTH _presets_schema_cmake _known)
if(_presets_schema LESS 1 OR _presets_schema GREATER _known)
    message(FATAL_ERROR "CMakePresets.json: unknown schema version ${_presets_schema}")
endif()
math(EXPR _index "${_presets_schema} - 1")
list(GET _presets_schema_cmake ${_index} _schema_needs)
if(NOT "${_presets_major}.${_presets_minor}" VERSION_EQUAL CMAKE_MINIMUM_REQUIRED_VERSION OR
   _schema_needs VERSION_GREATER CMAKE_MINIMUM_REQUIRED_VERSION)
    message(FATAL_ERROR "CMakePresets.json (schema ${_presets_schema}, needs CMake "
                        "${_schema_needs}; cmakeMinimumRequired ${_presets_major}.${_presets_minor}) "
                        "disagrees with cmake_minimum_required(${CMAKE_MINIMUM_REQUIRED_VERSION})")
endif()
