# The two commands of the README: `make run` and `make test`. Both install what is missing
# (as root, with apt-get on Debian 12), configure and build.
DEB_PACKAGES := cmake make gcc pkgconf libseccomp-dev libxxhash-dev \
	libcriterion-dev busybox-static clang libclang-rt-14-dev clang-format python3 procps \
	python3-venv python3-pip python3-psutil libpython3.11-testsuite git make nodejs libjson-c-dev \
	docker.io iproute2 debootstrap strace gdb slirp4netns
BUILD := build

.PHONY: all deps build release fuzz-build run test bench format-check clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "missing Debian packages:$$missing (run as root, or: sudo apt-get install$$missing)"; exit 1; \
		fi; \
	fi

build: deps
	cmake --preset debug >/dev/null
	cmake --build $(BUILD) -j$$(nproc)

# The main job on the built-in default: the threat model's attack, on the host and under cbox-run
# (each of its three steps and what stopped it), then a real Python program in a working folder.
run: build
	@tests/integration/demo/run.sh $(BUILD)/cbox-run $(BUILD)/demo

# The release preset (-O2) is built too: its optimiser finds warnings the debug build does not,
# and `make bench` depends on it. So is the fuzz preset (clang, sanitizers, the libFuzzer
# targets): clang warns where gcc does not, and a target that stopped building went unnoticed.
test: build release fuzz-build format-check
	cd $(BUILD) && ctest -j$$(nproc) --output-on-failure

format-check:
	@files=$$(git ls-files '*.c' '*.h' | grep -v '^tests/fuzz/corpus/'); \
	clang-format --dry-run --Werror $$files

release: deps
	cmake --preset release >/dev/null
	cmake --build build-release -j$$(nproc)

fuzz-build: deps
	cmake --preset fuzz >/dev/null
	cmake --build build-fuzz -j$$(nproc)

bench: release
	bench/run.sh

clean:
	rm -rf $(BUILD) build-release build-fuzz
