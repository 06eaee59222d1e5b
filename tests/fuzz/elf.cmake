# Fuzz target for the ELF validator (lib/elf.c), built from its source so that it carries the
# fuzzer's instrumentation.
cbox_fuzz_target(fuzz_elf ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_elf.c ${PROJECT_SOURCE_DIR}/lib/elf.c)
target_include_directories(fuzz_elf PRIVATE ${PROJECT_SOURCE_DIR}/lib/include)
