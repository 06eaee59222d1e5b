# The gofer's wire decoders and one server step (see fuzz_gofer_wire.c). With libFuzzer the code
# under test is compiled into the target itself, so that it carries coverage instrumentation
# (the static libraries are built without -fsanitize=fuzzer-no-link).
set(gofer_fuzz_sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_gofer_wire.c)
if(CBOX_FUZZ)
	list(APPEND gofer_fuzz_sources ${PROJECT_SOURCE_DIR}/lib/gofer_wire.c
		${PROJECT_SOURCE_DIR}/lib/gofer_wire_reply.c
		${PROJECT_SOURCE_DIR}/gofer/serve.c ${PROJECT_SOURCE_DIR}/gofer/serve_batch.c
		${PROJECT_SOURCE_DIR}/gofer/session.c)
endif()
cbox_fuzz_target(fuzz_gofer_wire ${gofer_fuzz_sources})
target_link_libraries(fuzz_gofer_wire PRIVATE cbox_gofer cbox_lib)
target_include_directories(fuzz_gofer_wire PRIVATE ${PROJECT_SOURCE_DIR}/gofer)
