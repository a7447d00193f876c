#!/bin/sh
# depthwise 3x3 (MobileNetV2 layers, batch 32): gpuml as chosen by shape, the staged kernels
# gpuml_conv_dw3s / gpuml_conv_dw3sc on every layer (GPUML_CONV_DW=staged), the register-tiled
# gpuml_conv_dw3 (GPUML_CONV_DW=reg),
# the older kernels (GPUML_CONV_DW=old: gpuml_conv_dw_fast) and PyTorch/cuDNN on the same GPU in
# one run, each next to the copy bandwidth measured by the same process; paired by
# bench/conv_compare.py, tabled by bench/dw_table.py.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
./build/bench_conv depthwise | tee build/dw_new.log
GPUML_CONV_DW=staged ./build/bench_conv depthwise | tee build/dw_staged.log
GPUML_CONV_DW=reg ./build/bench_conv depthwise | tee build/dw_reg.log
GPUML_CONV_DW=old ./build/bench_conv depthwise | tee build/dw_old.log
python3 bench/conv_torch.py depthwise | tee build/dw_torch.log
echo "== gpuml (new) vs cuDNN"; python3 bench/conv_compare.py build/dw_new.log build/dw_torch.log
echo "== gpuml (reg) vs cuDNN"; python3 bench/conv_compare.py build/dw_reg.log build/dw_torch.log
echo "== gpuml (old) vs cuDNN"; python3 bench/conv_compare.py build/dw_old.log build/dw_torch.log
python3 bench/dw_table.py new=build/dw_new.log staged=build/dw_staged.log reg=build/dw_reg.log old=build/dw_old.log torch=build/dw_torch.log
