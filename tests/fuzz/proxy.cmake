# Fuzz target for cbox-run --allow-net's request and rule parser (runtime-shim/cbox_proxy_parse.c),
# built from its source for instrumentation.
cbox_fuzz_target(fuzz_proxy_request ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_proxy_request.c
	${PROJECT_SOURCE_DIR}/runtime-shim/cbox_proxy_parse.c)
target_include_directories(fuzz_proxy_request PRIVATE ${PROJECT_SOURCE_DIR}/runtime-shim)
