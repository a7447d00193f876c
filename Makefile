# gpuml: `make demo` runs the demo, `make examples` builds examples/, `make test` runs the whole suite.
CC ?= cc
CFLAGS ?= -std=c99 -O2 -g -Wall -Wextra -Werror -pedantic
ASAN_FLAGS = -std=c99 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LIBS = -ldl -lpthread -lm
HDR = gpuml.h kernels.cu.inc
TESTS = $(basename $(notdir $(wildcard tests/test_*.c)))
EXAMPLES = $(basename $(notdir $(wildcard examples/*.c)))

.PHONY: demo examples test tests kernels gpu report clean
demo: build/demo
	./build/demo

build/demo: examples/demo.c $(HDR) | build
	$(CC) $(CFLAGS) examples/demo.c -o $@ $(LIBS)

build/test_%: tests/test_%.c tests/harness.h $(HDR) | build
	$(CC) $(CFLAGS) $< -o $@ $(LIBS)

build/asan/test_%: tests/test_%.c tests/harness.h $(HDR) | build
	@mkdir -p build/asan
	$(CC) $(ASAN_FLAGS) $< -o $@ $(LIBS)

build/%: examples/%.c $(HDR) | build
	$(CC) $(CFLAGS) $< -o $@ $(LIBS)

build:
	mkdir -p build

# every program in examples/ (tests/test_examples.sh runs them)
examples: $(addprefix build/,$(EXAMPLES))

tests: $(addprefix build/,$(TESTS)) $(addprefix build/asan/,$(TESTS)) examples

# builds side by side (one job a CPU), then tests/run_all.sh runs the suites side by side
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
test:
	$(MAKE) -j$(NPROC) tests
	tests/run_all.sh

# regenerate the embedded kernel source after editing kernels/
kernels:
	tools/gen_kernels.sh > kernels.cu.inc

# on a GPU machine: build, test, sanitize and benchmark everything
gpu:
	tests/run_gpu.sh

# on a GPU machine with PyTorch: gpuml next to PyTorch, BENCHMARKS.md and docs/benchmarks.png
report:
	bench/report.sh

clean:
	rm -rf build
