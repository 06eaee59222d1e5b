# Fuzz target for the `cbox exec` request of a sentry sandbox (lib/exec_req.c).
cbox_fuzz_target(fuzz_exec_req ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_exec_req.c
	${PROJECT_SOURCE_DIR}/lib/exec_req.c)
target_include_directories(fuzz_exec_req PRIVATE ${PROJECT_SOURCE_DIR}/lib/include)
