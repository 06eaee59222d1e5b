# Fuzz target for the "#!" parser (lib/shebang.c), built from its source for instrumentation.
cbox_fuzz_target(fuzz_shebang ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_shebang.c
	${PROJECT_SOURCE_DIR}/lib/shebang.c)
target_include_directories(fuzz_shebang PRIVATE ${PROJECT_SOURCE_DIR}/lib/include)
