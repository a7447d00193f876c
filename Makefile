# gpuml: `make demo` runs the demo, `make test` runs the whole suite.
CC ?= cc
CFLAGS ?= -std=c99 -O2 -g -Wall -Wextra -Werror -pedantic
ASAN_FLAGS = -std=c99 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LIBS = -ldl -lpthread -lm
HDR = gpuml.h kernels.cu.inc
TESTS = $(basename $(notdir $(wildcard tests/test_*.c)))

.PHONY: demo test tests kernels gpu clean
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

tests: $(addprefix build/,$(TESTS)) $(addprefix build/asan/,$(TESTS))

test: tests
	tests/run_all.sh

# regenerate the embedded kernel source after editing kernels/
kernels:
	tools/gen_kernels.sh > kernels.cu.inc

# on a GPU machine: build, test, sanitize and benchmark everything
gpu:
	tests/run_gpu.sh

clean:
	rm -rf build
